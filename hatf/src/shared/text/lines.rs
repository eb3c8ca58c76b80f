//! Reading a text trace line by line for the event readers, with positions for errors.

use std::io::{BufRead, ErrorKind, Read};

use crate::format::FormatError;

/// Bytes read from the input at a time.
const CHUNK: usize = 1 << 20;

/// Longest line a text trace may have, without its `\n`: 1 MiB. The lines of every text
/// format hatf reads are at most a few hundred bytes, so a longer one is refused at its line
/// number (in strict mode and with `--keep-bad-lines` alike) as soon as this many bytes of it
/// were read: a reader holds at most about twice this much of one line, whatever its length.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What a reader whose errors are `io::Error`s returns for a line longer than
/// [`MAX_LINE_BYTES`] (recognised by [`is_line_too_long`]).
#[derive(Debug)]
struct LineTooLong;

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the line is longer than {MAX_LINE_BYTES} bytes")
    }
}

impl std::error::Error for LineTooLong {}

/// The `io::Error` for a line longer than [`MAX_LINE_BYTES`].
pub fn line_too_long_io() -> std::io::Error {
    std::io::Error::new(ErrorKind::InvalidData, LineTooLong)
}

/// True when `e` is [`line_too_long_io`]'s error.
pub fn is_line_too_long(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<LineTooLong>())
}

/// The error for line `line_no` of `name`, longer than [`MAX_LINE_BYTES`].
pub fn line_too_long(name: &str, line_no: u64) -> FormatError {
    FormatError {
        file: name.to_string(),
        position: format!("{line_no}:1"),
        message: format!(
            "the line is longer than {MAX_LINE_BYTES} bytes, the most a line of a text trace \
             may be (not a text trace of this format?)"
        ),
    }
}

/// Reads one line into `buf` (appended, with its `\n` if it has one), as `read_until` does,
/// but refuses a line longer than [`MAX_LINE_BYTES`] with [`line_too_long_io`]'s error once
/// that many bytes of it were read. Returns the bytes read (0 at the end of the input).
pub fn read_line_bounded(input: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    // The limit plus one byte for the `\n`: a line this long without one is over the limit.
    let most = MAX_LINE_BYTES as u64 + 1;
    let n = input.take(most).read_until(b'\n', buf)?;
    if n as u64 == most && buf.last() != Some(&b'\n') {
        return Err(line_too_long_io());
    }
    Ok(n)
}

/// Calls `visit` with each line of `input` exactly as read: its 1-based number and its bytes,
/// including the final `\n` when there is one (only the last line can lack it). Stops at the
/// first error `visit` returns; a failed read is reported at the line it was reading. Returns
/// the number of lines.
///
/// Lines are handed out as slices of one reused buffer (no copy or allocation per line); the
/// buffer grows only when a single line is longer than it.
pub fn for_each_raw_line(
    input: &mut dyn Read,
    name: &str,
    mut visit: impl FnMut(u64, &[u8]) -> Result<(), FormatError>,
) -> Result<u64, FormatError> {
    let mut buf = vec![0u8; CHUNK];
    // buf[..filled] holds bytes read but not yet handed out, starting at a line start.
    let mut filled = 0usize;
    let mut line_no = 0u64;
    loop {
        if filled == buf.len() {
            // One line fills the whole buffer: make room for the rest of it, up to the limit.
            if filled > MAX_LINE_BYTES {
                return Err(line_too_long(name, line_no + 1));
            }
            buf.resize(buf.len() * 2, 0);
        }
        let n = loop {
            match input.read(&mut buf[filled..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(FormatError {
                        file: name.to_string(),
                        position: format!("{}:1", line_no + 1),
                        message: format!("cannot read the input: {e}"),
                    })
                }
            }
        };
        if n == 0 {
            if filled > MAX_LINE_BYTES {
                return Err(line_too_long(name, line_no + 1));
            }
            if filled > 0 {
                line_no += 1;
                visit(line_no, &buf[..filled])?;
            }
            return Ok(line_no);
        }
        // Only the new bytes can hold a line end the previous search did not see.
        let old = filled;
        filled += n;
        let mut start = 0usize;
        for end in memchr::memchr_iter(b'\n', &buf[old..filled]) {
            let end = old + end + 1;
            if end - start > MAX_LINE_BYTES + 1 {
                return Err(line_too_long(name, line_no + 1));
            }
            line_no += 1;
            visit(line_no, &buf[start..end])?;
            start = end;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        if filled > MAX_LINE_BYTES {
            return Err(line_too_long(name, line_no + 1));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, as pipes do.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn lines_of(input: &[u8], step: usize) -> Vec<(u64, Vec<u8>)> {
        let mut got = Vec::new();
        let n = for_each_raw_line(&mut Trickle(input, step), "t", |no, l| {
            got.push((no, l.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(n as usize, got.len());
        got
    }

    #[test]
    fn lines_split_across_reads_come_out_whole() {
        let mut text = b"a\n\nbc\r\n".to_vec();
        // A line as long as allowed: it spans several reads and a grown buffer.
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES));
        text.extend_from_slice(b"\nlast");
        for step in [1, 3, CHUNK, usize::MAX] {
            let got = lines_of(&text, step);
            assert_eq!(got.len(), 5, "step {step}");
            assert_eq!(got[0], (1, b"a\n".to_vec()));
            assert_eq!(got[1], (2, b"\n".to_vec()));
            assert_eq!(got[2], (3, b"bc\r\n".to_vec()));
            assert_eq!(got[3].1.len(), MAX_LINE_BYTES + 1);
            assert_eq!(got[4], (5, b"last".to_vec()));
        }
        assert!(lines_of(b"", 7).is_empty());
    }

    #[test]
    fn a_line_over_the_limit_is_refused_at_its_number() {
        let mut text = b"a\nb\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        text.extend_from_slice(b"\nnot reached\n");
        for step in [7, CHUNK, usize::MAX] {
            let mut seen = 0;
            let e = for_each_raw_line(&mut Trickle(&text, step), "t", |_, _| {
                seen += 1;
                Ok(())
            })
            .unwrap_err();
            assert_eq!((e.position.as_str(), seen), ("3:1", 2), "step {step}");
            assert!(e.message.contains("longer than"), "{}", e.message);
        }
        // A line of exactly the limit is read.
        let mut text = vec![b'x'; MAX_LINE_BYTES];
        text.push(b'\n');
        assert_eq!(lines_of(&text, CHUNK).len(), 1);
        assert!(is_line_too_long(&line_too_long_io()));
        assert!(!is_line_too_long(&std::io::Error::other("other")));
    }
}
