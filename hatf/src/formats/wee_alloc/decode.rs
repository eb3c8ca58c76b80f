//! Container → text for wee_alloc traces, whole or a range of records.

use std::io::{BufWriter, Read, Write};
use std::ops::Range;

use metatf::container::{Block, ContainerHeader};

use super::line::{render, WeeLine};
use super::model::{Record, RecordModel};
use super::structured::Structured;
use super::{BLOCK_RECORDS, FORMAT, LAYOUT, MIXED, PLAIN, STRUCTURED, TABLE_BITS};
use crate::format::{DecodeOptions, FormatError};
use crate::shared::coding::bit_coder::BitDecoder;
use crate::shared::coding::context_mix;
use crate::shared::container::blocks::{self, container_error, write_error};
use metatf::varint::Cursor;

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

/// Checks that `header`'s file has the layout the encoder writes ([`LAYOUT`]).
pub(super) fn check_layout(header: &ContainerHeader, file: &str) -> Result<(), FormatError> {
    crate::shared::container::layout::require(header, file, LAYOUT, "")
}

/// Decodes blocks; each block decodes on its own.
pub(super) struct Decoder<'f> {
    file: &'f str,
    text: Vec<u8>,
}

impl<'f> Decoder<'f> {
    pub(super) fn new(header: &ContainerHeader, file: &'f str) -> Result<Self, FormatError> {
        check_layout(header, file)?;
        Ok(Decoder {
            file,
            text: Vec::new(),
        })
    }

    /// Decodes every record of `block`, writing the text of those numbered `keep` (counted from
    /// the block's first record) to `out`.
    pub(super) fn block(
        &mut self,
        block: &Block,
        keep: Range<u64>,
        out: &mut dyn Write,
    ) -> Result<(), FormatError> {
        let file = self.file;
        let at = |rec: u64, msg: String| blocks::record_error(file, block, rec, msg);
        let bits = blocks::section(block, STRUCTURED);
        if !bits.is_empty() || block.sections.iter().any(|s| s.number == STRUCTURED) {
            return self.structured_block(block, bits, keep, out);
        }
        let mixed = blocks::section(block, MIXED);
        let stream = if mixed.is_empty() {
            blocks::section(block, PLAIN).to_vec()
        } else {
            context_mix::v2::decompress_with_tables(mixed, TABLE_BITS)
                .map_err(|m| at(block.first_record, m))?
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
        blocks::check_record_count(file, block, k)?;
        out.write_all(text).map_err(|e| write_error(file, e))?;
        text.clear();
        Ok(())
    }
}

impl Decoder<'_> {
    /// [`Decoder::block`] for a block stored in the structured coding: the block
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
        let at = |rec: u64, msg: String| blocks::record_error(file, block, rec, msg);
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

    #[test]
    fn a_short_trace_is_a_compact_file_of_the_structured_coding() {
        let text = synthetic();
        let bin = encode(&text);
        assert!(metatf::container::compact::is_compact(&bin));
        // Header code 2 (wee-alloc, this layout), one section 0 of width 1.
        assert_eq!(bin[5], 0xc2);
        let full = metatf::container::compact::expand(&bin).unwrap();
        let layout = format!("\x0e{LAYOUT}");
        assert!(full.windows(layout.len()).any(|w| w == layout.as_bytes()));
        assert!(bin.len() * 8 < text.len(), "{} bytes", bin.len());
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
