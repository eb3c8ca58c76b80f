//! Container → text for wee_alloc traces, whole or a range of records.

use std::io::{BufWriter, Read, Write};
use std::ops::Range;

use metatf::container::{Block, ContainerHeader, PROPERTY_LAYOUT};

use super::records::{Record, RecordModel};
use super::LAYOUT_CM1;
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

/// Which context mixer a record-stream file used: `Some(true)` for version 2 ([`LAYOUT`]),
/// `Some(false)` for version 1 ([`LAYOUT_CM1`]), `None` for the older shared-model layouts.
fn mixer_v2(header: &ContainerHeader) -> Option<bool> {
    match header.property(PROPERTY_LAYOUT) {
        Some(LAYOUT) => Some(true),
        Some(LAYOUT_CM1) => Some(false),
        _ => None,
    }
}

/// True when each block of the file decodes on its own (always for the record-stream layouts).
fn independent(header: &ContainerHeader, file: &str) -> Result<bool, FormatError> {
    if mixer_v2(header).is_some() {
        return Ok(true);
    }
    blocks::independent_blocks(header, file)
}

/// The model, reset at each block of files whose blocks are independent.
struct Decoder<'f> {
    file: &'f str,
    independent: bool,
    /// The file has a record-stream layout: `Some(v2)`, true when its mixer is version 2
    /// (`None`: the shared allocation model).
    records: Option<bool>,
    state: State,
    text: Vec<u8>,
}

impl<'f> Decoder<'f> {
    fn new(header: &ContainerHeader, file: &'f str) -> Result<Self, FormatError> {
        Ok(Decoder {
            file,
            independent: independent(header, file)?,
            records: mixer_v2(header),
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
        if let Some(v2) = self.records {
            return self.record_block(block, keep, out, v2);
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
    /// [`Decoder::block`] for the record-stream layouts: a fresh [`RecordModel`] per block;
    /// `v2` picks the context mixer's version.
    fn record_block(
        &mut self,
        block: &Block,
        keep: Range<u64>,
        out: &mut dyn Write,
        v2: bool,
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
        } else if v2 {
            context_mix::v2::decompress(mixed).map_err(|m| at(block.first_record, m))?
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

#[cfg(test)]
mod tests {
    use super::super::{WeeAlloc, LAYOUT};
    use crate::format::{DecodeOptions, EncodeOptions, TraceFormat};

    /// 40 lines of `Alloc(8·k),` with a `Free` of the allocation before last after every
    /// third, then `Free(0),` and `Alloc(1000000),`.
    fn synthetic() -> Vec<u8> {
        let (mut text, mut allocs) = (String::new(), 0);
        for i in 0..40 {
            text += &format!("Alloc({}),\n", 8 * (i % 5 + 1));
            allocs += 1;
            if i % 3 == 2 {
                text += &format!("Free({}),\n", allocs - 2);
            }
        }
        text += "Free(0),\nAlloc(1000000),\n";
        text.into_bytes()
    }

    fn decode(bin: &[u8]) -> Result<Vec<u8>, crate::format::FormatError> {
        let mut out = Vec::new();
        WeeAlloc.decode(&mut &bin[..], &mut out, &DecodeOptions::default())?;
        Ok(out)
    }

    /// [`synthetic`] as hatf 594839e wrote it (layout `wee-alloc-cm-1`, version 1 of the mixer).
    const CM1_FILE: &str = concat!(
        "7f4d54460200020235097765652d616c6c6f630208656e636f64696e67046175746f066c61796f75740e",
        "7765652d616c6c6f632d636d2d31c7054a7c06f29d72f7644d54464200003701000100274272a7bca36a",
        "fba63fb011db7c79d1d6c50b6849ea0c78f9a4a48fb044d4dcea310750866dca88a4ec112f8f69df744d",
        "544649014237c7d930657d00000000000000285b77524d544645",
    );

    #[test]
    fn files_of_the_first_mixer_still_decode() {
        let bin: Vec<u8> = (0..CM1_FILE.len() / 2)
            .map(|i| u8::from_str_radix(&CM1_FILE[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        assert_eq!(decode(&bin).unwrap(), synthetic());
    }

    #[test]
    fn new_files_use_the_second_mixer_and_round_trip() {
        let text = synthetic();
        let mut bin = Vec::new();
        WeeAlloc
            .encode(&mut &text[..], &mut bin, &EncodeOptions::default())
            .unwrap();
        let layout = format!("\x0e{LAYOUT}");
        assert!(bin.windows(layout.len()).any(|w| w == layout.as_bytes()));
        assert_eq!(decode(&bin).unwrap(), text);
    }
}
