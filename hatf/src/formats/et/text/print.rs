//! Printing decoded records: each line straight into the text buffer, numbers eight digits at
//! a time.
//!
//! Printing is a large part of a decode, so it avoids a digit pair per step and a line built
//! on the stack and copied over: a line is written in place, in the spare room the buffer always keeps, and a number
//! below 10^8 is turned into its eight ASCII digits with a few multiplies on one 64-bit word
//! (two 4-digit halves, then four 2-digit quarters, then eight digits, each lane split by a
//! multiply-and-shift that divides by 100 or 10 exactly for its range).

use crate::formats::et::line::{Record, MAX_FIELDS};
use crate::formats::et::model::RecordSink;
use crate::shared::text::numbers::{eight_ascii, DIGIT_PAIRS};

/// Spare bytes a [`TextBuf`] always has past its text: a line is printed there. More than the
/// longest line (a letter, six fields of a space and 20 digits, a `\n`: 128 bytes) because
/// digits are stored eight bytes at a time, up to seven past a number's end.
pub const LINE_ROOM: usize = 160;

// Digits are stored up to 7 bytes past a number's end, or 16 bytes from its space for a
// cached number (at most 15 digits) or 8 for a small one, or 24 for the last field.
const _: () = assert!(1 + MAX_FIELDS * 21 + 1 + 8 <= LINE_ROOM);
const _: () = assert!(1 + (MAX_FIELDS - 1) * 21 + 1 + 24 <= LINE_ROOM);

/// A growing text whose backing bytes always reach [`LINE_ROOM`] past its end, so that a line
/// is written in place without a capacity check per byte.
#[derive(Default)]
pub struct TextBuf {
    /// The text (from `start`), then spare (initialised) bytes.
    bytes: Vec<u8>,
    /// Where the text starts in `bytes` (0 but for [`TextBuf::huge_page`]).
    start: usize,
    /// Where the text ends in `bytes`.
    end: usize,
    /// `bytes.len() + 1 - LINE_ROOM` (0 when `bytes` is shorter than a line's room), kept
    /// whenever `bytes` changes length: `end` is below it exactly when a line's room fits.
    room_end: usize,
}

/// Size and alignment of a transparent huge page on x86-64 and most other Linux systems.
pub use metatf::memory::HUGE_PAGE;

impl TextBuf {
    /// An empty text with room for about `bytes` bytes.
    pub fn with_capacity(bytes: usize) -> TextBuf {
        let mut text = TextBuf {
            bytes: vec![0; bytes + LINE_ROOM],
            start: 0,
            end: 0,
            room_end: 0,
        };
        text.measure_room();
        text
    }

    /// An empty text with room for `HUGE_PAGE - LINE_ROOM` bytes, in memory aligned to a huge
    /// page and advised to use one: a two-thread decode keeps about a block of text (13 MB)
    /// waiting for the writer, and in small pages it would be most of the decode's page
    /// faults. The bytes before the aligned page are allocated
    /// zeroed and never touched, so the kernel never backs them.
    pub fn huge_page() -> TextBuf {
        let mut bytes = vec![0u8; 2 * HUGE_PAGE];
        let at = bytes.as_ptr() as usize;
        let start = at.next_multiple_of(HUGE_PAGE) - at;
        metatf::memory::advise_huge_pages(bytes[start..].as_ptr(), HUGE_PAGE);
        // The text grows past the page like any other (into the allocation's rest first).
        bytes.truncate(start + HUGE_PAGE);
        let mut text = TextBuf {
            bytes,
            start,
            end: start,
            room_end: 0,
        };
        text.measure_room();
        text
    }

    /// The text.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// Bytes the text can take before the buffer grows (0 for a buffer never used).
    pub fn capacity(&self) -> usize {
        self.bytes.len().saturating_sub(self.start + LINE_ROOM)
    }

    /// Length of the text.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True when there is no text.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// Forgets the text, keeping the memory (already paged in) for the next.
    pub fn clear(&mut self) {
        self.end = self.start;
    }

    /// Grows the backing bytes so that `extra` more bytes and then [`LINE_ROOM`] fit.
    #[cold]
    fn grow(&mut self, extra: usize) {
        let want = self.end + extra + LINE_ROOM;
        let new_len = want.max(self.bytes.len() * 2);
        self.bytes.resize(new_len, 0);
        self.measure_room();
    }

    /// Sets `room_end` for the length `bytes` has now.
    fn measure_room(&mut self) {
        self.room_end = (self.bytes.len() + 1).saturating_sub(LINE_ROOM);
    }

    /// The spare room past the text, where one line is printed before [`TextBuf::advance`].
    ///
    /// One comparison with `room_end` a line. Slicing `bytes` instead compared the text's end
    /// with the length twice more (the compiler cannot see that `room_end` is below it, and
    /// merged the two tests through a flag), 12 instructions on every line.
    #[inline(always)]
    pub fn room(&mut self) -> &mut [u8; LINE_ROOM] {
        let end = self.end;
        if end < self.room_end {
            // SAFETY: `room_end` is `bytes.len() + 1 - LINE_ROOM` (0 when shorter), set by
            // `measure_room` whenever `bytes` changes length (only `grow` and the
            // constructors change it), so `end < room_end` means `end + LINE_ROOM <=
            // bytes.len()`: the LINE_ROOM bytes from `end` are initialised bytes of `bytes`,
            // borrowed mutably through `self` for as long as the result lives.
            return unsafe { &mut *self.bytes.as_mut_ptr().add(end).cast::<[u8; LINE_ROOM]>() };
        }
        self.grown_room()
    }

    /// [`TextBuf::room`] when the bytes must grow first.
    #[cold]
    #[inline(never)]
    fn grown_room(&mut self) -> &mut [u8; LINE_ROOM] {
        self.grow(0);
        self.bytes[self.end..]
            .first_chunk_mut::<LINE_ROOM>()
            .expect("a TextBuf keeps LINE_ROOM spare bytes")
    }

    /// Takes the first `n` bytes of the room into the text.
    #[inline]
    pub fn advance(&mut self, n: usize) {
        debug_assert!(n <= LINE_ROOM);
        self.end += n;
    }

    /// Appends `bytes`.
    pub fn extend(&mut self, bytes: &[u8]) {
        if self.bytes.len() < self.end + bytes.len() + LINE_ROOM {
            self.grow(bytes.len());
        }
        self.bytes[self.end..self.end + bytes.len()].copy_from_slice(bytes);
        self.end += bytes.len();
    }

    /// Appends one byte.
    #[inline]
    pub fn push(&mut self, b: u8) {
        self.room()[0] = b;
        self.end += 1;
    }
}

/// Writes `v` (below 10^8) without leading zeros at `b[n..]`; returns the end. The eight bytes
/// from `b[n]` are written whatever the length.
///
/// The leading zeros are counted on the eight digits already made (the zero bytes at the
/// low end of the digit values), not by `ilog10`'s comparisons (20 instructions).
#[inline]
fn put_short<const N: usize>(b: &mut [u8; N], n: usize, v: u32) -> usize {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let ascii = eight_ascii(v);
    // The last digit always counts (a set bit in the top byte): seven zeros at most.
    let zeros = ((ascii ^ ZEROS) | (1 << 56)).trailing_zeros() as usize / 8;
    b[n..n + 8].copy_from_slice(&(ascii >> (8 * zeros)).to_le_bytes());
    n + 8 - zeros
}

/// Writes `v` (below 10^8) as eight digits at `b[n..]`; returns the end.
#[inline]
fn put_eight<const N: usize>(b: &mut [u8; N], n: usize, v: u32) -> usize {
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
fn put_below_100<const N: usize>(b: &mut [u8; N], n: usize, v: u64) -> usize {
    let d = v as usize * 2;
    // Below 10, the pair's second digit alone (and once more after it, cut off).
    let single = usize::from(v < 10);
    b[n] = DIGIT_PAIRS[d + single];
    b[n + 1] = DIGIT_PAIRS[d + 1];
    n + 2 - single
}

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

/// Numbers below this are printed from [`SMALL`].
const SMALL_END: u64 = 10_000;

/// For each number below [`SMALL_END`] (most fields that are not object ids: methods,
/// classes, fields, sizes): a space and its digits as they appear on a line (the space in the
/// lowest byte), and in the top five bits how many bytes that is. A field is one load, one
/// store and an add, where the digit pairs took a division, two comparisons and four byte
/// moves. The length is read with a shift that leaves five bits, so the compiler knows it is
/// below 32 and drops the bounds checks of the fields after it (see [`FIELD_MAX`]).
static SMALL: [u64; SMALL_END as usize] = small_fields();

/// Builds [`SMALL`].
const fn small_fields() -> [u64; SMALL_END as usize] {
    let mut table = [0u64; SMALL_END as usize];
    let mut v = 0;
    while v < SMALL_END as usize {
        // Digits from the last, into the bytes after the space.
        let len = if v < 10 {
            1
        } else if v < 100 {
            2
        } else if v < 1000 {
            3
        } else {
            4
        };
        let mut entry = b' ' as u64 | ((len as u64 + 1) << 59);
        let (mut k, mut x) = (len, v);
        while k > 0 {
            entry |= (b'0' as u64 + (x % 10) as u64) << (8 * k);
            x /= 10;
            k -= 1;
        }
        table[v] = entry;
        v += 1;
    }
    table
}

/// Slots of [`Printer`]'s cache of long numbers' digits: enough for the ids a block keeps
/// naming, small enough to stay in the level-1 and level-2 caches.
const CACHED: usize = 1024;
/// Every number from [`SMALL_END`] up to this one is cached (object ids below 10^8 are too
/// many to print digit by digit each time); those from here
/// on are too long for a cache slot (a space and 15 digits).
const CACHE_END: u64 = 1_000_000_000_000_000;

/// Most bytes [`Printer::field`] says a field took: a space and 20 digits. Each field's
/// length is known to the compiler to be at most 31 (a five-bit mask or shift, or a `min`),
/// so that after the three fields of the commonest lines the line end is known to be far
/// enough inside [`LINE_ROOM`] for the next field's and the last field's copies: their bounds
/// checks (two to four a line) are gone.
const FIELD_MAX: usize = 21;

/// One slot of [`Printer`]'s cache: a number, and a space and its digits, padded.
#[derive(Clone, Copy)]
struct Cached {
    /// The number (0, never cached, for none).
    key: u64,
    /// A space and the number's digits, padded.
    text: [u8; 16],
    /// How many bytes of `text` that is.
    len: u8,
}

/// Prints records, remembering digits: those of the last field of the last line (the
/// thread, a ten-digit id that most lines share with the line before), and those of recently
/// printed long numbers (object ids: most records name one of the last few objects).
pub struct Printer {
    last: u64,
    /// A space, the digits of `last` and a `\n`, then padding (copied whole: a fixed-size
    /// copy is a few moves).
    last_text: [u8; 24],
    /// How many bytes of `last_text` are the line's end.
    last_len: usize,
    /// A direct-mapped cache, one array (its number, digits and length in one slot: one base
    /// address to keep, and one cache line to touch).
    cache: Box<[Cached; CACHED]>,
}

impl Default for Printer {
    fn default() -> Self {
        let mut last_text = [0; 24];
        last_text[..3].copy_from_slice(b" 0\n");
        Printer {
            last: 0,
            last_text,
            last_len: 3,
            cache: Box::new(
                [Cached {
                    key: 0,
                    text: [0; 16],
                    len: 0,
                }; CACHED],
            ),
        }
    }
}

impl Printer {
    /// Writes a space and `v` in decimal at `b[n..]`; returns where they end, at most
    /// [`FIELD_MAX`] bytes on (and the compiler knows it is at most 31). Up to 16 bytes from
    /// `b[n]` are written, and up to seven past the end.
    #[inline(always)]
    fn field(&mut self, b: &mut [u8; LINE_ROOM], n: usize, v: u64) -> usize {
        if v < SMALL_END {
            let entry = SMALL[v as usize];
            b[n..n + 8].copy_from_slice(&entry.to_le_bytes());
            return n + (entry >> 59) as usize;
        }
        // The cache is asked first: a number too long for it is never in it, and is printed
        // on the miss path.
        let slot =
            (v.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - CACHED.trailing_zeros())) as usize;
        let e = &self.cache[slot];
        if e.key != v {
            return self.uncached_field(b, n, v, slot).min(n + FIELD_MAX);
        }
        b[n..n + 16].copy_from_slice(&e.text);
        // (A mask the compiler can see: the length is at most 16.)
        n + usize::from(e.len & 31)
    }

    /// [`Printer::field`] of a number (from [`SMALL_END`] on) not in the cache: cached and
    /// copied from there, or printed digit by digit when too long for the cache.
    #[inline(never)]
    fn uncached_field(&mut self, b: &mut [u8; LINE_ROOM], n: usize, v: u64, slot: usize) -> usize {
        if v >= CACHE_END {
            b[n] = b' ';
            return put_long_number(b, n + 1, v);
        }
        self.cache(slot, v);
        let e = &self.cache[slot];
        b[n..n + 16].copy_from_slice(&e.text);
        n + usize::from(e.len)
    }

    /// Puts the digits of `v` (from [`SMALL_END`], below [`CACHE_END`]) in the cache's slot
    /// `slot`: two groups of eight digits at most, written straight into a small buffer. Most
    /// numbers met here are object ids of nine or ten digits (31-bit identity hashes), whose
    /// first group is a digit pair.
    fn cache(&mut self, slot: usize, v: u64) {
        const E8: u64 = 100_000_000;
        let mut text = [0u8; 32];
        text[0] = b' ';
        let (high, low) = ((v / E8) as u32, (v % E8) as u32);
        let len = if high == 0 {
            put_short(&mut text, 1, low)
        } else {
            let n = if high < 100 {
                put_below_100(&mut text, 1, u64::from(high))
            } else {
                put_short(&mut text, 1, high)
            };
            put_eight(&mut text, n, low)
        };
        let e = &mut self.cache[slot];
        e.key = v;
        e.text.copy_from_slice(&text[..16]);
        e.len = len as u8;
    }

    /// Makes `v` the last field remembered.
    #[inline(never)]
    fn remember_last(&mut self, v: u64) {
        let mut tmp = [0u8; LINE_ROOM];
        tmp[0] = b' ';
        let len = put_number(&mut tmp, 1, v);
        tmp[len] = b'\n';
        self.last = v;
        self.last_len = len + 1;
        self.last_text.copy_from_slice(&tmp[..24]);
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
        match *head {
            [a] => n = self.field(b, n, a),
            [a, c] => {
                n = self.field(b, n, a);
                n = self.field(b, n, c);
            }
            [a, c, d] => {
                n = self.field(b, n, a);
                n = self.field(b, n, c);
                n = self.field(b, n, d);
            }
            _ => {
                for &v in head {
                    n = self.field(b, n, v);
                }
            }
        }
        if self.last != tail {
            self.remember_last(tail);
        }
        b[n..n + 24].copy_from_slice(&self.last_text);
        out.advance(n + self.last_len);
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

    fn text(&mut self, bytes: &[u8], newline: bool) {
        self.out.extend(bytes);
        if newline {
            self.out.push(b'\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::et::line::{classify, render_line, Line};

    /// `n` values of every length from a linear congruential generator started at `seed`:
    /// each shifted right by a varying amount, so that short and long numbers are as common.
    fn random_values(seed: u64, n: usize) -> impl Iterator<Item = u64> {
        let mut x = seed;
        (0..n).map(move |_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> (x % 64)
        })
    }

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
        values.extend(random_values(99, 100_000));
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

    /// Every number below [`SMALL_END`] reads back from its table entry as `format!` spells it.
    #[test]
    fn small_table_spells_every_small_number() {
        for v in 0..SMALL_END {
            let entry = SMALL[v as usize].to_le_bytes();
            let len = usize::from(entry[7] >> 3);
            assert_eq!(&entry[..len], format!(" {v}").as_bytes(), "{v}");
        }
    }

    /// A field prints as `format!` does, at every length and on both sides of each bound of
    /// the table and the cache, when first seen (a cache miss), seen again (a hit), and after
    /// another number took its cache slot.
    #[test]
    fn fields_print_as_format_does() {
        let mut values = vec![0, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 10_001, u64::MAX];
        for bound in [SMALL_END, CACHE_END, 100_000_000, u64::from(u32::MAX)] {
            values.extend([bound - 1, bound, bound + 1]);
        }
        let mut v = 1u64;
        for _ in 0..20 {
            values.extend([v - 1, v, v + 1, v / 3 * 2]);
            v = v.saturating_mul(10);
        }
        values.extend(random_values(5, 20_000));
        let mut p = Printer::default();
        for round in 0..3 {
            for &v in &values {
                let mut b = [0xaau8; LINE_ROOM];
                let n = p.field(&mut b, 5, v);
                assert_eq!(&b[5..n], format!(" {v}").as_bytes(), "{v}, round {round}");
            }
            // The next round meets some numbers in slots taken by others since.
            values.reverse();
        }
    }

    /// The remembered last field follows the records' last fields, whatever they were.
    #[test]
    fn lines_end_with_their_own_last_field() {
        let mut p = Printer::default();
        let mut a = TextBuf::default();
        let mut want = String::new();
        for (k, tail) in [0u64, 0, 7, 1_496_724_653, 1_496_724_653, 0, u64::MAX, 12]
            .into_iter()
            .enumerate()
        {
            let line = format!("E {k} {tail}");
            let Line::Canonical(r) = classify(line.as_bytes()) else {
                panic!("{line} not canonical");
            };
            p.line(&r, &mut a);
            want.push_str(&line);
            want.push('\n');
        }
        assert_eq!(String::from_utf8_lossy(a.as_slice()), want);
    }

    /// A text in a huge page holds what a text on the heap holds, also past its capacity.
    #[test]
    fn a_huge_page_text_is_a_text() {
        let mut h = TextBuf::huge_page();
        let mut t = TextBuf::default();
        assert_eq!(h.capacity(), HUGE_PAGE - LINE_ROOM);
        assert!(h.is_empty());
        for round in 0..2 {
            let mut k = 0u64;
            while h.len() < HUGE_PAGE + 5000 {
                for text in [&mut h, &mut t] {
                    let b = text.room();
                    let n = put_number(b, 0, k);
                    text.advance(n);
                    text.extend(b" x");
                    text.push(b'\n');
                }
                k += 1;
            }
            assert!(h.as_slice() == t.as_slice(), "round {round}");
            h.clear();
            t.clear();
            assert!(h.is_empty() && h.capacity() > HUGE_PAGE);
        }
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
