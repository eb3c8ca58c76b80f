//! Blocks of model streams → text trace, and the thread ids of a block read back from its
//! records.

use std::io::{Read, Write};
use std::ops::Range;

use metatf::container::{Block, ContainerReader};

use super::encode::BlockThreads;
use super::line::{parse, Kind, Parsed};
use super::model::Model;
use super::streams::{Readers, CRLF, KIND, UNTERMINATED, VERBATIM, VERBATIM_LINE};
use crate::format::FormatError;
use crate::shared::container::blocks::{self, container_error, write_error};

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
    let at = |rec: u64, msg: String| blocks::record_error(file, block, rec, msg);
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
