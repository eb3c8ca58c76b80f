//! Reading a text trace a block of lines at a time, into buffers kept from block to block.
//!
//! Why not the shared [`LineReader`](crate::shared::text::line_reader): an Elephant Tracks
//! block is a number of lines (the container's blocks are defined by line count), parsed by
//! several workers out of one contiguous buffer, so it is cut after its last line, not at the
//! last line end within a byte budget, and its buffer is sized from the block's expected
//! length in huge pages. The rest is the shared reader's: the same reads
//! ([`read_some`]), the same limit on a line ([`LongLines`]) and the same errors.
//!
//! Two costs of reading are avoided here. The reads go straight into the block's buffer: the
//! standard `read_to_end` asks for 8 KiB first and doubles, so every read would be smaller
//! than the caller's 1 MiB `BufReader` and go through it, a copy of the whole trace. And the
//! buffers are asked to use huge pages: each fresh 4 KiB page of them would be a page fault,
//! most of an encode's faults. Reading into a slice needs initialized memory, so a
//! buffer is zeroed once when it grows, and keeps its bytes (and size) from block to block.

use std::io::Read;

use crate::shared::huge_pages;
use crate::shared::text::line_reader::{line_too_long_io, read_some, LongLines};

/// Bytes asked of the input at a time: the size of the CLI's `BufReader`, so that a read
/// with that reader's buffer empty goes around it.
pub const READ_CHUNK: usize = 1 << 20;

/// Smallest buffer made.
const FIRST_SIZE: usize = 2 * READ_CHUNK;

/// From this much text on, a growing buffer is made the size the block is expected to take
/// (from the lines so far), not just twice as big: copies of the text so far, and zeroing,
/// stay a fraction of the block. Below it, a short trace does not pay for a block-sized
/// buffer it will not fill.
const ESTIMATE_FROM: usize = 2 * READ_CHUNK;

/// One block's text: `bytes()` is what was read; the buffer beyond it is zeros or old text.
#[derive(Default)]
pub struct BlockText {
    buf: Vec<u8>,
    len: usize,
}

impl BlockText {
    /// The text.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The number of whole lines of the text (after [`BlockText::read_block`] refused a line
    /// as too long: the lines before it).
    pub fn whole_lines(&self) -> usize {
        memchr::memchr_iter(b'\n', self.bytes()).count()
    }

    /// Makes room for `more` bytes after the text: a bigger buffer (the text copied over) when
    /// there is not. `lines` is how many lines the text holds, `block_lines` how many the
    /// block will.
    fn room(&mut self, more: usize, lines: usize, block_lines: usize) {
        let need = self.len + more;
        if need <= self.buf.len() {
            return;
        }
        let mut size = need.max(2 * self.buf.len()).max(FIRST_SIZE);
        if self.len >= ESTIMATE_FROM && lines > 0 {
            // The rest of the block is as long per line as what was read, and a sixteenth
            // more for safety.
            let per_line = self.len.div_ceil(lines);
            let expect = per_line.saturating_mul(block_lines);
            size = size.max(
                expect
                    .saturating_add(expect / 16)
                    .saturating_add(READ_CHUNK),
            );
        }
        let mut grown = huge_pages::filled_vec(size, 0u8);
        grown[..self.len].copy_from_slice(&self.buf[..self.len]);
        self.buf = grown;
    }

    /// Reads up to `block_lines` lines: returns how many the text then holds. `carry` holds
    /// what was read past the previous block's last line, and receives what is read past this
    /// one's. The last line of the input may lack its `\n`. `expect` is how long the block is
    /// expected to be (the length of the block before, or 0): a new buffer is made that size
    /// at once. A line longer than
    /// [`MAX_LINE_BYTES`](crate::shared::text::line_reader::MAX_LINE_BYTES) is an error
    /// ([`crate::shared::text::line_reader::is_line_too_long`]).
    pub fn read_block(
        &mut self,
        input: &mut dyn Read,
        carry: &mut Vec<u8>,
        block_lines: usize,
        expect: usize,
    ) -> std::io::Result<usize> {
        self.len = 0;
        if self.buf.is_empty() && expect > 0 {
            self.room(expect + expect / 16 + READ_CHUNK, 0, block_lines);
        }
        self.room(carry.len(), 0, block_lines);
        self.buf[..carry.len()].copy_from_slice(carry);
        self.len = carry.len();
        carry.clear();
        let mut lines = 0;
        let mut scanned = 0;
        // A line may not grow past the limit.
        let mut long = LongLines::default();
        loop {
            // Counting is done a read at a time; only the read where the block ends is walked
            // newline by newline.
            let new = &self.buf[scanned..self.len];
            let found = match long.take(scanned, new) {
                Ok(found) => found,
                Err(line_start) => {
                    // The text keeps the lines before it, for the error's line number.
                    self.len = line_start;
                    return Err(line_too_long_io());
                }
            };
            if lines + found < block_lines {
                lines += found;
            } else {
                for p in memchr::memchr_iter(b'\n', new) {
                    lines += 1;
                    if lines == block_lines {
                        let cut = scanned + p + 1;
                        carry.extend_from_slice(&self.buf[cut..self.len]);
                        self.len = cut;
                        return Ok(lines);
                    }
                }
            }
            scanned = self.len;
            self.room(READ_CHUNK, lines, block_lines);
            let n = read_some(input, &mut self.buf[self.len..self.len + READ_CHUNK])?;
            if n == 0 {
                if self.bytes().last().is_some_and(|&b| b != b'\n') {
                    lines += 1;
                }
                return Ok(lines);
            }
            self.len += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;

    /// A reader handing out its bytes a few at a time, with an interruption now and then.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
        calls: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(7) {
                return Err(std::io::Error::new(ErrorKind::Interrupted, "again"));
            }
            let n = buf.len().min(self.step).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// Blocks cut at every `block_lines` lines give back the input, one buffer reused for
    /// all of them (old text beyond a shorter block never shows), whatever the read sizes.
    #[test]
    fn blocks_give_back_the_input_in_whole_lines() {
        let mut input = Vec::new();
        for k in 0..200_000u64 {
            input.extend_from_slice(format!("E {} {}\n", k * 7919 % 100_003, k % 3).as_bytes());
            if k % 1000 == 0 {
                input.push(b'\n');
            }
        }
        input.extend_from_slice(b"M 1 2 3");
        for (step, block_lines) in [(usize::MAX, 65_536), (4093, 30_000), (100, 1000)] {
            let mut reader = Trickle {
                bytes: &input,
                step,
                calls: 0,
            };
            let mut text = BlockText::default();
            let mut carry = Vec::new();
            let mut out = Vec::new();
            let mut blocks = 0;
            loop {
                let expect = if blocks == 1 { 1000 } else { 0 };
                let lines = text
                    .read_block(&mut reader, &mut carry, block_lines, expect)
                    .expect("reads");
                let bytes = text.bytes();
                let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
                let unterminated = bytes.last().is_some_and(|&b| b != b'\n');
                assert_eq!(lines, newlines + usize::from(unterminated));
                out.extend_from_slice(bytes);
                blocks += 1;
                if lines < block_lines || blocks > 300_000 {
                    break;
                }
                assert!(!unterminated);
            }
            assert!(out == input, "step {step}, {block_lines} lines per block");
        }
    }
}
