//! A global allocator that counts, per thread, the bytes live now, the peak since the last
//! reset, and the bytes and calls allocated in total — so a hostile-input test can check that
//! reading allocates no more than the file justifies, and that work grows linearly with it.
//! Per thread, so that tests running in parallel do not see each other's allocations.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts and forwards to the system allocator.
pub struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
    static CALLS: Cell<usize> = const { Cell::new(0) };
}

fn grew(n: usize) {
    // `try_with` because the thread-locals may be gone while a thread shuts down.
    let _ = LIVE.try_with(|l| {
        l.set(l.get() + n);
        let _ = PEAK.try_with(|p| p.set(p.get().max(l.get())));
    });
    let _ = TOTAL.try_with(|t| t.set(t.get() + n));
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
}

fn shrank(n: usize) {
    let _ = LIVE.try_with(|l| l.set(l.get().saturating_sub(n)));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        shrank(layout.size());
        grew(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// What one measured call allocated on this thread.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// Most bytes live at once during the call, above what was live before it.
    pub peak: usize,
    /// Bytes allocated in total (a growing buffer counts each size it had).
    pub total: usize,
    /// Allocation calls.
    pub calls: usize,
}

/// Runs `f` and reports what it allocated on this thread.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Usage) {
    let live = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(live));
    let total = TOTAL.with(Cell::get);
    let calls = CALLS.with(Cell::get);
    let out = f();
    let usage = Usage {
        peak: PEAK.with(Cell::get) - live,
        total: TOTAL.with(Cell::get) - total,
        calls: CALLS.with(Cell::get) - calls,
    };
    (out, usage)
}
