//! Reading a text trace line by line for the event readers, with positions for errors.

use std::io::{ErrorKind, Read};

use crate::format::FormatError;

/// Bytes read from the input at a time.
const CHUNK: usize = 1 << 20;

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
            // One line fills the whole buffer: make room for the rest of it.
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
            line_no += 1;
            visit(line_no, &buf[start..end])?;
            start = end;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
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
        text.extend(std::iter::repeat_n(b'x', 3 * CHUNK));
        text.extend_from_slice(b"\nlast");
        for step in [1, 3, CHUNK, usize::MAX] {
            let got = lines_of(&text, step);
            assert_eq!(got.len(), 5, "step {step}");
            assert_eq!(got[0], (1, b"a\n".to_vec()));
            assert_eq!(got[1], (2, b"\n".to_vec()));
            assert_eq!(got[2], (3, b"bc\r\n".to_vec()));
            assert_eq!(got[3].1.len(), 3 * CHUNK + 1);
            assert_eq!(got[4], (5, b"last".to_vec()));
        }
        assert!(lines_of(b"", 7).is_empty());
    }
}
