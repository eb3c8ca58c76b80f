//! Container → text for wee_alloc traces, whole or a range of records.

use std::io::{BufWriter, Read, Write};
use std::ops::Range;

use metatf::container::{Block, ContainerHeader, PROPERTY_LAYOUT};

use super::records::{Record, RecordModel};
use super::structured::Structured;
use super::{render, Kinds, WeeLine, FORMAT, K_ALLOC, K_FREE, K_VERBATIM, LAYOUT, MIXED, PLAIN};
use super::{BLOCK_RECORDS, LAYOUT_CM1, LAYOUT_CM2, MIXED_CM3, STRUCTURED};
use super::{K_VERBATIM_UNTERMINATED, VERBATIM};
use crate::alloc::bit_coder::BitDecoder;
use crate::alloc::blocks::{self, container_error, write_error};
use crate::alloc::context_mix;
use crate::alloc::model::{stream, Cursors, Layout as ModelLayout, State};
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

/// The record-stream layouts: how a block's records are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `wee-alloc-cm-1`: the record stream through version 1 of the mixer, section 0.
    Cm1,
    /// `wee-alloc-cm-2`: the record stream through version 2 of the mixer, section 0.
    Cm2,
    /// `wee-alloc-cm-3`: the structured coding in section 0, or the record stream through
    /// version 2 of the mixer in section 2.
    Cm3,
}

/// The record-stream layout of a file, `None` for the older shared-model layouts.
fn record_layout(header: &ContainerHeader) -> Option<Layout> {
    match header.property(PROPERTY_LAYOUT) {
        Some(LAYOUT) => Some(Layout::Cm3),
        Some(LAYOUT_CM2) => Some(Layout::Cm2),
        Some(LAYOUT_CM1) => Some(Layout::Cm1),
        _ => None,
    }
}

/// How the shared allocation model runs over the file's blocks; the record-stream layouts have
/// no shared model, and each of their blocks decodes on its own.
fn model_layout(header: &ContainerHeader, file: &str) -> Result<ModelLayout, FormatError> {
    if record_layout(header).is_some() {
        return Ok(ModelLayout::Fresh);
    }
    match blocks::model_layout(header, file)? {
        // wee_alloc files moved to their own record streams before shapes existed.
        ModelLayout::Shaped => Err(FormatError {
            file: file.to_string(),
            position: String::new(),
            message: format!("layout `{}` is not a wee_alloc layout", blocks::LAYOUT),
        }),
        layout => Ok(layout),
    }
}

/// True when each block of the file decodes on its own (always for the record-stream layouts).
fn independent(header: &ContainerHeader, file: &str) -> Result<bool, FormatError> {
    model_layout(header, file).map(ModelLayout::independent)
}

/// The model, reset at each block of files whose blocks are independent.
struct Decoder<'f> {
    file: &'f str,
    model: ModelLayout,
    /// The file's record-stream layout (`None`: the shared allocation model).
    records: Option<Layout>,
    state: State,
    text: Vec<u8>,
}

impl<'f> Decoder<'f> {
    fn new(header: &ContainerHeader, file: &'f str) -> Result<Self, FormatError> {
        let model = model_layout(header, file)?;
        Ok(Decoder {
            file,
            model,
            records: record_layout(header),
            state: State::fresh(model),
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
        if let Some(layout) = self.records {
            return self.record_block(block, keep, out, layout);
        }
        if self.model.independent() {
            self.state = State::fresh(self.model);
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
        while let Some(kind) = c.next_kind(&Kinds) {
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
            spill(text, out, file)?;
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
    /// [`Decoder::block`] for the record-stream layouts: a fresh model per block.
    fn record_block(
        &mut self,
        block: &Block,
        keep: Range<u64>,
        out: &mut dyn Write,
        layout: Layout,
    ) -> Result<(), FormatError> {
        let file = self.file;
        let at = |rec: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {rec}", block.index),
            message: msg,
        };
        let mixed = match layout {
            Layout::Cm3 => {
                let bits = blocks::section(block, STRUCTURED);
                if !bits.is_empty() || block.sections.iter().any(|s| s.number == STRUCTURED) {
                    return self.structured_block(block, bits, keep, out);
                }
                blocks::section(block, MIXED_CM3)
            }
            Layout::Cm1 | Layout::Cm2 => blocks::section(block, MIXED),
        };
        let stream = if mixed.is_empty() {
            blocks::section(block, PLAIN).to_vec()
        } else if layout == Layout::Cm1 {
            context_mix::decompress(mixed).map_err(|m| at(block.first_record, m))?
        } else {
            context_mix::v2::decompress(mixed).map_err(|m| at(block.first_record, m))?
        };
        let mut model = RecordModel::new();
        let mut c = Cursor::new(&stream, "records");
        let text = &mut self.text;
        let mut k = 0u64;
        while !c.is_empty() {
            let rec = block.first_record + k;
            let record = model.decode(&mut c).map_err(|m| at(rec, m))?;
            if keep.contains(&k) {
                render_record(record, text);
            }
            k += 1;
            spill(text, out, file)?;
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
    /// [`Decoder::record_block`] for a block stored in the structured coding: the block
    /// header's record count says how many records to decode (the coding has no end of its
    /// own), at most the layout's block size.
    fn structured_block(
        &mut self,
        block: &Block,
        bits: &[u8],
        keep: Range<u64>,
        out: &mut dyn Write,
    ) -> Result<(), FormatError> {
        let file = self.file;
        let at = |rec: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {rec}", block.index),
            message: msg,
        };
        if block.record_count > BLOCK_RECORDS {
            return Err(at(
                block.first_record,
                format!(
                    "the block claims {} records; this layout writes at most {BLOCK_RECORDS}",
                    block.record_count
                ),
            ));
        }
        let mut model = Structured::default();
        let mut d = BitDecoder::new(bits);
        let mut verbatim = Vec::new();
        let text = &mut self.text;
        for k in 0..block.record_count {
            let rec = block.first_record + k;
            let record = model
                .decode(&mut d, &mut verbatim)
                .map_err(|m| at(rec, m))?;
            if keep.contains(&k) {
                // The structured decoder leaves a verbatim line's bytes in `verbatim`.
                render_record(
                    match record {
                        Record::Verbatim(_, terminated) => Record::Verbatim(&verbatim, terminated),
                        other => other,
                    },
                    text,
                );
            }
            spill(text, out, file)?;
        }
        if d.overrun() > 0 {
            return Err(at(
                block.first_record + block.record_count,
                format!(
                    "the block's {} records need more than its {} coded bytes",
                    block.record_count,
                    bits.len()
                ),
            ));
        }
        out.write_all(text).map_err(|e| write_error(file, e))?;
        text.clear();
        Ok(())
    }
}

/// Appends the line of `r` to `text`.
fn render_record(r: Record<'_>, text: &mut Vec<u8>) {
    match r {
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

/// Writes `text` out once it holds 1 MiB, so a block's text is never held whole.
fn spill(text: &mut Vec<u8>, out: &mut dyn Write, file: &str) -> Result<(), FormatError> {
    if text.len() >= 1 << 20 {
        out.write_all(text).map_err(|e| write_error(file, e))?;
        text.clear();
    }
    Ok(())
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

    fn encode(text: &[u8]) -> Vec<u8> {
        let mut bin = Vec::new();
        WeeAlloc
            .encode(&mut &text[..], &mut bin, &EncodeOptions::default())
            .unwrap();
        bin
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
        assert_eq!(decode(&hex(CM1_FILE)).unwrap(), synthetic());
    }

    /// [`synthetic`] as hatf b7fc9df wrote it (layout `wee-alloc-cm-2`, version 2 of the mixer).
    const CM2_FILE: &str = concat!(
        "7f4d54460200020235097765652d616c6c6f630208656e636f64696e67046175746f066c61796f75740e",
        "7765652d616c6c6f632d636d2d32c7054a7c06f200681f554d5446420000370100010026781f3fb8aec7",
        "f7fa3fa5ca5b6e5f8976765d812f1fdeaa061d9b4927f3b1ebd334bf4454f5c09fdc9c65587469004d54",
        "4649014237c7d930657c00000000000000b65bdd9e4d544645",
    );

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn files_of_the_second_mixer_still_decode() {
        assert_eq!(decode(&hex(CM2_FILE)).unwrap(), synthetic());
    }

    #[test]
    fn a_short_trace_is_a_compact_file_of_the_structured_coding() {
        let text = synthetic();
        let bin = encode(&text);
        assert!(metatf::container::compact::is_compact(&bin));
        // Header code 1 (wee-alloc, this layout), one section 0 of width 1.
        assert_eq!(bin[5], 0xc1);
        let full = metatf::container::compact::expand(&bin).unwrap();
        let layout = format!("\x0e{LAYOUT}");
        assert!(full.windows(layout.len()).any(|w| w == layout.as_bytes()));
        assert!(bin.len() * 2 < hex(CM2_FILE).len(), "{} bytes", bin.len());
        assert_eq!(decode(&bin).unwrap(), text);
        // The full form it encodes reads the same.
        assert_eq!(decode(&full).unwrap(), text);
    }

    #[test]
    fn a_block_claiming_more_records_than_its_bits_hold_is_an_error() {
        let mut bin = encode(&synthetic());
        // Claim 127 records instead of 55 and fix the checksum: the coded bits run out.
        assert_eq!(bin[6], 55);
        bin[6] = 127;
        let end = bin.len() - 4;
        let mut crc = flate2::Crc::new();
        crc.update(&bin[..end]);
        let c = crc.sum();
        bin[end..].copy_from_slice(&c.to_le_bytes());
        let e = decode(&bin).unwrap_err().to_string();
        // Either the bits name something impossible or they run out.
        assert!(e.contains("block 0 record"), "{e}");
    }
}
