//! Android `memory_replay` dumps (bionic malloc debug `record_allocs`): lossless front and back
//! end and the `auto` encoding.

mod codec;
mod decode;
mod events;
pub mod kinds;
pub mod line;
pub mod zip;

use std::io::{Read, Write};

pub use events::{for_each_event, read_events};

use crate::alloc::model::FIRST_FORMAT_STREAM;
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError, TraceFormat};

/// Format id stored in the container header.
pub const FORMAT: &str = "memory-replay";
/// The DTD embedded in every `memory-replay` container.
pub const DTD: &str = include_str!("../../../../../dtds/memory-replay.dtd");
/// Stream of thread ids, in order of first use.
pub const THREADS: u8 = FIRST_FORMAT_STREAM;
/// Stream of lines stored verbatim.
pub const VERBATIM: u8 = FIRST_FORMAT_STREAM + 1;

/// The `memory-replay` text format.
pub struct MemoryReplay;

impl TraceFormat for MemoryReplay {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn description(&self) -> &'static str {
        "Android memory_replay dump: `<tid>: malloc <ptr> <size>`, free, calloc, realloc, memalign, thread_done"
    }

    fn detect(&self, head: &[u8]) -> bool {
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

    fn event_encodings(&self) -> &'static [&'static str] {
        crate::alloc::hatf10_dtd::EVENT_ENCODINGS
    }

    fn encode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        if options.encoding == crate::alloc::hatf10_dtd::NAME {
            return crate::alloc::hatf10_dtd::encode_text(
                FORMAT,
                events::for_each_event,
                input,
                output,
                options,
            );
        }
        codec::encode(input, output, options)
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        codec::decode(input, output, options)
    }

    fn decode_records(
        &self,
        input: &mut dyn crate::seek::ReadSeek,
        output: &mut dyn Write,
        options: &DecodeOptions,
        range: std::ops::Range<u64>,
        note: crate::seek::Note<'_>,
    ) -> Option<Result<u64, FormatError>> {
        Some(codec::decode_records(input, output, options, range, note))
    }

    fn thread_lister(
        &self,
        header: &metatf::container::ContainerHeader,
        file: &str,
    ) -> Option<crate::format::ThreadLister> {
        // Only where each block starts an empty thread table does its `threads` stream hold
        // exactly the block's threads (older files carried the table across blocks).
        if !matches!(
            crate::alloc::blocks::independent_blocks(header, file),
            Ok(true)
        ) {
            return None;
        }
        let file = file.to_string();
        Some(Box::new(move |block| {
            block_threads(block).map_err(|m| FormatError {
                file: file.clone(),
                position: format!("byte {}", block.offset),
                message: format!("block {}: {m}", block.index),
            })
        }))
    }
    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<crate::format::StatsReport, FormatError>> {
        let mut s = crate::alloc::stats::AllocStats::default();
        Some(
            events::for_each_event(input, input_name, &mut |e| s.add(&e))
                .map(|()| s.report(self.name())),
        )
    }
}

/// The thread ids (ascending) of a block of a file whose blocks each start a fresh model: its
/// `threads` stream lists each of them once, in order of first use.
fn block_threads(block: &metatf::container::Block) -> Result<Vec<u64>, String> {
    let mut c =
        crate::alloc::varint::Cursor::new(crate::alloc::blocks::section(block, THREADS), "threads");
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

impl TraceFormat for MemoryReplayZip {
    fn name(&self) -> &'static str {
        zip::FORMAT
    }

    fn description(&self) -> &'static str {
        "zip archive holding one Android memory_replay dump (stored byte for byte)"
    }

    fn detect(&self, head: &[u8]) -> bool {
        zip::detect(head)
    }

    fn encode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        zip::encode(input, output, options)
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        zip::decode(input, output, options)
    }

    fn decode_records(
        &self,
        input: &mut dyn crate::seek::ReadSeek,
        output: &mut dyn Write,
        options: &DecodeOptions,
        range: std::ops::Range<u64>,
        note: crate::seek::Note<'_>,
    ) -> Option<Result<u64, FormatError>> {
        Some(zip::decode_records(input, output, options, range, note))
    }
    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<crate::format::StatsReport, FormatError>> {
        let mut s = crate::alloc::stats::AllocStats::default();
        Some(
            zip::inflate_entry(input, input_name, &mut |r| {
                events::for_each_event(r, input_name, &mut |e| s.add(&e))
            })
            .map(|()| s.report(self.name())),
        )
    }
}
