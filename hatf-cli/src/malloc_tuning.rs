//! Keeps glibc's allocator from holding on to freed memory.
//!
//! glibc raises its mmap threshold each time a large block is freed (up to 32 MiB), after which
//! big buffers (zstd's tables, a block's streams) come from the heaps of each thread and stay
//! there, freed but resident: a large mtrace log encoded on two threads then holds about three
//! times its live heap. A fixed threshold returns every large buffer to the system when it is
//! freed, which keeps the peak near the live heap. Other platforms and allocators are left
//! alone.
//!
//! Encoding uses 1 MiB, the other commands 256 KiB. Every buffer above the threshold is fresh
//! pages from the kernel at each allocation, each page a fault when first written: at 256 KiB
//! an encode would map, fault in and unmap the zstd context of each short section and many
//! of a block's stream buffers, section after section. At 1 MiB those buffers are reused,
//! and the peak RSS still stays bounded whatever the trace's length. Decoding allocates
//! fewer such buffers, gains little, and would hold a few MB more, so it keeps 256 KiB.

/// The mmap threshold of an encode.
pub const ENCODING_MMAP_THRESHOLD: i32 = 1 << 20;
/// The mmap threshold of every other command.
pub const DEFAULT_MMAP_THRESHOLD: i32 = 256 << 10;

/// Fixes the mmap threshold at `bytes` (which also stops its dynamic growth): blocks at least
/// this large are mapped on their own, and unmapped when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn bound_retained_memory(bytes: i32) {
    /// `M_MMAP_THRESHOLD` from glibc's `<malloc.h>`.
    const M_MMAP_THRESHOLD: i32 = -3;
    extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    // SAFETY: mallopt only changes allocator tuning; called once, before any other thread runs.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, bytes);
    }
}

/// Nothing to tune outside glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn bound_retained_memory(_bytes: i32) {}
