//! Archive inputs (malloc-bench `.trace.gz`, memory_replay `.zip`): the encoder writes the
//! piece-by-piece layouts (`malloc-bench-preflate-5`, `memory-replay-zip-preflate-2`), also for
//! a stream preflate-rs cannot take in pieces, and a long model stream goes into the mixer in
//! parts.
//!
//! The archives in `tests/data/` are synthetic, not corpus files (`python3 make_synthetic.py`
//! there writes them with Python's gzip and zipfile modules).

use std::path::Path;

use hatf::format::{DecodeOptions, EncodeOptions, TraceFormat};
use hatf::internal::formats::malloc_bench::MallocBench;
use hatf::internal::formats::memory_replay::MemoryReplayZip;
use metatf::container::{ContainerReader, PROPERTY_LAYOUT};

mod format_support;
use format_support::{decode, encode};

const TRACE_GZ: &[u8] = include_bytes!("data/synthetic.trace.gz");
const ZIP: &[u8] = include_bytes!("data/synthetic_memory_replay.zip");

/// The corpus' malloc-bench trace `name`, or `None` (with a message) when the corpus is absent.
fn corpus_trace(name: &str) -> Option<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/malloc/malloc-bench/traces")
        .join(name);
    let gz = std::fs::read(&path).ok();
    if gz.is_none() {
        eprintln!("skipped: {} is absent", path.display());
    }
    gz
}

fn layout(bin: &[u8]) -> String {
    let r = ContainerReader::new(bin).unwrap();
    r.header()
        .property(PROPERTY_LAYOUT)
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_encoder_writes_the_piece_layouts() {
    let bin = encode(&MallocBench, TRACE_GZ);
    assert_eq!(layout(&bin), "malloc-bench-preflate-5");
    assert!(decode(&MallocBench, &bin) == TRACE_GZ);
    let bin = encode(&MemoryReplayZip, ZIP);
    assert_eq!(layout(&bin), "memory-replay-zip-preflate-2");
    assert!(decode(&MemoryReplayZip, &bin) == ZIP);
}

/// onoro.trace.gz is the corpus stream on which preflate-rs 0.7.6's analysis in pieces fails:
/// it is taken as one piece, not stored as its bytes.
#[test]
fn a_stream_preflate_cannot_take_in_pieces_is_one_piece() {
    let Some(gz) = corpus_trace("onoro.trace.gz") else {
        return;
    };
    let bin = encode(&MallocBench, &gz);
    assert_eq!(layout(&bin), "malloc-bench-preflate-5");
    assert!(decode(&MallocBench, &bin) == gz);
}

/// clang.trace.gz's model stream (1.2 MB) is over `mixed_parts::PARTS_FROM` (256 KiB): it goes
/// through the mixer in two parts, coded and decoded on two threads, and the file is the same
/// whatever the thread count.
#[test]
fn a_long_model_stream_is_mixed_in_parts() {
    use hatf::internal::formats::malloc_bench::MODEL_CM2_PARTS;
    let Some(gz) = corpus_trace("clang.trace.gz") else {
        return;
    };
    let on = |threads| {
        let mut out = Vec::new();
        let options = EncodeOptions {
            threads,
            ..EncodeOptions::default()
        };
        MallocBench
            .encode(&mut &gz[..], &mut out, &options)
            .unwrap_or_else(|e| panic!("{e}"));
        out
    };
    let bin = on(2);
    assert!(on(1) == bin, "the thread count changed the file");
    let mut r = ContainerReader::new(&bin[..]).unwrap();
    let block = r.next_block().unwrap().unwrap();
    let parts = block.section(MODEL_CM2_PARTS).expect("section 8");
    assert_eq!(parts.bytes[0], 2, "two parts");
    for threads in [1, 2] {
        let mut back = Vec::new();
        let options = DecodeOptions {
            threads,
            ..DecodeOptions::default()
        };
        MallocBench
            .decode(&mut &bin[..], &mut back, &options)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(back == gz, "{threads} threads");
    }
}
