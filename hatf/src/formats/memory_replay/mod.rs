//! Android `memory_replay` dumps (bionic malloc debug `record_allocs`): lossless front and back
//! end and the `auto` encoding.

mod check;
mod decode;
mod encode;
pub mod line;
pub mod model;
pub(crate) mod records;
mod window;
pub mod zip;

pub use check::{for_each_placed_event, read_events};

use crate::format::{DecodeFn, DecodeRecordsFn, EncodeFn, FormatError, ThreadListerFn};
use crate::shared::allocation::check::BlockNames;
use crate::shared::allocation::placed::ForEachPlacedEvent;
use crate::shared::allocation_model::FIRST_FORMAT_STREAM;
use crate::shared::format_parts::FormatParts;
use crate::shared::text::sink;

/// Format id stored in the container header.
pub const FORMAT: &str = "memory-replay";
/// The DTD embedded in every `memory-replay` container.
pub const DTD: &str = include_str!("../../../../dtds/memory-replay.dtd");
/// Stream of thread ids, in order of first use.
pub const THREADS: u8 = FIRST_FORMAT_STREAM;
/// Stream of lines stored verbatim.
pub const VERBATIM: u8 = FIRST_FORMAT_STREAM + 1;

/// The `memory-replay` text format.
pub struct MemoryReplay;

impl FormatParts for MemoryReplay {
    const NAME: &'static str = FORMAT;
    const DESCRIPTION: &'static str = "Android memory_replay dump: `<tid>: malloc <ptr> <size>`, free, calloc, realloc, memalign, thread_done";
    const BLOCK_NAMES: BlockNames = BlockNames::Address;
    const DETECT: fn(&[u8]) -> bool = detect;
    const PLACED_EVENTS: Option<ForEachPlacedEvent> = Some(check::for_each_placed_event);
    const ENCODE: EncodeFn = encode::encode;
    const DECODE: DecodeFn = sink::decode::<decode::Printer>;
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(sink::decode_range::<decode::Printer>);
    const THREAD_LISTER: Option<ThreadListerFn> = Some(thread_lister);
}

/// True when the first lines of `head` are `memory_replay` lines.
fn detect(head: &[u8]) -> bool {
    let mut n = 0;
    for l in head.split(|&b| b == b'\n').take(8) {
        if l.is_empty() {
            continue;
        }
        if line::parse(l).is_err() {
            return n >= 2;
        }
        n += 1;
    }
    n >= 1
}

/// The thread lister of a file: each block starts an empty thread table, so its `threads`
/// stream holds exactly the block's threads.
fn thread_lister(
    header: &metatf::container::ContainerHeader,
    file: &str,
) -> Option<crate::format::ThreadLister> {
    crate::shared::container::blocks::check_layout(header, file).ok()?;
    let file = file.to_string();
    Some(Box::new(move |block| {
        block_threads(block).map_err(|m| FormatError {
            file: file.clone(),
            position: format!("byte {}", block.offset),
            message: format!("block {}: {m}", block.index),
        })
    }))
}

/// The thread ids (ascending) of a block of a file whose blocks each start a fresh model: its
/// `threads` stream lists each of them once, in order of first use.
fn block_threads(block: &metatf::container::Block) -> Result<Vec<u64>, String> {
    let mut c = metatf::varint::Cursor::new(
        crate::shared::container::blocks::section(block, THREADS),
        "threads",
    );
    let mut ids = Vec::new();
    while !c.is_empty() {
        ids.push(c.u64()?);
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// The `memory-replay-zip` format: the zip archive AOSP ships the dumps in.
pub struct MemoryReplayZip;

impl FormatParts for MemoryReplayZip {
    const NAME: &'static str = zip::FORMAT;
    const DESCRIPTION: &'static str =
        "zip archive holding one Android memory_replay dump (stored byte for byte)";
    const BLOCK_NAMES: BlockNames = BlockNames::Address;
    const DETECT: fn(&[u8]) -> bool = zip::detect;
    // The events are those of the dump the archive holds.
    const PLACED_EVENTS: Option<ForEachPlacedEvent> = Some(|input, name, sink| {
        zip::inflate_entry(input, name, &mut |r| {
            check::for_each_placed_event(r, name, &mut *sink)
        })
    });
    const ENCODE: EncodeFn = zip::encode;
    const DECODE: DecodeFn = zip::decode;
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(zip::decode_records);
}
