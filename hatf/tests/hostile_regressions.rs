//! Inputs the fuzzers found crashing, kept as named regression tests. Each reproducer also sits
//! in `fuzz/artifacts/<target>/`, replayed by `fuzz_corpus.rs`; these tests say what went wrong.

#[path = "../../fuzz/checks/format_sections.rs"]
mod format_sections;
mod hostile_support;

use hatf::format::Compression;
use hostile_support::{decode, encode};

/// A memory-replay file whose model sees a size near 2^64 (found by `format_sections`): the
/// jemalloc size-class computation must not overflow (a panic with overflow checks on, as in
/// the fuzz build); the class of such sizes is computed with explicit wrapping.
#[test]
fn memory_replay_sizes_near_the_top_of_u64_do_not_overflow() {
    let text = b"1: malloc 0x10 18446744073709551615\n1: malloc 0x20 16140901064495857665\n\
                 1: realloc 0x10 0x30 18446744073709551614\n1: free 0x30\n1: free 0x20\n";
    for compression in [Compression::None, Compression::Zstd] {
        let bin = encode("memory-replay", text, compression);
        assert_eq!(decode("memory-replay", &bin).unwrap(), text);
    }
}

#[test]
fn memory_replay_crash_reproducer_decodes_or_fails_cleanly() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuzz/artifacts/format_sections/crash-memory-replay-jemalloc-class-overflow"
    );
    let Ok(input) = std::fs::read(path) else {
        eprintln!("skipping: no reproducer at {path}");
        return;
    };
    // The check frames the fuzz bytes into a memory-replay file and decodes it.
    format_sections::check(&input);
}
