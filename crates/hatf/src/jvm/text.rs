//! Text trace ↔ blocks of model streams: line ends, verbatim lines, block boundaries.

use std::io::{Read, Write};

use metatf::container::{Block, ContainerReader};

use super::line::{parse, Field, Kind, Parsed, Record};
use super::model::Model;
use super::streams::{Readers, Streams, COUNT, KIND, VERBATIM};
use crate::alloc::blocks::{self, container_error, write_error, BlockWriter};
use crate::alloc::text_lines::{bad_line_unless_kept, for_each_raw_line};
use crate::format::{EncodeOptions, EncodeReport, FormatError};

/// Kind code of a line stored verbatim (its text is in the `verbatim` stream).
pub const VERBATIM_LINE: u8 = 12;
/// Flag on the kind byte: the line ends in `\r\n` (records only; verbatim text keeps its `\r`).
pub const CRLF: u8 = 0x80;
/// Flag on the kind byte: the line has no line end (the last line of the file).
pub const UNTERMINATED: u8 = 0x40;
/// Lines per block.
const BLOCK_LINES: u64 = 1 << 20;
/// Stream bytes that also end a block early (bounds memory on long verbatim lines).
const BLOCK_BYTES: usize = 64 << 20;

/// Encodes every line of `input` into blocks of `out`; the model carries over between blocks.
pub fn encode_into<W: Write>(
    input: &mut dyn Read,
    out: &mut BlockWriter<W>,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
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
        if in_block >= BLOCK_LINES || streams.len() >= BLOCK_BYTES {
            flush(&mut streams, &mut threads, in_block, out)?;
            in_block = 0;
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

/// Decodes every remaining block of `reader` into `out`; returns the number of lines.
pub fn decode_blocks<R: Read>(
    reader: &mut ContainerReader<R>,
    out: &mut dyn Write,
    file: &str,
) -> Result<u64, FormatError> {
    let mut model = Model::new();
    let mut lines = 0u64;
    let mut text = Vec::with_capacity(1 << 20);
    while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
        lines += decode_block(&mut model, &block, &mut text, file, &mut |text| {
            out.write_all(text).map_err(|e| write_error(file, e))?;
            text.clear();
            Ok(())
        })?;
    }
    out.write_all(&text).map_err(|e| write_error(file, e))?;
    Ok(lines)
}

/// Appends the lines of `block` to `text`, with the model left by the blocks before it;
/// `spill` may empty `text` whenever it holds 1 MiB or more. Returns the number of lines.
fn decode_block(
    model: &mut Model,
    block: &Block,
    text: &mut Vec<u8>,
    file: &str,
    spill: &mut dyn FnMut(&mut Vec<u8>) -> Result<(), FormatError>,
) -> Result<u64, FormatError> {
    let at = |rec: u64, msg: String| FormatError {
        file: file.to_string(),
        position: format!("block {} record {rec}", block.index),
        message: msg,
    };
    let mut s = Readers::new(|k| blocks::section(block, k));
    let mut rec = block.first_record;
    let mut lines = 0u64;
    while !s.done() {
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
        rec += 1;
        lines += 1;
        if text.len() >= 1 << 20 {
            spill(text)?;
        }
    }
    let left = s.leftovers();
    if !left.is_empty() {
        return Err(at(
            rec,
            format!("bytes left over in streams {}", left.join(", ")),
        ));
    }
    Ok(lines)
}

/// Lists the threads of each block again from its records, as the encoder listed them in the
/// index ([`BlockThreads`]): what `hatf recover` uses when a damaged file's index is lost. The
/// model carries from block to block, so blocks must be given in file order, from the first.
#[derive(Default)]
pub struct ThreadLister {
    model: Model,
    threads: BlockThreads,
    text: Vec<u8>,
}

impl ThreadLister {
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
        decode_block(model, block, &mut self.text, file, &mut |text| {
            note_lines(text, false);
            Ok(())
        })?;
        note_lines(&mut self.text, true);
        Ok(self.threads.take())
    }
}
