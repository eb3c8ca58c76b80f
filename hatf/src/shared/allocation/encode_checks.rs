//! A check the text encoders' tests share: the file depends on the text alone, not on the
//! thread count, the chunk size or where blocks end.

use crate::format::{DecodeFn, DecodeOptions, EncodeFn, EncodeOptions};
use crate::shared::text::line_chunks::with_chunk_size;
use std::cell::Cell;

thread_local! {
    /// A block length for tests (0: the encoder's own).
    static BLOCK_FOR_TESTS: Cell<u64> = const { Cell::new(0) };
}

/// The block length a test asked for with [`with_block_records`], if any.
pub fn block_records_for_tests() -> Option<u64> {
    Some(BLOCK_FOR_TESTS.with(Cell::get)).filter(|&b| b > 0)
}

/// Runs `f` with blocks of `records` records (0: the encoder's own length) on this thread.
fn with_block_records<T>(records: u64, f: impl FnOnce() -> T) -> T {
    BLOCK_FOR_TESTS.with(|b| b.set(records));
    let r = f();
    BLOCK_FOR_TESTS.with(|b| b.set(0));
    r
}

/// Encodes `text` (keeping bad lines, of which it has `bad_lines`) with `threads` threads,
/// chunks of `chunk` bytes and blocks of `block` records.
fn encode_with(
    encode: EncodeFn,
    text: &[u8],
    bad_lines: u64,
    (threads, chunk, block): (usize, usize, u64),
) -> Vec<u8> {
    let options = EncodeOptions {
        threads,
        keep_bad_lines: true,
        ..EncodeOptions::default()
    };
    let mut out = Vec::new();
    let report = with_block_records(block, || {
        with_chunk_size(chunk, || encode(&mut &text[..], &mut out, &options))
    });
    assert_eq!(report.unwrap().bad_lines, bad_lines);
    out
}

/// Asserts that `encode` writes the same file for `text` whatever the thread count, the chunk
/// size and the block length (the real one, and short ones that end blocks inside chunks), and
/// that `decode` gives the text back.
pub fn file_depends_on_the_text_alone(
    text: &[u8],
    bad_lines: u64,
    encode: EncodeFn,
    decode: DecodeFn,
) {
    for block in [0, 1000, 37] {
        // Chunks of about a line look each caller or thread up on its own, as the model's
        // thread did before they were told apart per chunk.
        let reference = encode_with(encode, text, bad_lines, (1, 1, block));
        for (threads, chunk) in [(1, 4096), (2, 100), (2, 1 << 20), (3, 777)] {
            let file = encode_with(encode, text, bad_lines, (threads, chunk, block));
            assert!(
                file == reference,
                "block {block} threads {threads} chunk {chunk}"
            );
        }
        let mut back = Vec::new();
        decode(&mut &reference[..], &mut back, &DecodeOptions::default()).unwrap();
        assert!(back == text, "block {block}");
    }
}
