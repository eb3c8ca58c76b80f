//! The buffer decoders print text lines into.
//!
//! A decode prints a million short lines a second or more; appending each piece to a `Vec`
//! costs a capacity check and a `memcpy` call per piece, more than printing the numbers. This
//! buffer instead hands out room for a batch of lines, into which pieces are written with
//! copies of fixed length (a few vector moves, no call), some of them spilling past the piece
//! into room the next piece overwrites; a line is printed in a [`Window`], where no store needs
//! a bounds check.

use std::io::Write;

use crate::shared::text::numbers::{dec_left, hex_left, hex_short, put_dec};

/// Bytes of room past any line, so fixed-length copies may spill.
pub const SPILL: usize = 64;

/// A text buffer with a write position.
pub struct TextOut {
    /// Always initialised to its full length; `buf[..len]` is the text.
    buf: Vec<u8>,
    len: usize,
}

impl TextOut {
    /// A buffer meant to be written out when it holds about `size` bytes.
    pub fn new(size: usize) -> Self {
        TextOut {
            buf: vec![0; size + SPILL],
            len: 0,
        }
    }

    /// Bytes of text held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no text is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The room after the text, at least `n` bytes (the buffer grows when needed); text
    /// written there counts once [`Self::advance`] says how much of it.
    #[inline]
    pub fn room(&mut self, n: usize) -> &mut [u8] {
        if self.buf.len() - self.len < n {
            self.grow(n);
        }
        &mut self.buf[self.len..]
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let want = self.len.saturating_add(n).saturating_add(SPILL);
        self.buf.resize(want.max(self.buf.len() * 2), 0);
    }

    /// Counts `n` more bytes of the room as text.
    #[inline]
    pub fn advance(&mut self, n: usize) {
        self.len += n;
        debug_assert!(self.len <= self.buf.len());
    }

    /// Appends `bytes`.
    #[inline]
    pub fn push(&mut self, bytes: &[u8]) {
        self.room(bytes.len())[..bytes.len()].copy_from_slice(bytes);
        self.advance(bytes.len());
    }

    /// Counts the `used` bytes printed in the room as text, then appends `line` and, when
    /// `newline`, its `\n`: a line kept verbatim, of any length, ending a run of lines printed
    /// in place. The room must be taken again after it.
    #[inline]
    pub fn push_line_after(&mut self, used: usize, line: &[u8], newline: bool) {
        self.advance(used);
        self.push(line);
        if newline {
            self.push(b"\n");
        }
    }

    /// Hands the text out with the buffer that holds it, and goes on in `spare`'s memory (a
    /// buffer handed out earlier, or an empty one): a decoder's worker passes its text to the
    /// writing thread without copying it. The buffer keeps its full length, so that, handed
    /// back as the next spare, it needs no filling again (zeroing the room past the text of a
    /// buffer each time it came back faulted in pages the text had never reached).
    pub fn swap_out(&mut self, mut spare: Vec<u8>) -> Filled {
        if spare.capacity() < self.buf.len() {
            // A new buffer: zeroed memory from the allocator is not touched until text is
            // printed into it, where filling a vector with zeros wrote every page at once.
            spare = vec![0; self.buf.len()];
        }
        spare.resize(self.buf.len(), 0);
        let buf = std::mem::replace(&mut self.buf, spare);
        let len = std::mem::take(&mut self.len);
        Filled { buf, len }
    }

    /// Drops the text after the first `len` bytes.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Writes the text to `out` and empties the buffer.
    pub fn write_to(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        let text = &self.buf[..self.len];
        self.len = 0;
        out.write_all(text)
    }
}

/// Text handed out by [`TextOut::swap_out`], in the buffer that holds it.
#[derive(Debug)]
pub struct Filled {
    buf: Vec<u8>,
    len: usize,
}

impl Filled {
    /// The text.
    pub fn text(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The buffer, for [`TextOut::swap_out`] to reuse.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }
}

/// Bytes of a line's window: every offset a `u8` can hold, and then the longest fixed-length
/// store ([`MAX_STORE`] bytes).
pub const WINDOW: usize = 256 + MAX_STORE;

/// The longest store [`put`] makes.
pub const MAX_STORE: usize = 32;

/// Room for one line, where its pieces are stored at offsets that are `u8`s: every store of
/// up to [`MAX_STORE`] bytes at any such offset is inside the window, so the compiler drops
/// the bounds checks (a comparison and a branch each, five or six a line) with no `unsafe`.
/// Every line (or, for `mtrace`, every line's part after its caller) printed this way is
/// shorter than 256 bytes, so its offsets never wrap.
pub type Window = [u8; WINDOW];

/// The window at `room[at..]`, which must have [`WINDOW`] bytes: the caller takes room for a
/// batch of lines and a window once, rather than a check per line.
#[inline(always)]
pub fn window(room: &mut [u8], at: usize) -> &mut Window {
    room[at..]
        .first_chunk_mut()
        .expect("room for a line's window is taken before printing it")
}

/// Stores `bytes` at `w[at..]`: a fixed-length move, whatever the offset.
#[inline(always)]
pub fn put<const K: usize>(w: &mut Window, at: u8, bytes: &[u8; K]) {
    const { assert!(K <= MAX_STORE) };
    let at = usize::from(at);
    w[at..at + K].copy_from_slice(bytes);
}

/// Prints `v` in lower-case hex (its shortest form, no prefix) at `w[at..]`; returns the end.
/// Stores 16 bytes.
#[inline(always)]
pub fn put_hex(w: &mut Window, at: u8, v: u64) -> u8 {
    let (digits, n) = hex_left(v);
    put(w, at, &digits);
    at.wrapping_add(n as u8)
}

/// [`put_hex`] for a number that is usually below 256 (a size): such a number is one table
/// entry and a 4-byte store.
#[inline(always)]
pub fn put_hex_short(w: &mut Window, at: u8, v: u64) -> u8 {
    match hex_short(v) {
        Some((digits, n)) => {
            put(w, at, &digits.to_le_bytes());
            at.wrapping_add(n as u8)
        }
        None => put_hex(w, at, v),
    }
}

/// Prints `v` in decimal at `w[at..]`; returns the end. Stores 8 bytes for a number below
/// 10^8.
#[inline(always)]
pub fn put_decimal(w: &mut Window, at: u8, v: u64) -> u8 {
    match dec_left(v) {
        Some((digits, n)) => {
            put(w, at, &digits.to_le_bytes());
            at.wrapping_add(n as u8)
        }
        None => put_dec(w, usize::from(at), v) as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_grows_and_text_is_what_was_advanced_over() {
        let mut t = TextOut::new(4);
        t.push(b"abc");
        let room = t.room(100);
        assert!(room.len() >= 100);
        room[..5].copy_from_slice(b"defgh");
        t.advance(3);
        assert_eq!(t.len(), 6);
        let mut out = Vec::new();
        t.write_to(&mut out).unwrap();
        assert_eq!(out, b"abcdef");
        assert!(t.is_empty());
    }

    #[test]
    fn swapping_out_hands_over_the_text_and_keeps_the_room() {
        let mut t = TextOut::new(8);
        t.push(b"first");
        let full = t.swap_out(Vec::new());
        assert_eq!(full.text(), b"first");
        assert!(t.is_empty());
        t.push(b"second line, longer than the room");
        let again = t.swap_out(full.into_buffer());
        assert_eq!(again.text(), b"second line, longer than the room");
        t.push(b"x");
        let mut out = Vec::new();
        t.write_to(&mut out).unwrap();
        assert_eq!(out, b"x");
    }

    #[test]
    fn window_stores_print_numbers_at_any_offset() {
        let values = [
            0u64,
            1,
            9,
            10,
            0xf,
            0x10,
            0xff,
            0x100,
            999,
            1000,
            0xfff,
            0x1000,
            99_999_999,
            100_000_000,
            0xdead_beef,
            u64::MAX,
        ];
        for at in [0u8, 1, 7, 100, 200, 239, 255] {
            for v in values {
                let mut room = vec![b'#'; WINDOW + 3];
                let w = window(&mut room, 3);
                let end = put_hex(w, at, v);
                let hex = format!("{v:x}");
                if usize::from(at) + hex.len() < 256 {
                    assert_eq!(usize::from(end), usize::from(at) + hex.len());
                    let printed = &w[usize::from(at)..usize::from(end)];
                    assert_eq!(printed, hex.as_bytes(), "{v:#x} at {at}");
                }
                let end = put_decimal(w, at, v);
                let dec = v.to_string();
                if usize::from(at) + dec.len() < 256 {
                    assert_eq!(usize::from(end), usize::from(at) + dec.len());
                    let printed = &w[usize::from(at)..usize::from(end)];
                    assert_eq!(printed, dec.as_bytes(), "{v} at {at}");
                }
                let end = put_hex_short(w, at, v);
                if usize::from(at) + hex.len() < 256 {
                    assert_eq!(usize::from(end), usize::from(at) + hex.len());
                    let printed = &w[usize::from(at)..usize::from(end)];
                    assert_eq!(printed, hex.as_bytes(), "{v:#x} at {at}");
                }
                put(w, at, b"ab");
                assert_eq!(w[usize::from(at)..usize::from(at) + 2], *b"ab");
                // Nothing before the window is touched.
                assert_eq!(room[..3], *b"###");
            }
        }
    }
}
