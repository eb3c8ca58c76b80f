//! `hatf decode --records A..B` for wee_alloc files: only the blocks holding the records are
//! read (through the container's index, [`crate::seek`]).

use std::io::{BufWriter, Write};
use std::ops::Range;

use super::decode::{check_layout, Decoder};
use super::FORMAT;
use crate::format::{DecodeOptions, FormatError};
use crate::shared::container::blocks::write_error;

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
        &mut |header| check_layout(header, file),
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
