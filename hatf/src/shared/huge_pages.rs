//! Large tables that the model fills at random places ask the kernel for huge pages.
//!
//! The encoder's live-block map grows to megabytes on a trace with a few hundred thousand
//! live blocks, and every 4 KiB page of each new table was a page fault: half the faults of a
//! 71 MB `mtrace` encode, on the encode's address thread. With transparent huge pages in
//! `madvise` mode (a common default), a 2 MiB page costs one fault where 512 small ones cost
//! 512, and the table's random probes miss the TLB less. The advice is a hint: where the
//! kernel has no huge pages, or on other systems, nothing changes but the speed.

use metatf::memory::advise_huge_pages;
/// Tables smaller than a huge page keep small pages: a huge page would mostly hold nothing.
pub use metatf::memory::HUGE_PAGE;

/// A vector of `len` copies of `value`, its memory advised to use huge pages first when it
/// spans at least one whole huge page.
///
/// A one-byte zero `value` (a text buffer) takes zeroed memory from the allocator instead of
/// a fill pass: a large buffer is then fresh pages from the kernel, faulted in only where
/// something is written. Filling would write every page at once: the first 2 MiB text buffer
/// of an Elephant Tracks encode would be 512 page faults, most of the cost of encoding a short
/// trace.
pub fn filled_vec<T: Copy>(len: usize, value: T) -> Vec<T> {
    if let Some(v) = zero_bytes_as(len, value) {
        return v;
    }
    let mut v: Vec<T> = Vec::with_capacity(len);
    let bytes = len * std::mem::size_of::<T>();
    advise_huge_pages(v.as_ptr().cast(), bytes);
    // The fill writes every page: faulted in by one call, not one trap a page.
    if bytes >= POPULATE_FROM {
        populate(v.as_mut_ptr().cast(), bytes);
    }
    v.resize(len, value);
    v
}

/// Buffers from this many bytes have the part about to be written at once faulted in by one
/// call ([`populate`]) instead of a trap per 4 KiB page. Smaller ones are more likely to be
/// recycled from the allocator's heap (present already), and the call would cost more than
/// the few faults it saves.
const POPULATE_FROM: usize = 64 << 10;

/// `len` copies of `value` from zeroed memory when `T` is one byte and `value` is zero; `None`
/// otherwise.
fn zero_bytes_as<T: Copy>(len: usize, value: T) -> Option<Vec<T>> {
    if std::mem::size_of::<T>() != 1 {
        return None;
    }
    // SAFETY: `T` is one byte long, so that byte is part of a field (a one-byte type has no
    // padding) and initialized: it may be read as a `u8`.
    let byte: u8 = unsafe { std::mem::transmute_copy(&value) };
    if byte != 0 {
        return None;
    }
    let mut bytes = std::mem::ManuallyDrop::new(vec![0u8; len]);
    advise_huge_pages(bytes.as_ptr(), len);
    // SAFETY: `T` has the size and alignment of `u8` (a one-byte type's alignment is 1), so
    // the buffer's layout is that of `capacity` `T`s; every byte is zero, the representation
    // of `value`, so every element is a valid `T`; `ManuallyDrop` keeps the `u8` vector from
    // freeing the buffer, which the returned vector now owns.
    Some(unsafe {
        Vec::from_raw_parts(
            bytes.as_mut_ptr().cast::<T>(),
            bytes.len(),
            bytes.capacity(),
        )
    })
}

/// A vector of `len` zeros from zeroed memory (no fill pass here: a large one is fresh pages
/// from the kernel), advised to use huge pages like [`filled_vec`]'s and, from
/// [`POPULATE_FROM`] bytes, faulted in writable at once. A table's first touches are reads of
/// empty slots, and each page then cost two faults (the shared zero page, then a copy at the
/// first write); and a table grown by doubling gets a key every few slots from the old one at
/// once, so every page of it is written anyway. (Populating only tables of a huge page or
/// more would leave the faults of the smaller ones: hundreds in an encode's address thread.)
pub fn zeroed_vec(len: usize) -> Vec<u64> {
    let mut v = vec![0u64; len];
    let bytes = len * std::mem::size_of::<u64>();
    advise_huge_pages(v.as_ptr().cast(), bytes);
    if bytes >= POPULATE_FROM {
        populate(v.as_mut_ptr().cast(), bytes);
    }
    v
}

/// The capacity, in bytes, a growing table jumps to when it outgrows
/// [`SMALL_TABLE`] (see [`grow_when_full`]).
const GROWN_TABLE: usize = 16 << 20;

/// Tables up to this many bytes grow as any vector does.
const SMALL_TABLE: usize = 1 << 20;

/// Makes room for at least one more element in `v` when it is full. Up to [`SMALL_TABLE`]
/// bytes it grows as a push would; past that its capacity jumps to [`GROWN_TABLE`] bytes (or
/// doubles, when larger) in memory advised to use huge pages.
///
/// A table that only grows (a decoder's live blocks) would take a page fault for each 4 KiB
/// page its pushes reach, most of the faults of
/// such a decode, on its critical thread. Doubling into advised memory is not enough: only the
/// whole huge pages inside an allocation can be huge, and the ragged ends of each doubled
/// buffer still take a fault a page. One large jump
/// leaves one ragged start; the capacity never written costs address space, not memory.
pub fn grow_when_full<T: Copy>(v: &mut Vec<T>) {
    if v.len() < v.capacity() {
        return;
    }
    let size = std::mem::size_of::<T>().max(1);
    let bytes = v.capacity() * size;
    if bytes < SMALL_TABLE {
        v.reserve(1);
        return;
    }
    let cap = (2 * bytes).max(GROWN_TABLE) / size;
    let mut grown: Vec<T> = Vec::with_capacity(cap);
    advise_huge_pages(grown.as_ptr().cast(), cap * size);
    grown.extend_from_slice(v);
    *v = grown;
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

    #[test]
    fn a_growing_table_keeps_its_elements_and_has_room_for_the_next() {
        // Past the small sizes, through the jump and one doubling after it.
        let mut v: Vec<(u64, u64)> = Vec::new();
        let last = 2 * GROWN_TABLE / 16 + 100;
        for i in 0..last as u64 {
            grow_when_full(&mut v);
            assert!(v.len() < v.capacity(), "room for element {i}");
            v.push((i, !i));
        }
        assert!(v.capacity() * 16 >= 4 * GROWN_TABLE);
        assert!(v.iter().zip(0u64..).all(|(&(a, b), i)| a == i && b == !i));
    }

    #[test]
    fn one_byte_values_zero_or_not_fill_the_whole_vector() {
        // Zero bytes come from zeroed memory, other one-byte values from a fill: both must
        // hold the value everywhere, and grow and free like any vector.
        #[derive(Clone, Copy, PartialEq, Debug)]
        enum Mark {
            Off,
            On,
        }
        for len in [0, 1, 4095, 4097, HUGE_PAGE, 2 * HUGE_PAGE + 3] {
            let mut z = filled_vec(len, 0u8);
            assert_eq!(z.len(), len);
            assert!(z.iter().all(|&b| b == 0));
            z.push(9);
            assert_eq!(z[len], 9);
            let f = filled_vec(len, 0xa5u8);
            assert!(f.len() == len && f.iter().all(|&b| b == 0xa5));
            let off = filled_vec(len, Mark::Off);
            assert!(off.len() == len && off.iter().all(|&m| m == Mark::Off));
            let on = filled_vec(len, Mark::On);
            assert!(on.len() == len && on.iter().all(|&m| m == Mark::On));
            let signed = filled_vec(len, 0i8);
            assert!(signed.len() == len && signed.iter().all(|&b| b == 0));
        }
    }
}
