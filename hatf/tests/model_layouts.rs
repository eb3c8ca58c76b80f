//! The allocation model's layouts: files of `alloc-model-2` (written before allocations at live
//! addresses were flagged) and `alloc-model-3` (written before the symbols were packed into
//! shapes) still decode byte for byte, and the encoders now write `alloc-model-4`, whose
//! flags a trace with lost frees exercises.
//!
//! The fixtures in `tests/data/` are synthetic (`python3 make_relive.py` there writes the two
//! texts); the `*-alloc-model-2.hatf` files were written from them by hatf 4060344, the
//! `*-alloc-model-3.hatf` files by hatf 81fc7a7.

use hatf::alloc::memory_replay::kinds::ReplayKinds;
use hatf::alloc::memory_replay::MemoryReplay;
use hatf::alloc::model::{addr, shapes, stream, KindTable, Layout};
use hatf::alloc::mtrace::kinds::MtraceKinds;
use hatf::alloc::mtrace::Mtrace;
use hatf::format::{DecodeOptions, EncodeOptions, TraceFormat};
use metatf::container::{ContainerReader, PROPERTY_LAYOUT};

const MTRACE: &[u8] = include_bytes!("data/relive.mtrace");
const MTRACE_V2: &[u8] = include_bytes!("data/mtrace-alloc-model-2.hatf");
const REPLAY: &[u8] = include_bytes!("data/relive_memory_replay.txt");
const REPLAY_V2: &[u8] = include_bytes!("data/memory-replay-alloc-model-2.hatf");
const MTRACE_V3: &[u8] = include_bytes!("data/mtrace-alloc-model-3.hatf");
const REPLAY_V3: &[u8] = include_bytes!("data/memory-replay-alloc-model-3.hatf");

fn encode(f: &dyn TraceFormat, input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    f.encode(&mut &input[..], &mut out, &EncodeOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

fn decode(f: &dyn TraceFormat, bin: &[u8], threads: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let options = DecodeOptions {
        threads,
        ..DecodeOptions::default()
    };
    f.decode(&mut &bin[..], &mut out, &options)
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

fn layout(bin: &[u8]) -> String {
    let r = ContainerReader::new(bin).unwrap();
    r.header().property(PROPERTY_LAYOUT).unwrap().to_string()
}

/// The flagged address symbols and the relive stream of the file's only block (for
/// `alloc-model-4`, the address symbols unpacked from the shapes).
fn flags(bin: &[u8], kinds: &dyn KindTable) -> (usize, usize) {
    let mut r = ContainerReader::new(bin).unwrap();
    let layout = match layout(bin).as_str() {
        "alloc-model-3" => Layout::FreshFlagged,
        "alloc-model-4" => Layout::Shaped,
        other => panic!("layout {other}"),
    };
    let block = r.next_block().unwrap().expect("a block");
    let mut unpacker = shapes::Unpacker::default();
    let (streams, error) = shapes::block_streams(layout, kinds, &block, &mut unpacker);
    assert_eq!(error, None);
    let flagged = streams[stream::ADDR as usize]
        .iter()
        .filter(|&&b| b & addr::guess::RELIVE != 0)
        .count();
    (flagged, streams[stream::RELIVE as usize].len())
}

#[test]
fn unflagged_files_still_decode() {
    for threads in [1, 2] {
        assert_eq!(layout(MTRACE_V2), "alloc-model-2");
        assert!(decode(&Mtrace, MTRACE_V2, threads) == MTRACE);
        assert_eq!(layout(REPLAY_V2), "alloc-model-2");
        assert!(decode(&MemoryReplay, REPLAY_V2, threads) == REPLAY);
    }
}

#[test]
fn unshaped_files_still_decode() {
    for threads in [1, 2] {
        assert_eq!(layout(MTRACE_V3), "alloc-model-3");
        assert!(decode(&Mtrace, MTRACE_V3, threads) == MTRACE);
        assert_eq!(layout(REPLAY_V3), "alloc-model-3");
        assert!(decode(&MemoryReplay, REPLAY_V3, threads) == REPLAY);
        // The same flags as the new files carry.
        assert!(flags(MTRACE_V3, &MtraceKinds).0 >= 10);
    }
}

#[test]
fn lost_frees_are_flagged_and_round_trip() {
    for (f, text, kinds) in [
        (
            &Mtrace as &dyn TraceFormat,
            MTRACE,
            &MtraceKinds as &dyn KindTable,
        ),
        (&MemoryReplay, REPLAY, &ReplayKinds),
    ] {
        let bin = encode(f, text);
        assert_eq!(layout(&bin), "alloc-model-4");
        let (flagged, relive) = flags(&bin, kinds);
        assert!(flagged >= 10, "{flagged} flagged allocations");
        assert!(
            relive >= flagged,
            "{relive} relive bytes for {flagged} flags"
        );
        for threads in [1, 2] {
            assert!(decode(f, &bin, threads) == text);
        }
    }
}
