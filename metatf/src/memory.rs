//! Large tables in transparent huge pages, where the system has them: one place for the
//! advice, which the context mixers here and hatf's models and text buffers share.
//!
//! A table filled or probed all over takes a page fault for every 4 KiB page: a context
//! mixer's ten tables of 2^21 slots (84 MB) are over 20,000 faults, a large share of a short
//! decode's time. Advised to use transparent huge pages (in `madvise` mode, a
//! common default), the same memory takes one fault per 2 MiB. The advice changes no value in
//! memory; where the kernel has no huge pages, or on other systems, nothing changes but the
//! speed.

/// Size and alignment of a transparent huge page on x86-64 and most other Linux systems.
pub const HUGE_PAGE: usize = 2 << 20;

/// Advises the whole huge pages inside the `len` bytes from `start` (best not yet touched)
/// to be backed by huge pages. The range should belong to one allocation of the caller's;
/// nothing in it is read or written, so any range is safe to pass.
#[cfg(target_os = "linux")]
pub fn advise_huge_pages(start: *const u8, len: usize) {
    let first = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize).saturating_add(len) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: madvise reads and writes no memory; MADV_HUGEPAGE changes only how the
        // kernel backs the pages of this process's mappings in the range, never their
        // contents, and an error (no transparent huge pages, a range not mapped) leaves
        // memory as it was.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

/// No advice outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn advise_huge_pages(_start: *const u8, _len: usize) {}

/// A table of `len` copies of `value`, advised to live in huge pages before it is filled.
pub fn filled_table(len: usize, value: u32) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::with_capacity(len);
    advise_huge_pages(v.as_ptr().cast(), len * std::mem::size_of::<u32>());
    v.resize(len, value);
    v
}
