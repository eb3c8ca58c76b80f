//! Large tables that the model fills at random places ask the kernel for huge pages.
//!
//! The encoder's live-block map grows to tens of megabytes on a trace with a few hundred
//! thousand live blocks, and every 4 KiB page of each new table was a page fault: half the
//! faults of a 71 MB `mtrace` encode, on the thread that is the encode's critical path. With
//! transparent huge pages in `madvise` mode (a common default), a 2 MiB page costs one fault
//! where 512 small ones cost 512. The advice is a hint: where the kernel has no huge pages, or
//! on other systems, nothing changes but the speed.

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
        for len in [0, 1, 1000, 3 * HUGE_PAGE / 16 + 5] {
            let v = filled_vec(len, (7u64, usize::MAX));
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == (7, usize::MAX)));
        }
    }
}
