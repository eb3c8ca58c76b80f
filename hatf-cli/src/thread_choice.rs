//! How many threads a command uses when `--threads` is not given.
//!
//! Every encoder and decoder gives the same bytes whatever the thread count, so the count is
//! only a question of speed. Extra threads cost a fixed price at every run (creating them,
//! a malloc arena each, their stacks and buffers faulted in: about a millisecond and several
//! hundred page faults on a 2-core machine), and they pay back only
//! on inputs large enough to keep them busy. So a small input file runs on one thread, and a
//! large one, or one of unknown size (a pipe that did not end within the bytes read to detect
//! its format), on every core.

/// An input file smaller than this is encoded on one thread when `--threads` is not given
/// (unless it is a compressed archive, see [`encode_len`]).
///
/// Below this size a second thread's start-up costs about as much as it saves: one thread
/// is at least as fast, and only inputs several times larger gain from the second one.
pub const ENCODE_ONE_THREAD_BELOW: u64 = 16 << 20;

/// A binary trace smaller than this is decoded on one thread when `--threads` is not given.
///
/// Binary traces are 30 to 500 times smaller than their text, so this stands for a text of a
/// few megabytes, the size from which a second thread starts to pay for itself.
pub const DECODE_ONE_THREAD_BELOW: u64 = 16 << 10;

/// The input length that decides an encode's thread count: `len`, unless the first bytes
/// `head` show a compressed archive (a zip, a gzip stream: memory_replay zips, malloc-bench
/// `.trace.gz` files), whose text is many times longer than the file and is worth every core
/// even when the file is short.
pub fn encode_len(len: Option<u64>, head: &[u8]) -> Option<u64> {
    const ARCHIVES: [&[u8]; 4] = [b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08", b"\x1f\x8b"];
    len.filter(|_| !ARCHIVES.iter().any(|magic| head.starts_with(magic)))
}

/// Every core the process may use.
pub fn all_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The thread count: `requested` when given (`--threads N`), else one for an input known to be
/// shorter than `one_below` bytes, else `cores()`.
pub fn threads_for(
    requested: Option<usize>,
    input_len: Option<u64>,
    one_below: u64,
    cores: impl FnOnce() -> usize,
) -> usize {
    match (requested, input_len) {
        (Some(n), _) => n,
        (None, Some(len)) if len < one_below => 1,
        (None, _) => cores(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_count_always_wins() {
        assert_eq!(threads_for(Some(3), Some(10), 1000, || 2), 3);
        assert_eq!(threads_for(Some(1), Some(1 << 30), 1000, || 2), 1);
        assert_eq!(threads_for(Some(4), None, 1000, || 2), 4);
    }

    #[test]
    fn archives_count_as_of_unknown_length() {
        assert_eq!(encode_len(Some(10), b"= Start\n"), Some(10));
        assert_eq!(encode_len(Some(10), b""), Some(10));
        assert_eq!(encode_len(Some(10), b"PK\x03\x04\x14\x00"), None);
        assert_eq!(encode_len(Some(10), b"PK\x05\x06"), None);
        assert_eq!(encode_len(Some(10), b"\x1f\x8b\x08\x00"), None);
        assert_eq!(encode_len(None, b"x"), None);
        // So a small archive is encoded on every core.
        assert_eq!(
            threads_for(None, encode_len(Some(10), b"\x1f\x8b"), 1000, || 2),
            2
        );
    }

    #[test]
    fn small_files_get_one_thread_large_or_unknown_ones_every_core() {
        assert_eq!(threads_for(None, Some(0), 1000, || 8), 1);
        assert_eq!(threads_for(None, Some(999), 1000, || 8), 1);
        assert_eq!(threads_for(None, Some(1000), 1000, || 8), 8);
        assert_eq!(threads_for(None, None, 1000, || 8), 8);
        assert!(all_cores() >= 1);
    }
}
