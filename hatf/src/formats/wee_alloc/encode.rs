//! The `wee-alloc` encoding (layout [`LAYOUT`]): each line becomes a record of the
//! [`RecordModel`], and each block is stored as its record stream through the context mixer or
//! as the structured bit coding of its records, whichever is smaller.

use std::io::{Read, Write};

use super::line::{parse, render, WeeLine};
use super::model::{Record, RecordModel};
use super::structured::Structured;
use super::{
    BLOCK_RECORDS, DTD, FORMAT, LAYOUT, MIXED, PLAIN, STRUCTURED, STRUCTURED_MAX_STREAM, TABLE_BITS,
};
use crate::format::{Compression, EncodeOptions, EncodeReport, FormatError};
use crate::shared::coding::bit_coder::BitEncoder;
use crate::shared::coding::context_mix;
use crate::shared::container::blocks::{self, BlockWriter};
use crate::shared::text::line_reader::for_each_raw_line;
use crate::shared::text::lines::bad_line_unless_kept;

/// Reads a wee_alloc trace and writes its `auto` encoding.
pub fn encode(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let header = blocks::auto_header(DTD, FORMAT, LAYOUT, []);
    // With the default compression the stream goes through the context mixer and is
    // stored as is; with another choice the container's codec compresses it.
    let mixed = options.compression == Compression::Zstd;
    let block_options = EncodeOptions {
        compression: if mixed {
            Compression::None
        } else {
            options.compression
        },
        ..options.clone()
    };
    let mut out = BlockWriter::new(output, &header, &block_options)?;
    if mixed {
        // A short trace is one block of one stored section: the compact container form
        // saves the index, trailer and section checksums (docs/FORMAT.md §5).
        out.prefer_compact();
    }
    let mut model = RecordModel::new();
    let mut stream = Vec::new();
    let mut structured = mixed.then(Trial::default);
    let mut records = 0u64;
    let mut report = EncodeReport::default();
    let mut scratch = Vec::new();
    for_each_raw_line(input, file, |line_no, buf| {
        report.records += 1;
        report.input_bytes += buf.len() as u64;
        let terminated = buf.last() == Some(&b'\n');
        let text = if terminated {
            &buf[..buf.len() - 1]
        } else {
            buf
        };
        // A `\r` is not part of the format: parse without it, the re-rendering check keeps it.
        let core = text.strip_suffix(b"\r").unwrap_or(text);
        // The last line, which may lack its `\n`, is parsed too: strict mode refuses it
        // when it does not parse, though a line without `\n` is only ever kept verbatim.
        let rec = match parse(core) {
            Ok(_) if !terminated => None,
            Ok(l) => {
                scratch.clear();
                render(l, &mut scratch);
                (scratch == buf).then_some(match l {
                    WeeLine::Alloc(size) => Record::Alloc(size),
                    WeeLine::Free(i) => Record::Free(i),
                })
            }
            Err((col, m)) => {
                if !options.keep_bad_lines {
                    return Err(bad_line_unless_kept(file, line_no, col, &m, text));
                }
                report.bad_lines += 1;
                None
            }
        };
        let rec = rec.unwrap_or(Record::Verbatim(text, terminated));
        model.encode(rec, &mut stream);
        if let Some(t) = structured.as_mut() {
            t.add(rec, stream.len());
        }
        records += 1;
        if records >= BLOCK_RECORDS {
            flush(
                &mut out,
                &mut stream,
                &mut records,
                mixed,
                structured.take(),
            )?;
            // Each block starts a fresh model: any block decodes on its own.
            model = RecordModel::new();
            structured = mixed.then(Trial::default);
        }
        Ok(())
    })?;
    flush(&mut out, &mut stream, &mut records, mixed, structured)?;
    out.finish()?;
    Ok(report)
}

/// The structured coding of a block, tried beside the record stream while the stream is short.
struct Trial {
    model: Structured,
    coder: BitEncoder,
    /// False once the block is too long for the structured coding to be tried.
    open: bool,
}

impl Default for Trial {
    fn default() -> Self {
        Trial {
            model: Structured::default(),
            coder: BitEncoder::default(),
            open: true,
        }
    }
}

impl Trial {
    fn add(&mut self, r: Record<'_>, stream_len: usize) {
        if self.open {
            self.open =
                stream_len <= STRUCTURED_MAX_STREAM && self.model.encode(r, &mut self.coder);
        }
    }

    /// The coded block, when every record was coded.
    fn finish(self) -> Option<Vec<u8>> {
        self.open.then(|| self.coder.finish())
    }
}

fn flush<W: Write>(
    out: &mut BlockWriter<W>,
    stream: &mut Vec<u8>,
    records: &mut u64,
    mixed: bool,
    structured: Option<Trial>,
) -> Result<(), FormatError> {
    if *records == 0 {
        return Ok(());
    }
    if mixed {
        let packed = context_mix::v2::compress_with_tables(stream, TABLE_BITS);
        match structured.and_then(Trial::finish) {
            Some(bits) if bits.len() <= packed.len() => {
                out.block(*records, &[(STRUCTURED, &bits)])?
            }
            _ => out.block(*records, &[(MIXED, &packed)])?,
        }
    } else {
        out.block(*records, &[(PLAIN, stream)])?;
    }
    stream.clear();
    *records = 0;
    Ok(())
}
