//! Large tables that the model fills at random places ask the kernel for huge pages.
//!
//! The encoder's live-block map grows to megabytes on a trace with a few hundred thousand
//! live blocks, and every 4 KiB page of each new table was a page fault: half the faults of a
//! 71 MB `mtrace` encode, on the encode's address thread. With transparent huge pages in
//! `madvise` mode (a common default), a 2 MiB page costs one fault where 512 small ones cost
//! 512, and the table's random probes miss the TLB less. The advice is a hint: where the
//! kernel has no huge pages, or on other systems, nothing changes but the speed.

/// Tables smaller than this keep small pages: a huge page would mostly hold nothing.
pub const HUGE_PAGE: usize = 2 << 20;

/// A vector of `len` copies of `value`, its memory advised to use huge pages first when it
/// spans at least one whole huge page.
pub fn filled_vec<T: Copy>(len: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(len);
    advise(v.as_mut_ptr().cast(), len * std::mem::size_of::<T>());
    v.resize(len, value);
    v
}

/// A vector of `len` zeros from zeroed memory (no fill pass here: a large one is fresh pages
/// from the kernel), advised to use huge pages like [`filled_vec`]'s and, when it spans a
/// huge page, faulted in writable at once. A table's first touches are reads of empty
/// slots, and each page then cost two faults (the shared zero page, then a copy at the
/// first write).
pub fn zeroed_vec(len: usize) -> Vec<u64> {
    let mut v = vec![0u64; len];
    let bytes = len * std::mem::size_of::<u64>();
    advise(v.as_mut_ptr().cast(), bytes);
    if bytes >= HUGE_PAGE {
        populate(v.as_mut_ptr().cast(), bytes);
    }
    v
}

/// Faults in the pages of `len` bytes from `start` writable (their contents unchanged).
#[cfg(target_os = "linux")]
fn populate(start: *mut u8, len: usize) {
    // Whole pages only: the first and last may be shared with other data, and populating
    // them would change nothing but is not ours to ask.
    const PAGE: usize = 4096;
    let first = (start as usize).next_multiple_of(PAGE);
    let end = (start as usize).saturating_add(len) / PAGE * PAGE;
    if end > first {
        // SAFETY: the range lies inside one allocation this process owns (a vector's buffer);
        // MADV_POPULATE_WRITE only makes its pages present and writable, as a write of their
        // own contents would, and an error (a kernel before 5.14) leaves the memory as it
        // was.
        unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                end - first,
                libc::MADV_POPULATE_WRITE,
            );
        }
    }
}

/// Nothing to do outside Linux.
#[cfg(not(target_os = "linux"))]
fn populate(_start: *mut u8, _len: usize) {}

/// Advises the whole huge pages inside `len` bytes from `start` (nothing is read or written).
#[cfg(target_os = "linux")]
fn advise(start: *mut u8, len: usize) {
    let first = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize).saturating_add(len) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: the range lies inside one allocation this process owns (a vector's capacity);
        // MADV_HUGEPAGE changes only how the kernel backs its pages, never their contents, and
        // an error (no transparent huge pages) leaves the memory as it was.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

/// No advice outside Linux.
#[cfg(not(target_os = "linux"))]
fn advise(_start: *mut u8, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_vector_holds_the_value_everywhere_whatever_its_size() {
        for len in [0, 1, 1000, HUGE_PAGE / 8, 3 * HUGE_PAGE / 16 + 5] {
            let v = filled_vec(len, (7u64, usize::MAX));
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == (7, usize::MAX)));
            let z = zeroed_vec(len);
            assert_eq!(z.len(), len);
            assert!(z.iter().all(|&x| x == 0));
        }
    }
}
