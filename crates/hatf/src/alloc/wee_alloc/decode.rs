//! Container → text for wee_alloc traces, whole or a range of records.

use std::io::{BufWriter, Read, Write};
use std::ops::Range;

use metatf::container::{Block, ContainerHeader, PROPERTY_LAYOUT};

use super::records::{Record, RecordModel};
use super::{render, Kinds, WeeLine, FORMAT, K_ALLOC, K_FREE, K_VERBATIM, LAYOUT, MIXED, PLAIN};
use super::{K_VERBATIM_UNTERMINATED, VERBATIM};
use crate::alloc::blocks::{self, container_error, write_error};
use crate::alloc::context_mix;
use crate::alloc::model::{stream, Cursors, State};
use crate::alloc::varint::Cursor;
use crate::format::{DecodeOptions, FormatError};

/// Reads a `wee-alloc` container and writes the trace back; returns the number of lines.
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut reader = blocks::open(input, FORMAT, file)?;
    reader.set_threads(options.threads);
    let mut d = Decoder::new(reader.header(), file)?;
    let mut out = BufWriter::new(output);
    let mut lines = 0u64;
    while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
        d.block(&block, 0..u64::MAX, &mut out)?;
        lines += block.record_count;
    }
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(lines)
}

/// Decodes only records `range` (see [`crate::seek::decode_records`]).
pub fn decode_records(
    input: &mut dyn crate::seek::ReadSeek,
    output: &mut dyn Write,
    options: &DecodeOptions,
    range: Range<u64>,
    note: crate::seek::Note<'_>,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut out = BufWriter::new(output);
    let mut d: Option<Decoder<'_>> = None;
    let written = crate::seek::decode_records(
        input,
        &[FORMAT],
        file,
        range.start,
        range.end,
        note,
        &mut |header| independent(header, file),
        &mut |header, block, keep| {
            if d.is_none() {
                d = Some(Decoder::new(header, file)?);
            }
            match d.as_mut() {
                Some(d) => d.block(block, keep, &mut out),
                None => Ok(()),
            }
        },
    )?;
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(written)
}

/// True when each block of the file decodes on its own (always for [`LAYOUT`]).
fn independent(header: &ContainerHeader, file: &str) -> Result<bool, FormatError> {
    if header.property(PROPERTY_LAYOUT) == Some(LAYOUT) {
        return Ok(true);
    }
    blocks::independent_blocks(header, file)
}

/// The model, reset at each block of files whose blocks are independent.
struct Decoder<'f> {
    file: &'f str,
    independent: bool,
    /// The file has the record-stream layout [`LAYOUT`] (else the shared allocation model).
    records: bool,
    state: State,
    text: Vec<u8>,
}

impl<'f> Decoder<'f> {
    fn new(header: &ContainerHeader, file: &'f str) -> Result<Self, FormatError> {
        Ok(Decoder {
            file,
            independent: independent(header, file)?,
            records: header.property(PROPERTY_LAYOUT) == Some(LAYOUT),
            state: State::new(),
            text: Vec::new(),
        })
    }

    /// Decodes every record of `block`, writing the text of those numbered `keep` (counted from
    /// the block's first record) to `out`.
    fn block(
        &mut self,
        block: &Block,
        keep: Range<u64>,
        out: &mut dyn Write,
    ) -> Result<(), FormatError> {
        if self.records {
            return self.record_block(block, keep, out);
        }
        if self.independent {
            self.state = State::for_block();
        }
        let file = self.file;
        let at = |rec: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {rec}", block.index),
            message: msg,
        };
        let model: [&[u8]; stream::COUNT] =
            std::array::from_fn(|i| blocks::section(block, i as u8));
        let mut c = Cursors::new(model);
        let mut verbatim = Cursor::new(blocks::section(block, VERBATIM), "verbatim");
        let text = &mut self.text;
        let mut k = 0u64;
        while let Some(kind) = c.next_kind() {
            let rec = block.first_record + k;
            let kind = kind.map_err(|m| at(rec, m))?;
            let r = self
                .state
                .decode(&Kinds, kind, &mut c)
                .map_err(|m| at(rec, m))?;
            let mark = text.len();
            match kind {
                K_ALLOC => render(WeeLine::Alloc(r.size), text),
                K_FREE => render(WeeLine::Free(r.addr.wrapping_sub(1)), text),
                K_VERBATIM | K_VERBATIM_UNTERMINATED => {
                    let n = verbatim.u64().map_err(|m| at(rec, m))?;
                    let n =
                        usize::try_from(n).map_err(|_| at(rec, "verbatim line too long".into()))?;
                    text.extend_from_slice(verbatim.take(n).map_err(|m| at(rec, m))?);
                    if kind == K_VERBATIM {
                        text.push(b'\n');
                    }
                }
                k => return Err(at(rec, format!("unknown record kind {k}"))),
            }
            if !keep.contains(&k) {
                // Decoded for the model's sake only.
                text.truncate(mark);
            }
            k += 1;
            if text.len() >= 1 << 20 {
                out.write_all(text).map_err(|e| write_error(file, e))?;
                text.clear();
            }
        }
        if k != block.record_count {
            return Err(at(
                block.first_record + k,
                format!(
                    "the block holds {k} records, its header says {}",
                    block.record_count
                ),
            ));
        }
        out.write_all(text).map_err(|e| write_error(file, e))?;
        text.clear();
        Ok(())
    }
}

impl Decoder<'_> {
    /// [`Decoder::block`] for the record-stream layout: a fresh [`RecordModel`] per block.
    fn record_block(
        &mut self,
        block: &Block,
        keep: Range<u64>,
        out: &mut dyn Write,
    ) -> Result<(), FormatError> {
        let file = self.file;
        let at = |rec: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {rec}", block.index),
            message: msg,
        };
        let mixed = blocks::section(block, MIXED);
        let stream = if mixed.is_empty() {
            blocks::section(block, PLAIN).to_vec()
        } else {
            context_mix::decompress(mixed).map_err(|m| at(block.first_record, m))?
        };
        let mut model = RecordModel::new();
        let mut c = Cursor::new(&stream, "records");
        let text = &mut self.text;
        let mut k = 0u64;
        while !c.is_empty() {
            let rec = block.first_record + k;
            let record = model.decode(&mut c).map_err(|m| at(rec, m))?;
            if keep.contains(&k) {
                match record {
                    Record::Alloc(size) => render(WeeLine::Alloc(size), text),
                    Record::Free(i) => render(WeeLine::Free(i), text),
                    Record::Verbatim(bytes, terminated) => {
                        text.extend_from_slice(bytes);
                        if terminated {
                            text.push(b'\n');
                        }
                    }
                }
            }
            k += 1;
            if text.len() >= 1 << 20 {
                out.write_all(text).map_err(|e| write_error(file, e))?;
                text.clear();
            }
        }
        if k != block.record_count {
            return Err(at(
                block.first_record + k,
                format!(
                    "the block holds {k} records, its header says {}",
                    block.record_count
                ),
            ));
        }
        out.write_all(text).map_err(|e| write_error(file, e))?;
        text.clear();
        Ok(())
    }
}
