//! Printing decoded records: each line straight into the text buffer, numbers eight digits at
//! a time.
//!
//! A decode of the 76 MB javac-tests trace spent a quarter of its instructions printing
//! (`callgrind`): a digit pair per step, and each line built on the stack and copied over.
//! Here a line is written in place, in the spare room the buffer always keeps, and a number
//! below 10^8 is turned into its eight ASCII digits with a few multiplies on one 64-bit word
//! (two 4-digit halves, then four 2-digit quarters, then eight digits, each lane split by a
//! multiply-and-shift that divides by 100 or 10 exactly for its range).

use super::line::{Record, MAX_FIELDS};
use super::model::RecordSink;

/// Spare bytes a [`TextBuf`] always has past its text: a line is printed there. More than the
/// longest line (a letter, six fields of a space and 20 digits, a `\n`: 128 bytes) because
/// digits are stored eight bytes at a time, up to seven past a number's end.
pub const LINE_ROOM: usize = 160;

// Digits are stored up to 7 bytes past a number's end, or 16 bytes from its start for a
// cached number (at most 15 digits), or 24 for the last field.
const _: () = assert!(1 + MAX_FIELDS * 21 + 1 + 8 <= LINE_ROOM);
const _: () = assert!(1 + (MAX_FIELDS - 1) * 21 + 1 + 24 <= LINE_ROOM);

/// A growing text whose backing bytes always reach [`LINE_ROOM`] past its end, so that a line
/// is written in place without a capacity check per byte.
#[derive(Default)]
pub struct TextBuf {
    /// The text, then spare (initialised) bytes.
    bytes: Vec<u8>,
    /// Length of the text.
    len: usize,
}

impl TextBuf {
    /// An empty text with room for about `bytes` bytes.
    pub fn with_capacity(bytes: usize) -> TextBuf {
        TextBuf {
            bytes: vec![0; bytes + LINE_ROOM],
            len: 0,
        }
    }

    /// The text.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Bytes the text can take before the buffer grows (0 for a buffer never used).
    pub fn capacity(&self) -> usize {
        self.bytes.len().saturating_sub(LINE_ROOM)
    }

    /// Length of the text.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no text.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets the text, keeping the memory (already paged in) for the next.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Grows the backing bytes so that `extra` more bytes and then [`LINE_ROOM`] fit.
    #[cold]
    fn grow(&mut self, extra: usize) {
        let want = self.len + extra + LINE_ROOM;
        let new_len = want.max(self.bytes.len() * 2);
        self.bytes.resize(new_len, 0);
    }

    /// The spare room past the text, where one line is printed before [`TextBuf::advance`].
    #[inline(always)]
    pub fn room(&mut self) -> &mut [u8; LINE_ROOM] {
        if self.bytes.len() < self.len + LINE_ROOM {
            self.grow(0);
        }
        self.bytes[self.len..]
            .first_chunk_mut::<LINE_ROOM>()
            .expect("a TextBuf keeps LINE_ROOM spare bytes")
    }

    /// Takes the first `n` bytes of the room into the text.
    #[inline]
    pub fn advance(&mut self, n: usize) {
        debug_assert!(n <= LINE_ROOM);
        self.len += n;
    }

    /// Appends `bytes`.
    pub fn extend(&mut self, bytes: &[u8]) {
        if self.bytes.len() < self.len + bytes.len() + LINE_ROOM {
            self.grow(bytes.len());
        }
        self.bytes[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Appends one byte.
    #[inline]
    pub fn push(&mut self, b: u8) {
        self.room()[0] = b;
        self.len += 1;
    }
}

/// The eight decimal digits of `v` (below 10^8, leading zeros kept) as ASCII, the first digit
/// in the lowest byte.
#[inline]
fn eight_ascii(v: u32) -> u64 {
    let v = u64::from(v);
    // Two 32-bit lanes of four digits: the high half first (lowest lane).
    let x = (v / 10_000) | ((v % 10_000) << 32);
    // x / 100 per lane: exact for x < 10^4 (5243 / 2^19 is 1/100 within 2.1e-7).
    let hundreds = ((x * 5243) >> 19) & 0x0000_007f_0000_007f;
    let x = hundreds | ((x - hundreds * 100) << 16);
    // Four 16-bit lanes of two digits; y / 10 per lane: exact for y < 100 (103 / 2^10).
    let tens = ((x * 103) >> 10) & 0x000f_000f_000f_000f;
    let x = tens | ((x - tens * 10) << 8);
    x | 0x3030_3030_3030_3030
}

/// Number of decimal digits of `v` (below 10^8).
#[inline]
fn digits_below_1e8(v: u32) -> usize {
    match v.checked_ilog10() {
        Some(l) => l as usize + 1,
        None => 1,
    }
}

/// Writes `v` (below 10^8) without leading zeros at `b[n..]`; returns the end. The eight bytes
/// from `b[n]` are written whatever the length.
#[inline]
fn put_short(b: &mut [u8; LINE_ROOM], n: usize, v: u32) -> usize {
    let len = digits_below_1e8(v);
    let ascii = eight_ascii(v) >> (8 * (8 - len));
    b[n..n + 8].copy_from_slice(&ascii.to_le_bytes());
    n + len
}

/// Writes `v` (below 10^8) as eight digits at `b[n..]`; returns the end.
#[inline]
fn put_eight(b: &mut [u8; LINE_ROOM], n: usize, v: u32) -> usize {
    b[n..n + 8].copy_from_slice(&eight_ascii(v).to_le_bytes());
    n + 8
}

/// Writes `v` in decimal at `b[n..]`; returns where it ends. Up to seven bytes past the end
/// are overwritten.
#[inline(always)]
pub fn put_number(b: &mut [u8; LINE_ROOM], n: usize, v: u64) -> usize {
    // Most fields that are not object ids (methods, classes, fields, sizes) are below 10^4.
    if v < 100 {
        return put_below_100(b, n, v);
    }
    if v < 10_000 {
        let n = put_below_100(b, n, v / 100);
        let d = (v % 100) as usize * 2;
        b[n] = DIGIT_PAIRS[d];
        b[n + 1] = DIGIT_PAIRS[d + 1];
        return n + 2;
    }
    put_long_number(b, n, v)
}

/// Writes `v` (below 100) at `b[n..]`; returns the end. Two bytes are written.
#[inline(always)]
fn put_below_100(b: &mut [u8; LINE_ROOM], n: usize, v: u64) -> usize {
    let d = v as usize * 2;
    // Below 10, the pair's second digit alone (and once more after it, cut off).
    let single = usize::from(v < 10);
    b[n] = DIGIT_PAIRS[d + single];
    b[n + 1] = DIGIT_PAIRS[d + 1];
    n + 2 - single
}

/// Two decimal digits of each number below 100 (also used by [`super::line`]'s renderer).
pub(super) const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// [`put_number`] of a number of three digits or more.
#[inline(never)]
fn put_long_number(b: &mut [u8; LINE_ROOM], n: usize, v: u64) -> usize {
    const E8: u64 = 100_000_000;
    if v < E8 {
        return put_short(b, n, v as u32);
    }
    if v < 100 * E8 {
        // Most object ids: 31-bit identity hashes, nine or ten digits.
        let n = put_below_100(b, n, v / E8);
        return put_eight(b, n, (v % E8) as u32);
    }
    if v < E8 * E8 {
        let n = put_short(b, n, (v / E8) as u32);
        return put_eight(b, n, (v % E8) as u32);
    }
    let top = v / (E8 * E8);
    let rest = v % (E8 * E8);
    let n = put_short(b, n, top as u32);
    let n = put_eight(b, n, (rest / E8) as u32);
    put_eight(b, n, (rest % E8) as u32)
}

/// Slots of [`Printer`]'s cache of long numbers' digits.
const CACHED: usize = 256;

/// Smallest number whose digits are cached: shorter ones are quicker to print than to look up.
const CACHE_MIN: u64 = 100_000_000;
/// Numbers from here on are too long for a cache slot (15 digits and their length).
const CACHE_END: u64 = 1_000_000_000_000_000;

/// Prints records, remembering digits: those of the last field of the last line (the
/// thread, a ten-digit id that most lines share with the line before), and those of recently
/// printed long numbers (object ids: most records name one of the last few objects).
pub struct Printer {
    last: u64,
    /// The digits of `last`, then padding (copied whole: a fixed-size copy is a few moves).
    last_digits: [u8; 24],
    last_len: usize,
    /// A direct-mapped cache: the number in each slot (0, never cached, for none) ...
    keys: Box<[u64; CACHED]>,
    /// ... and its digits, padded, with their count in the last byte.
    digits: Box<[[u8; 16]; CACHED]>,
}

impl Default for Printer {
    fn default() -> Self {
        Printer {
            last: 0,
            last_digits: [0; 24],
            last_len: 0,
            keys: Box::new([0; CACHED]),
            digits: Box::new([[0; 16]; CACHED]),
        }
    }
}

impl Printer {
    /// Writes `v` in decimal at `b[n..]`; returns where it ends (see [`put_number`]).
    #[inline(always)]
    fn number(&mut self, b: &mut [u8; LINE_ROOM], n: usize, v: u64) -> usize {
        if !(CACHE_MIN..CACHE_END).contains(&v) {
            return put_number(b, n, v);
        }
        let slot = (v.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize % CACHED;
        if self.keys[slot] != v {
            let mut tmp = [0u8; LINE_ROOM];
            let len = put_long_number(&mut tmp, 0, v);
            self.keys[slot] = v;
            self.digits[slot][..15].copy_from_slice(&tmp[..15]);
            self.digits[slot][15] = len as u8;
        }
        let d = &self.digits[slot];
        b[n..n + 16].copy_from_slice(d);
        n + usize::from(d[15])
    }

    /// Appends `r` the canonical way and a `\n`.
    #[inline(always)]
    pub fn line(&mut self, r: &Record, out: &mut TextBuf) {
        let b = out.room();
        b[0] = r.kind.letter();
        let mut n = 1;
        let Some((&tail, head)) = r.fields().split_last() else {
            b[1] = b'\n';
            out.advance(2);
            return;
        };
        // Unrolled by field count (two to six; a loop over the fields was a branch the
        // processor mispredicted from one kind of record to the next).
        let mut field = |b: &mut [u8; LINE_ROOM], n: usize, v: u64| {
            b[n] = b' ';
            self.number(b, n + 1, v)
        };
        match *head {
            [a] => n = field(b, n, a),
            [a, c] => {
                n = field(b, n, a);
                n = field(b, n, c);
            }
            [a, c, d] => {
                n = field(b, n, a);
                n = field(b, n, c);
                n = field(b, n, d);
            }
            _ => {
                for &v in head {
                    n = field(b, n, v);
                }
            }
        }
        b[n] = b' ';
        n += 1;
        if self.last_len == 0 || self.last != tail {
            let mut tmp = [0u8; LINE_ROOM];
            let len = put_number(&mut tmp, 0, tail);
            self.last = tail;
            self.last_len = len;
            self.last_digits.copy_from_slice(&tmp[..24]);
        }
        b[n..n + 24].copy_from_slice(&self.last_digits);
        n += self.last_len;
        b[n] = b'\n';
        out.advance(n + 1);
    }
}

/// A [`Printer`] printing the records a model decodes into a text.
pub struct PrintTo<'a> {
    /// The printer.
    pub printer: &'a mut Printer,
    /// The text.
    pub out: &'a mut TextBuf,
}

impl RecordSink for PrintTo<'_> {
    #[inline(always)]
    fn record(&mut self, r: &Record) {
        self.printer.line(r, self.out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::et::line::{classify, render_line, Line};

    #[test]
    fn numbers_at_every_length() {
        let mut values = vec![
            0,
            1,
            9,
            10,
            99,
            100,
            u64::MAX,
            u64::MAX - 1,
            u32::MAX as u64,
        ];
        let mut v = 1u64;
        for _ in 0..20 {
            values.extend([v - 1, v, v + 1, v.wrapping_mul(7) / 3, v / 2 + 1]);
            v = v.saturating_mul(10);
        }
        let mut x = 99u64;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            values.push(x >> (x % 64));
        }
        for v in values {
            let mut b = [0xaau8; LINE_ROOM];
            let n = put_number(&mut b, 3, v);
            assert_eq!(&b[3..n], v.to_string().as_bytes(), "{v}");
        }
    }

    #[test]
    fn printer_writes_what_render_writes() {
        let mut p = Printer::default();
        let mut a = TextBuf::default();
        let mut b = Vec::new();
        for l in [
            "E 40 1950409828",
            "W 7 3 1950409828",
            "W 7 3 0",
            "D 1 2 3 4",
            "N 815033865 40 6 58 0 1950409828",
            "E 40 18446744073709551615",
            "E 40 1",
            "N 18446744073709551615 18446744073709551615 18446744073709551615 \
             18446744073709551615 18446744073709551615 18446744073709551615",
            "E 40 1",
        ] {
            let Line::Canonical(r) = classify(l.as_bytes()) else {
                panic!("{l} not canonical");
            };
            p.line(&r, &mut a);
            render_line(&r, &mut b);
            a.extend(b"x");
            b.push(b'x');
        }
        assert_eq!(
            String::from_utf8_lossy(a.as_slice()),
            String::from_utf8_lossy(&b)
        );
    }

    #[test]
    fn text_grows_and_keeps_room() {
        let mut t = TextBuf::default();
        for k in 0..10_000u64 {
            let b = t.room();
            let n = put_number(b, 0, k);
            t.advance(n);
            t.push(b'\n');
        }
        let want: String = (0..10_000u64).map(|k| format!("{k}\n")).collect();
        assert_eq!(t.as_slice(), want.as_bytes());
        t.clear();
        assert!(t.is_empty());
    }
}
