//! Text trace ↔ blocks of model streams: line ends, verbatim lines, block boundaries.

use std::io::{Read, Write};

use metatf::container::ContainerReader;

use super::line::{parse, Kind, Parsed};
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
    let flush = |streams: &mut Streams, n: u64, out: &mut BlockWriter<W>| {
        let s: Vec<(u8, &[u8])> = (0..COUNT)
            .map(|i| (i as u8, streams.bytes[i].as_slice()))
            .collect();
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
            flush(&mut streams, in_block, out)?;
            in_block = 0;
        }
        Ok(())
    })?;
    if in_block > 0 {
        flush(&mut streams, in_block, out)?;
    }
    report.records = lines;
    Ok(report)
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
        let at = |rec: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {rec}", block.index),
            message: msg,
        };
        let mut s = Readers::new(|k| blocks::section(&block, k));
        let mut rec = block.first_record;
        while !s.done() {
            let b = s.byte(KIND).map_err(|m| at(rec, m))?;
            let base = b & !(CRLF | UNTERMINATED);
            if base == VERBATIM_LINE {
                text.extend_from_slice(s.text(VERBATIM).map_err(|m| at(rec, m))?);
            } else {
                let kind = Kind::from_code(base)
                    .ok_or_else(|| at(rec, format!("unknown kind byte {b:#04x}")))?;
                model
                    .decode(kind, &mut s, &mut text)
                    .map_err(|m| at(rec, m))?;
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
                out.write_all(&text).map_err(|e| write_error(file, e))?;
                text.clear();
            }
        }
        let left = s.leftovers();
        if !left.is_empty() {
            return Err(at(
                rec,
                format!("bytes left over in streams {}", left.join(", ")),
            ));
        }
    }
    out.write_all(&text).map_err(|e| write_error(file, e))?;
    Ok(lines)
}
