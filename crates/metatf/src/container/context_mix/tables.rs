//! The context mixers' large tables, in huge pages where the system has them.
//!
//! A predictor's tables are filled with their starting value when it is made and then probed
//! all over: for a wee_alloc log of 528 KB, ten tables of 2^21 slots (84 MB) were 23,800 page
//! faults of 4 KiB, about 40 % of the decode's 126 ms. Advised to use transparent huge pages
//! (in `madvise` mode, a common default), the same memory takes one fault per 2 MiB. The
//! advice changes no value in the tables, so the coded bytes are the same.

/// Size and alignment of a transparent huge page on x86-64 and most other Linux systems.
const HUGE_PAGE: usize = 2 << 20;

/// A table of `len` copies of `value`, asked to live in huge pages when it spans at least
/// one.
pub(super) fn table(len: usize, value: u32) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::with_capacity(len);
    advise_huge_pages(v.as_mut_ptr().cast(), len * std::mem::size_of::<u32>());
    v.resize(len, value);
    v
}

/// Advises the whole huge pages inside the `bytes` bytes from `start` (not yet touched).
#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *mut u8, bytes: usize) {
    let at = start as usize;
    let first = at.next_multiple_of(HUGE_PAGE);
    let end = (at + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: [first, end) lies inside the allocation that starts at `start` and holds
        // `bytes` bytes; MADV_HUGEPAGE only changes how the kernel backs those pages, never
        // their contents, and an error leaves them as they were.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

/// No advice outside Linux.
#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *mut u8, _bytes: usize) {}
