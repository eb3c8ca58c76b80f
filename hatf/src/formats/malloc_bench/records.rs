//! `decode --records A..B` for malloc-bench files: the protobuf of those records.
//!
//! A range of records of a `.trace.gz` is not a `.trace.gz` (its deflate stream and CRC cover
//! the whole text), so what comes out is the uncompressed protobuf of the records asked for:
//! record `k` is the `k`-th top-level field of the `Tracefile` message (a `TraceLine`, or
//! `max_simultaneous_allocs`), counted as the encoder counts them, and bytes at the end that do
//! not form a field are one last record. Top-level fields concatenate into a valid message, so
//! the output is itself a `Tracefile` a protobuf reader takes (`gzip` it to get a smaller
//! `.trace.gz`). The model stream is one compressed unit, so the whole file is read and decoded,
//! but only the deflate reconstruction is skipped.

use std::io::Write;

use metatf::container::PROPERTY_LAYOUT;

#[cfg(test)]
use super::model;
use super::{decode, proto};
use crate::format::{DecodeOptions, FormatError};
use crate::shared::container::blocks::{self, container_error, write_error};

/// The byte ranges of the records of `text`, in order.
pub fn record_bounds(text: &[u8]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let start = at;
        at = match proto::field_len(&text[at..]) {
            Some(n) => at + n,
            None => text.len(),
        };
        Some(start..at)
    })
}

/// Writes the protobuf of records `first..end` (clipped to the trace); returns how many.
pub fn decode_records(
    format: &str,
    input: &mut dyn crate::seek::ReadSeek,
    output: &mut dyn Write,
    options: &DecodeOptions,
    first: u64,
    end: u64,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let fail = |position: String, message: String| FormatError {
        file: file.to_string(),
        position,
        message,
    };
    let mut r = blocks::open(input, format, file)?;
    if !decode::is_split(r.header().property(PROPERTY_LAYOUT)) {
        let why = r.header().property("deflate-reason").unwrap_or("unknown");
        return Err(fail(
            String::new(),
            format!(
                "this file keeps the .trace.gz's bytes as they are ({why}), so it has no \
                 records to select; decode the whole file and read the protobuf inside"
            ),
        ));
    }
    let mut written = 0u64;
    let mut next = 0u64;
    while let Some(b) = r.next_block().map_err(|e| container_error(file, e))? {
        let bad = |m: String| fail(format!("block {}", b.index), m);
        let text = decode::protobuf(&b, options.threads).map_err(bad)?;
        for range in record_bounds(&text) {
            if next >= first && next < end {
                output
                    .write_all(&text[range])
                    .map_err(|e| write_error(file, e))?;
                written += 1;
            }
            next += 1;
            if next >= end {
                break;
            }
        }
        if next != b.first_record + b.record_count && next < end {
            return Err(bad(format!(
                "the protobuf holds {} records, the block says {}",
                next - b.first_record,
                b.record_count
            )));
        }
    }
    output.flush().map_err(|e| write_error(file, e))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_the_top_level_fields_and_a_broken_tail() {
        // Two TraceLines, max_simultaneous_allocs, then bytes that are no field (wire type 7).
        let text = [
            0x0a, 0x04, 0x0a, 0x02, 0x08, 0x01, // lines { malloc { result_id: 1 } }
            0x0a, 0x04, 0x12, 0x02, 0x08, 0x01, // lines { free { input_id: 1 } }
            0x10, 0x05, // max_simultaneous_allocs: 5
            0x0f, 0x01, // broken
        ];
        let bounds: Vec<_> = record_bounds(&text).collect();
        assert_eq!(bounds, vec![0..6, 6..12, 12..14, 14..16]);
        // The model counts records the same way.
        let mut stream = Vec::new();
        assert_eq!(model::encode(&text, &mut stream), bounds.len() as u64);
    }
}
