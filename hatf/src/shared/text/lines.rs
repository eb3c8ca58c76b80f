//! What the line parsers of the text formats say about a line that does not parse: its
//! column and why, and the error naming its file, line and text.

use crate::format::FormatError;

/// Why a line did not parse: 1-based byte column and what was expected. The line parsers of
/// every text format return it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// 1-based byte column.
    pub column: usize,
    /// What was expected.
    pub message: String,
}

/// The line of a chunk that did not parse, where a chunked encoder stops: its 0-based number
/// in the chunk, its start and length (without the `\n`) in the chunk, and why.
#[derive(Debug, PartialEq, Eq)]
pub struct ChunkLineError {
    /// 0-based number of the line in its chunk.
    pub line: u64,
    /// Start of the line in the chunk.
    pub at: usize,
    /// Length of the line, without its `\n`.
    pub len: usize,
    /// Why it did not parse.
    pub error: LineError,
}

impl ChunkLineError {
    /// Line `line` of the chunk, at `at` for `len` bytes, did not parse for `error`.
    pub fn new(line: u64, at: usize, len: usize, error: LineError) -> Self {
        ChunkLineError {
            line,
            at,
            len,
            error,
        }
    }

    /// The error naming the line in file `name`, whose chunk `chunk` starts at line
    /// `first_line`, with the hint that `--keep-bad-lines` would keep it.
    pub fn unless_kept(&self, name: &str, first_line: u64, chunk: &[u8]) -> FormatError {
        bad_line_unless_kept(
            name,
            first_line + self.line,
            self.error.column,
            &self.error.message,
            &chunk[self.at..self.at + self.len],
        )
    }
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
        message: format!("{message}: `{}`", echo(text)),
    }
}

/// Most bytes of a line an error message repeats.
const ECHO_BYTES: usize = 200;

/// A line as an error message repeats it: whole up to [`ECHO_BYTES`], else its start and its
/// length (a long line must not make a long message).
pub fn echo(text: &[u8]) -> String {
    if text.len() <= ECHO_BYTES {
        return String::from_utf8_lossy(text).into_owned();
    }
    format!(
        "{}… ({} bytes)",
        String::from_utf8_lossy(&text[..ECHO_BYTES]),
        text.len()
    )
}
