//! `hatf decode --records A..B` for `jvm` and `jvm-zip`: only the blocks holding the records
//! are read (through the container's index, [`crate::seek`]).
//!
//! A record is a line of the trace text — a modelled record or a line kept verbatim — as the
//! blocks' record counts count them, numbered from 0; for `jvm-zip` the lines of the member
//! `trace` (the archive's own block holds none). The output is those lines exactly as they are
//! in the text, line ends included, not an archive.

use std::io::Write;
use std::ops::Range;

use super::decode::decode_block;
use super::model::Model;
use super::{check_layout, zip};
use crate::format::{DecodeOptions, FormatError};
use crate::seek::{self, Note, ReadSeek};
use crate::shared::container::blocks::write_error;

/// Writes records `range` (clipped to the trace) of a `format` file (`jvm` or `jvm-zip`) to
/// `output`; returns how many were written. Each block starts a fresh model, so only the blocks
/// where the range is are read.
pub fn decode_records(
    format: &str,
    input: &mut dyn ReadSeek,
    output: &mut dyn Write,
    options: &DecodeOptions,
    range: Range<u64>,
    note: Note<'_>,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut text = Vec::with_capacity(1 << 20);
    let mut write = |text: &mut Vec<u8>| {
        output.write_all(text).map_err(|e| write_error(file, e))?;
        text.clear();
        Ok(())
    };
    let written = seek::decode_records(
        input,
        &[format],
        file,
        range.start,
        range.end,
        note,
        &mut |header| {
            if zip::is_stored_as_is(header) {
                let why = header.property("deflate-reason").unwrap_or("unknown");
                return Err(FormatError {
                    file: file.to_string(),
                    position: String::new(),
                    message: format!(
                        "this file keeps the archive's bytes as they are (its member `{}` could \
                         not be taken apart: {why}), so it has no lines to select; decode the \
                         whole file, unzip it, and select the lines from the text",
                        zip::MEMBER
                    ),
                });
            }
            check_layout(header, file)
        },
        &mut |_, block, keep| {
            // `jvm-zip`'s first block holds the archive's bytes, no lines.
            if block.record_count == 0 {
                return Ok(());
            }
            decode_block(&mut Model::new(), block, keep, &mut text, file, &mut write)
        },
    )?;
    write(&mut text)?;
    output.flush().map_err(|e| write_error(file, e))?;
    Ok(written)
}
