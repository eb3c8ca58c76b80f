//! Lost frees: the encoders write the allocation model's layout `alloc-model-4`, which flags
//! an allocation at an address that is still live, and such traces round-trip.
//!
//! The texts in `tests/data/` are synthetic (`python3 make_relive.py` there writes them).

use hatf::format::TraceFormat;
use hatf::internal::formats::memory_replay::model::ReplayKinds;
use hatf::internal::formats::memory_replay::MemoryReplay;
use hatf::internal::formats::mtrace::model::MtraceKinds;
use hatf::internal::formats::mtrace::Mtrace;
use hatf::internal::shared::allocation_model::packing::record_shapes;
use hatf::internal::shared::allocation_model::prediction::addresses;
use hatf::internal::shared::allocation_model::{stream, KindTable};
use metatf::container::{ContainerReader, PROPERTY_LAYOUT};

mod format_support;
use format_support::{decode_on, encode};

const MTRACE: &[u8] = include_bytes!("data/relive.mtrace");
const REPLAY: &[u8] = include_bytes!("data/relive_memory_replay.txt");

fn layout(bin: &[u8]) -> String {
    let r = ContainerReader::new(bin).unwrap();
    r.header().property(PROPERTY_LAYOUT).unwrap().to_string()
}

/// The flagged address symbols (unpacked from the shapes) and the relive stream of the file's
/// only block.
fn flags(bin: &[u8], kinds: &dyn KindTable) -> (usize, usize) {
    let mut r = ContainerReader::new(bin).unwrap();
    let block = r.next_block().unwrap().expect("a block");
    let mut unpacker = record_shapes::Unpacker::default();
    let (streams, error) = record_shapes::block_streams(kinds, &block, &mut unpacker);
    assert_eq!(error, None);
    let flagged = streams[stream::ADDR as usize]
        .iter()
        .filter(|&&b| b & addresses::guess::RELIVE != 0)
        .count();
    (flagged, streams[stream::RELIVE as usize].len())
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
            assert!(decode_on(f, &bin, threads) == text);
        }
    }
}
