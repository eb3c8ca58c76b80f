//! Reading a text in lines with bounded memory: a line longer than the limit comes in pieces,
//! each marked as not ending the line.

use std::io::{self, BufRead};

/// One line, or one piece of a line too long to hold at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// The piece ends with `\n` (it is the end of a line); false for a piece of a longer line
    /// and for a last line without a line ending.
    pub ends_line: bool,
    /// The piece continues a line begun by the previous piece.
    pub continues: bool,
}

/// Splits a reader into lines (each with its `\n`), at most `limit` bytes at a time.
pub struct Splitter<R> {
    input: R,
    limit: usize,
    continues: bool,
}

impl<R: BufRead> Splitter<R> {
    /// Reads `input` with pieces of at most `limit` bytes (at least 1).
    pub fn new(input: R, limit: usize) -> Self {
        Splitter {
            input,
            limit: limit.max(1),
            continues: false,
        }
    }

    /// Replaces `buf` with the next piece; `None` at the end of the input.
    pub fn next(&mut self, buf: &mut Vec<u8>) -> io::Result<Option<Piece>> {
        buf.clear();
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                if buf.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(self.piece(false)));
            }
            let room = self.limit - buf.len();
            let window = &available[..available.len().min(room)];
            if let Some(n) = memchr::memchr(b'\n', window) {
                buf.extend_from_slice(&window[..=n]);
                self.input.consume(n + 1);
                return Ok(Some(self.piece(true)));
            }
            let taken = window.len();
            buf.extend_from_slice(window);
            self.input.consume(taken);
            if buf.len() == self.limit {
                return Ok(Some(self.piece(false)));
            }
        }
    }

    fn piece(&mut self, ends_line: bool) -> Piece {
        let p = Piece {
            ends_line,
            continues: self.continues,
        };
        self.continues = !ends_line;
        p
    }
}
