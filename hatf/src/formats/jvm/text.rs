//! Text trace ↔ blocks of model streams: line ends, verbatim lines, block boundaries.

use std::io::{Read, Write};
use std::ops::Range;

use metatf::container::{Block, ContainerHeader, ContainerReader, PROPERTY_LAYOUT};

use super::line::{parse, Field, Kind, Parsed, Record};
use super::model::Model;
use super::streams::{Readers, Streams, COUNT, KIND, VERBATIM};
use crate::format::{EncodeOptions, EncodeReport, FormatError};
use crate::shared::container::blocks::{self, container_error, write_error, BlockWriter};
use crate::shared::text::lines::{bad_line_unless_kept, for_each_raw_line};

/// Kind code of a line stored verbatim (its text is in the `verbatim` stream).
pub const VERBATIM_LINE: u8 = 12;
/// Flag on the kind byte: the line ends in `\r\n` (records only; verbatim text keeps its `\r`).
pub const CRLF: u8 = 0x80;
/// Flag on the kind byte: the line has no line end (the last line of the file).
pub const UNTERMINATED: u8 = 0x40;
/// Stream bytes that also end a block early (bounds memory on long verbatim lines).
const BLOCK_BYTES: usize = 64 << 20;

/// How the encoder cuts the text into blocks; every block starts a fresh model (layout
/// [`super::LAYOUT`]), so any block decodes on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockPlan {
    /// Lines (records) per block; a block also ends early at 64 MiB of stream bytes.
    pub lines: u64,
}

impl BlockPlan {
    /// What `hatf encode` writes: blocks of 2^20 lines, each with a fresh model.
    pub const DEFAULT: BlockPlan = BlockPlan { lines: 1 << 20 };

    /// The header of a `format` file (`jvm` or `jvm-zip`) written with this plan: the DTD,
    /// `encoding = auto` and the layout.
    pub fn header(&self, format: &str) -> ContainerHeader {
        ContainerHeader {
            dtd: super::DTD.to_string(),
            format: format.to_string(),
            properties: vec![
                ("encoding".to_string(), "auto".to_string()),
                (PROPERTY_LAYOUT.to_string(), super::LAYOUT.to_string()),
            ],
        }
    }
}

/// Encodes every line of `input` into blocks of `out`, cut as `plan` says.
pub fn encode_into<W: Write>(
    input: &mut dyn Read,
    out: &mut BlockWriter<W>,
    options: &EncodeOptions,
    plan: BlockPlan,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let block_lines = plan.lines.max(1);
    let mut model = Model::new();
    let mut streams = Streams::default();
    let mut in_block = 0u64;
    let mut report = EncodeReport::default();
    let mut threads = BlockThreads::default();
    let flush =
        |streams: &mut Streams, threads: &mut BlockThreads, n: u64, out: &mut BlockWriter<W>| {
            let s: Vec<(u8, &[u8])> = (0..COUNT)
                .map(|i| (i as u8, streams.bytes[i].as_slice()))
                .collect();
            out.set_block_threads(&threads.take());
            out.block(n, &s)?;
            streams.clear();
            Ok::<(), FormatError>(())
        };
    let lines = for_each_raw_line(input, file, |line_no, raw| {
        report.input_bytes += raw.len() as u64;
        let (body, lf) = match raw.strip_suffix(b"\n") {
            Some(b) => (b, true),
            None => (raw, false),
        };
        let (core, crlf) = match body.strip_suffix(b"\r") {
            Some(c) if lf => (c, true),
            _ => (body, false),
        };
        let end_flags = if lf { 0 } else { UNTERMINATED };
        let parsed = match parse(core) {
            Ok(p) => Some(p),
            Err(e) => {
                if !options.keep_bad_lines {
                    return Err(bad_line_unless_kept(
                        file,
                        line_no,
                        e.column,
                        &format!("not a JVM trace record: {}", e.message),
                        core,
                    ));
                }
                report.bad_lines += 1;
                None
            }
        };
        if let Some(Parsed::Canonical(r) | Parsed::Spelled(r)) = &parsed {
            threads.add(r);
        }
        match parsed {
            Some(Parsed::Canonical(r)) => {
                let crlf = if crlf { CRLF } else { 0 };
                streams.byte(KIND, r.kind.code() | crlf | end_flags);
                model.encode(&r, &mut streams);
            }
            Some(Parsed::Spelled(_)) | None => {
                streams.byte(KIND, VERBATIM_LINE | end_flags);
                streams.text(VERBATIM, body);
            }
        }
        in_block += 1;
        if in_block >= block_lines || streams.len() >= BLOCK_BYTES {
            flush(&mut streams, &mut threads, in_block, out)?;
            in_block = 0;
            model = Model::new();
        }
        Ok(())
    })?;
    if in_block > 0 {
        flush(&mut streams, &mut threads, in_block, out)?;
    }
    report.records = lines;
    Ok(report)
}

/// The thread ids of one block's records, for the container's index (`docs/FORMAT.md §5`):
/// every record that names a thread (`TB TE MN MX FP`), whether stored through the model or
/// verbatim because it is spelled differently. Ids are the records' signed numbers reinterpreted
/// as 64-bit unsigned (two's complement), so a negative id is listed as a number ≥ 2⁶³.
#[derive(Default)]
pub struct BlockThreads {
    ids: std::collections::HashSet<u64>,
    last: Option<u64>,
}

impl BlockThreads {
    /// Notes the thread of `r`, if its kind has one.
    pub fn add(&mut self, r: &Record<'_>) {
        if !r.kind.fields().contains(&Field::Thread) {
            return;
        }
        let id = r.thread as u64;
        // Consecutive records mostly share a thread; the rest is sorted out in `take`.
        if self.last != Some(id) {
            self.last = Some(id);
            self.ids.insert(id);
        }
    }

    /// The ids noted since the last call, ascending, and a fresh start.
    pub fn take(&mut self) -> Vec<u64> {
        self.last = None;
        let mut ids: Vec<u64> = self.ids.drain().collect();
        ids.sort_unstable();
        ids
    }
}

/// Decodes every remaining block of `reader` into `out`, each with a fresh model; returns the
/// number of lines.
pub fn decode_blocks<R: Read>(
    reader: &mut ContainerReader<R>,
    out: &mut dyn Write,
    file: &str,
) -> Result<u64, FormatError> {
    let mut lines = 0u64;
    let mut text = Vec::with_capacity(1 << 20);
    while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
        decode_block(
            &mut Model::new(),
            &block,
            0..u64::MAX,
            &mut text,
            file,
            &mut |text| {
                out.write_all(text).map_err(|e| write_error(file, e))?;
                text.clear();
                Ok(())
            },
        )?;
        lines += block.record_count;
    }
    out.write_all(&text).map_err(|e| write_error(file, e))?;
    Ok(lines)
}

/// Appends the lines of records `keep` of `block` (counted from the block's first record,
/// clipped to the block) to `text`, with `model` (a fresh one at the block's start). Every record before `keep.end` is decoded, since
/// each one's model updates shape the next, and none after it: the model is then left
/// mid-block. `spill` may empty `text` whenever it holds 1 MiB or more.
///
/// A record is a line (a modelled record or a line kept verbatim), as the block's record count
/// counts them; the whole block must hold exactly that many, and no stream bytes may be left.
pub fn decode_block(
    model: &mut Model,
    block: &Block,
    keep: Range<u64>,
    text: &mut Vec<u8>,
    file: &str,
    spill: &mut dyn FnMut(&mut Vec<u8>) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let at = |rec: u64, msg: String| FormatError {
        file: file.to_string(),
        position: format!("block {} record {rec}", block.index),
        message: msg,
    };
    let mut s = Readers::new(|k| blocks::section(block, k));
    let stop = keep.end.min(block.record_count);
    for i in 0..stop {
        let rec = block.first_record.saturating_add(i);
        if s.done() {
            return Err(at(
                rec,
                format!(
                    "the block's streams end after {i} lines, but it holds {} records",
                    block.record_count
                ),
            ));
        }
        let mark = text.len();
        let b = s.byte(KIND).map_err(|m| at(rec, m))?;
        let base = b & !(CRLF | UNTERMINATED);
        if base == VERBATIM_LINE {
            text.extend_from_slice(s.text(VERBATIM).map_err(|m| at(rec, m))?);
        } else {
            let kind = Kind::from_code(base)
                .ok_or_else(|| at(rec, format!("unknown kind byte {b:#04x}")))?;
            model.decode(kind, &mut s, text).map_err(|m| at(rec, m))?;
            if b & CRLF != 0 {
                text.push(b'\r');
            }
        }
        if b & UNTERMINATED == 0 {
            text.push(b'\n');
        }
        if i < keep.start {
            text.truncate(mark);
        } else if text.len() >= 1 << 20 {
            spill(text)?;
        }
    }
    if stop == block.record_count {
        let left = s.leftovers();
        if !left.is_empty() {
            return Err(at(
                block.first_record.saturating_add(stop),
                format!(
                    "bytes left over in streams {} after the block's {stop} records",
                    left.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Lists the threads of each block again from its records, as the encoder listed them in the
/// index ([`BlockThreads`]): what `hatf recover` uses when a damaged file's index is lost.
pub struct ThreadLister {
    model: Model,
    threads: BlockThreads,
    text: Vec<u8>,
}

impl Default for ThreadLister {
    fn default() -> Self {
        ThreadLister::new()
    }
}

impl ThreadLister {
    /// A lister for a file's blocks.
    pub fn new() -> Self {
        ThreadLister {
            model: Model::new(),
            threads: BlockThreads::default(),
            text: Vec::new(),
        }
    }

    /// The thread ids (ascending) of the records of `block`, the next block of the file.
    pub fn block(&mut self, block: &Block, file: &str) -> Result<Vec<u64>, FormatError> {
        let (model, threads) = (&mut self.model, &mut self.threads);
        // Complete lines are parsed as they come, so only one spill's worth of text is held.
        let mut note_lines = |text: &mut Vec<u8>, all: bool| {
            let end = if all {
                text.len()
            } else {
                memchr::memrchr(b'\n', text).map_or(0, |p| p + 1)
            };
            for raw in text[..end].split_inclusive(|&b| b == b'\n') {
                // The same `core` the encoder parsed: no line end, and no `\r` before a `\n`.
                let core = match raw.strip_suffix(b"\n") {
                    Some(body) => body.strip_suffix(b"\r").unwrap_or(body),
                    None => raw,
                };
                if let Ok(Parsed::Canonical(r) | Parsed::Spelled(r)) = parse(core) {
                    threads.add(&r);
                }
            }
            text.drain(..end);
        };
        self.text.clear();
        *model = Model::new();
        decode_block(
            model,
            block,
            0..u64::MAX,
            &mut self.text,
            file,
            &mut |text| {
                note_lines(text, false);
                Ok(())
            },
        )?;
        note_lines(&mut self.text, true);
        Ok(self.threads.take())
    }
}
