//! Reading a text trace line by line for the event readers, with positions for errors.

use std::io::{BufRead, BufReader, Read};

use crate::format::FormatError;

/// Calls `visit` with each line of `input`: its 1-based number and its bytes without the final
/// `\n` (or `\r\n`). Stops at the first error `visit` returns; a failed read is reported at the
/// line it was reading.
pub fn for_each_line(
    input: &mut dyn Read,
    name: &str,
    mut visit: impl FnMut(u64, &[u8]) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
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
            return Ok(());
        }
        line_no += 1;
        let mut text = &buf[..];
        if let Some(t) = text.strip_suffix(b"\n") {
            text = t;
        }
        if let Some(t) = text.strip_suffix(b"\r") {
            text = t;
        }
        visit(line_no, text)?;
    }
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
