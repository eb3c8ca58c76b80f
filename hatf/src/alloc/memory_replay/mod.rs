//! Android `memory_replay` dumps (bionic malloc debug `record_allocs`): lossless front and back
//! end and the `auto` encoding.

mod codec;
mod decode;
pub(crate) mod entries;
mod events;
pub mod kinds;
pub mod line;
mod window;
pub mod zip;

pub use events::{for_each_event, read_events};

use crate::alloc::model::FIRST_FORMAT_STREAM;
use crate::format::{FormatError, FormatFunctions, Forwarding};

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

impl Forwarding for MemoryReplay {
    const FUNCTIONS: FormatFunctions = FormatFunctions {
        event_encodings: crate::alloc::hatf10_dtd::EVENT_ENCODINGS,
        decode_records: Some(codec::decode_records),
        thread_lister: Some(thread_lister),
        stats: Some(|input, input_name| {
            crate::alloc::stats::of_events(FORMAT, events::for_each_placed_event, input, input_name)
        }),
        validate: Some(|input, input_name, report| {
            crate::alloc::check::validate(
                events::for_each_placed_event,
                crate::alloc::check::BlockNames::Address,
                input,
                input_name,
                report,
            )
        }),
        ..FormatFunctions::new(
            FORMAT,
            "Android memory_replay dump: `<tid>: malloc <ptr> <size>`, free, calloc, realloc, memalign, thread_done",
            detect,
            |input, output, options| {
                crate::alloc::hatf10_dtd::encode_text_or(
                    FORMAT,
                    events::for_each_event,
                    codec::encode,
                    input,
                    output,
                    options,
                )
            },
            codec::decode,
        )
    };
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
    crate::alloc::blocks::check_layout(header, file).ok()?;
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
    let mut c = crate::shared::varint::Cursor::new(
        crate::alloc::blocks::section(block, THREADS),
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

impl Forwarding for MemoryReplayZip {
    const FUNCTIONS: FormatFunctions = FormatFunctions {
        decode_records: Some(zip::decode_records),
        stats: Some(|input, input_name| {
            let mut s = crate::alloc::stats::AllocStats::default();
            zip::inflate_entry(input, input_name, &mut |r| {
                events::for_each_event(r, input_name, &mut |e| s.add(&e))
            })
            .map(|()| s.report(zip::FORMAT))
        }),
        validate: Some(|input, input_name, report| {
            zip::inflate_entry(input, input_name, &mut |r| {
                crate::alloc::check::validate(
                    events::for_each_placed_event,
                    crate::alloc::check::BlockNames::Address,
                    r,
                    input_name,
                    &mut *report,
                )
            })
        }),
        ..FormatFunctions::new(
            zip::FORMAT,
            "zip archive holding one Android memory_replay dump (stored byte for byte)",
            zip::detect,
            zip::encode,
            zip::decode,
        )
    };
}
