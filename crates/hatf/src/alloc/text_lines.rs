//! Reading a text trace line by line for the event readers, with positions for errors.

use std::io::{BufRead, BufReader, Read};

use crate::format::FormatError;

/// Calls `visit` with each line of `input` exactly as read: its 1-based number and its bytes,
/// including the final `\n` when there is one (only the last line can lack it). Stops at the
/// first error `visit` returns; a failed read is reported at the line it was reading. Returns
/// the number of lines.
pub fn for_each_raw_line(
    input: &mut dyn Read,
    name: &str,
    mut visit: impl FnMut(u64, &[u8]) -> Result<(), FormatError>,
) -> Result<u64, FormatError> {
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| FormatError {
                file: name.to_string(),
                position: format!("{}:1", line_no + 1),
                message: format!("cannot read the input: {e}"),
            })?;
        if n == 0 {
            return Ok(line_no);
        }
        line_no += 1;
        visit(line_no, &buf)?;
    }
}

/// Calls `visit` with each line of `input`: its 1-based number and its bytes without the final
/// `\n` (or `\r\n`). Stops at the first error `visit` returns.
pub fn for_each_line(
    input: &mut dyn Read,
    name: &str,
    mut visit: impl FnMut(u64, &[u8]) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    for_each_raw_line(input, name, |line_no, raw| {
        let text = raw.strip_suffix(b"\n").unwrap_or(raw);
        visit(line_no, text.strip_suffix(b"\r").unwrap_or(text))
    })
    .map(|_| ())
}

/// The error for a line that does not parse, in an encoder that could keep it verbatim.
pub fn bad_line_unless_kept(
    name: &str,
    line_no: u64,
    column: impl std::fmt::Display,
    message: &str,
    text: &[u8],
) -> FormatError {
    let mut error = bad_line(name, line_no, column, message, text);
    error
        .message
        .push_str(" (use --keep-bad-lines to store such lines verbatim)");
    error
}

/// The error for a line that does not parse: its position and the line itself.
pub fn bad_line(
    name: &str,
    line_no: u64,
    column: impl std::fmt::Display,
    message: &str,
    text: &[u8],
) -> FormatError {
    FormatError {
        file: name.to_string(),
        position: format!("{line_no}:{column}"),
        message: format!("{message}: `{}`", String::from_utf8_lossy(text)),
    }
}
