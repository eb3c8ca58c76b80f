//! Reading and writing the numbers of text traces without `str` conversions or `fmt`.
//!
//! Parsing and printing numbers was two fifths of an encode (every line is parsed, then printed
//! again to check that it is in canonical form) and most of a decode; these do the same job
//! with a few instructions per digit.

/// Appends `v` in decimal.
pub fn push_dec(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 20];
    let end = put_dec(&mut buf, 0, v);
    out.extend_from_slice(&buf[..end]);
}

/// "00" to "99": two decimal digits at a time.
pub(crate) const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// The eight decimal digits of `v` (below 10^8, leading zeros kept) as ASCII, the first digit
/// in the lowest byte: all eight at once in two 32-bit lanes, where digit pairs would take
/// four divisions.
#[inline]
pub(crate) fn eight_ascii(v: u32) -> u64 {
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

/// Powers of ten, for counting digits (and for joining the two words of a long number).
pub(crate) const POW10: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Decimal digits of `v` (1 for 0).
#[inline]
pub fn dec_len(v: u64) -> usize {
    // log10 from log2 (1233 / 4096 ≈ log10 2), then one comparison to correct it.
    let t = (((64 - (v | 1).leading_zeros()) * 1233) >> 12) as usize;
    (t + usize::from(v >= POW10[t])).max(1)
}

/// Writes `v` in decimal at `buf[at..]` (which must have room for its digits); returns the
/// end. Digits are written in place with no copy: eight at a time from the end while more than
/// eight remain (a 64-bit division per piece, not per digit pair: many trace fields are ids
/// of ten digits or more), the rest two at a time in 32-bit arithmetic.
#[inline]
pub fn put_dec(buf: &mut [u8], at: usize, v: u64) -> usize {
    const E8: u64 = 100_000_000;
    let end = at + dec_len(v);
    let mut i = end;
    let mut high = v;
    while high >= E8 {
        i -= 8;
        buf[i..i + 8].copy_from_slice(&eight_ascii((high % E8) as u32).to_le_bytes());
        high /= E8;
    }
    let mut v = high as u32;
    while v >= 100 {
        let r = (v % 100) as usize;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[2 * r..2 * r + 2]);
    }
    if v >= 10 {
        let r = v as usize;
        buf[i - 2..i].copy_from_slice(&DIGIT_PAIRS[2 * r..2 * r + 2]);
    } else {
        buf[i - 1] = b'0' + v as u8;
    }
    end
}

/// Appends `v` as lower-case hex digits with no prefix (`0` for zero), as `{:x}` would.
#[inline]
pub fn push_hex(out: &mut Vec<u8>, v: u64) {
    let (buf, start) = hex_digits(v);
    out.extend_from_slice(&buf[start..]);
}

/// The 16 hex digits of `v` (lower case, zero-padded) and where its shortest form starts.
///
/// Decoding prints two hex numbers per `mtrace` line; spreading the nibbles of each half
/// into bytes and turning them into digits with a few word-wide operations (no loop, no
/// table) keeps that to a handful of instructions.
#[inline]
pub fn hex_digits(v: u64) -> ([u8; 16], usize) {
    let mut buf = [0u8; 16];
    buf[..8].copy_from_slice(&hex8((v >> 32) as u32));
    buf[8..].copy_from_slice(&hex8(v as u32));
    let digits = ((67 - (v | 1).leading_zeros()) / 4) as usize;
    (buf, 16 - digits)
}

/// The hex digits of `v` (its shortest form, as [`push_hex`] prints it) at the start of 16
/// bytes, and how many there are: for printing with one fixed-length copy whose zeros past the
/// digits are overwritten by what is printed next.
#[inline(always)]
pub fn hex_left(v: u64) -> ([u8; 16], usize) {
    // Shifting the leading zero nibbles out puts the first digit first; the zeros shifted in
    // print as the `0`s past the digits.
    let zeros = (v | 1).leading_zeros();
    (hex16(v << (zeros & !3)), 16 - (zeros / 4) as usize)
}

/// The 16 hex digits of `v` (lower case, zero-padded, most significant first), with SSE2 (part
/// of every x86-64 processor): a decode prints one or two addresses a line, and spreading the
/// nibbles and turning them into digits a whole vector at a time takes about a dozen
/// instructions, where two 8-digit words take over thirty.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hex16(v: u64) -> [u8; 16] {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_cvtsi64_si128, _mm_set1_epi8,
        _mm_srli_epi64, _mm_storeu_si128, _mm_unpacklo_epi8,
    };
    let mut out = [0u8; 16];
    // SAFETY: SSE2 is enabled on every x86_64 target; the one store writes the 16 bytes of
    // `out`.
    unsafe {
        // The most significant byte first, so that its nibbles become the first two digits.
        let x = _mm_cvtsi64_si128(v.swap_bytes() as i64);
        let low4 = _mm_set1_epi8(0x0f);
        let high = _mm_and_si128(_mm_srli_epi64::<4>(x), low4);
        let low = _mm_and_si128(x, low4);
        // Byte 2k is the high nibble of byte k, 2k + 1 its low nibble.
        let nibbles = _mm_unpacklo_epi8(high, low);
        // `0` to `9` from `'0'`, and `a` to `f` from `'a' - 10` (`'0'` plus 39).
        let letters = _mm_and_si128(
            _mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)),
            _mm_set1_epi8((b'a' - b'0' - 10) as i8),
        );
        let digits = _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8(b'0' as i8)), letters);
        _mm_storeu_si128(out.as_mut_ptr().cast::<__m128i>(), digits);
    }
    out
}

/// The 16 hex digits of `v` (portable form).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn hex16(v: u64) -> [u8; 16] {
    hex_digits(v).0
}

/// For each number below 256: its hex digits in the low bytes, then a zero byte, and in the
/// top byte how many digits there are. Nearly every size of an `mtrace` line is below 0x100:
/// one load and one 4-byte store print them, where
/// spreading the nibbles of a word was two dozen instructions.
static HEX2: [u32; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut t = [0u32; 256];
    let mut v = 0;
    while v < 256 {
        let (high, low) = (DIGITS[v >> 4] as u32, DIGITS[v & 15] as u32);
        t[v] = if v < 16 {
            low | 1 << 24
        } else {
            high | low << 8 | 2 << 24
        };
        v += 1;
    }
    t
};

/// The lower-case hex digits of `v` in the low bytes of a word (the first digit lowest), and
/// how many there are, for `v` below 256 (`None` from there on); the bytes past the digits
/// hold anything. Made for one 4-byte store whose bytes past the number are overwritten by
/// what is printed next.
#[inline(always)]
pub fn hex_short(v: u64) -> Option<(u32, usize)> {
    let entry = *HEX2.get(usize::try_from(v).ok()?)?;
    Some((entry, (entry >> 24) as usize))
}

/// For each number below 1000: its decimal digits in the low bytes, then bytes left zero up
/// to the top byte, which holds how many digits there are. Most sizes of a `memory_replay`
/// line are below 1000: one load and one 4-byte store print them.
static DEC3: [u32; 1000] = {
    let mut t = [0u32; 1000];
    let mut v = 0;
    while v < 1000 {
        let len = if v < 10 {
            1
        } else if v < 100 {
            2
        } else {
            3
        };
        let (mut k, mut x, mut entry) = (len, v, (len as u32) << 24);
        while k > 0 {
            k -= 1;
            entry |= (b'0' as u32 + (x % 10) as u32) << (8 * k);
            x /= 10;
        }
        t[v] = entry;
        v += 1;
    }
    t
};

/// The eight decimal digits of `v` (below 10^8, leading zeros kept) as byte values 0 to 9,
/// the first digit in the lowest byte: no loop, no table, no division instruction.
#[inline(always)]
fn dec8_values(v: u64) -> u64 {
    // Two 32-bit lanes of four digits each, the leading four in the low lane.
    let x = (v / 10_000) | ((v % 10_000) << 32);
    // x / 100 in each lane: exact below 10^4, as 5243 / 2^19 is 1/100 within 2.1e-7; the
    // products stay below 2^26, inside their lane.
    let hundreds = ((x * 5243) >> 19) & 0x0000_007f_0000_007f;
    let x = hundreds | ((x - hundreds * 100) << 16);
    // x / 10 in each 16-bit lane: exact below 100 (103 / 2^10).
    let tens = ((x * 103) >> 10) & 0x000f_000f_000f_000f;
    tens | ((x - tens * 10) << 8)
}

/// The decimal digits of `v` in the low bytes of a word (the first digit lowest), and how
/// many there are, for `v` below 10^8 (`None` from there on); the bytes past the digits hold
/// anything. Made for one 8-byte store whose bytes past the number are overwritten by
/// what is printed next: a number below 1000 (most sizes of a `memory_replay` line) is one
/// table entry, a longer one eight digits made at once and its leading zeros shifted out, where [`put_dec`] takes a division and a table look-up per two digits
/// and a loop.
#[inline(always)]
pub fn dec_left(v: u64) -> Option<(u64, usize)> {
    if v < 1000 {
        let entry = DEC3[v as usize];
        return Some((u64::from(entry), (entry >> 24) as usize));
    }
    if v < 100_000_000 {
        let values = dec8_values(v);
        // Leading zero digits are the zero bytes at the low end (`v` >= 1000: not all).
        let zeros = values.trailing_zeros() & !7;
        let digits = (values | 0x3030_3030_3030_3030) >> zeros;
        return Some((digits, 8 - (zeros / 8) as usize));
    }
    None
}

/// The 8 hex digits of `v`, most significant first.
#[inline]
fn hex8(v: u32) -> [u8; 8] {
    // Nibble k of `v` into byte k of `x`.
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Each byte is 0..=15: add '0', and 'a' - '0' - 10 more for 10..=15 (whose bit 4 is set
    // after adding 6).
    let letters = ((x + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
    (x + 0x3030_3030_3030_3030 + letters * (b'a' - b'0' - 10) as u64).to_be_bytes()
}

/// Appends `v` as `0x` and lower-case hex digits, as `{:#x}` would.
pub fn push_0x(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(b"0x");
    push_hex(out, v);
}

/// The value of ASCII decimal digits: 1 to 20 of them, nothing else, no overflow.
pub fn parse_dec(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 20 {
        return None;
    }
    let mut v = 0u64;
    for &b in t {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// The value of 1 to 16 hex digits of either case (no prefix, no sign).
pub fn parse_hex_digits(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &b in t {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

/// Eight bytes of text as one word, the first byte in the low bits.
///
/// The one-pass line parsers read numbers a word at a time: classifying and converting eight
/// digits with a few word-wide operations instead of a loop of table look-ups per digit, which
/// would be a third of a parsing worker.
#[inline(always)]
pub fn word_at(text: &[u8], at: usize) -> u64 {
    match text.get(at..at + 8) {
        Some(w) => u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]),
        // Near the end of the text: the bytes past it read as zero, which no digit, letter or
        // separator is.
        None => {
            let mut w = [0u8; 8];
            let rest = text.get(at..).unwrap_or(&[]);
            w[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(w)
        }
    }
}

/// `0x80` in every byte (the flag bit of the per-byte tests below).
const HIGH: u64 = 0x8080_8080_8080_8080;
/// `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// `0x7f` in every byte.
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// Per byte of `w`: `0x80` when its low 7 bits are at least `lo`, else 0 (for `lo` ≤ 0x80; no
/// carry crosses bytes, as each sum is at most 0xff).
#[inline]
fn at_least(w7: u64, lo: u8) -> u64 {
    (w7 + ONES * u64::from(0x80 - lo)) & HIGH
}

/// Per byte of `w`: `0x80` when it is not an ASCII decimal digit, else 0.
#[inline]
pub fn not_dec_digits(w: u64) -> u64 {
    let w7 = w & LOW7;
    let digit = at_least(w7, b'0') & !at_least(w7, b'9' + 1);
    !(digit & !w) & HIGH
}

/// Per byte of `w`: `0x80` when it is not a lower-case hex digit (`0-9`, `a-f`), else 0.
#[inline]
pub fn not_lower_hex_digits(w: u64) -> u64 {
    let w7 = w & LOW7;
    let digit = at_least(w7, b'0') & !at_least(w7, b'9' + 1);
    let letter = at_least(w7, b'a') & !at_least(w7, b'f' + 1);
    !((digit | letter) & !w) & HIGH
}

/// The value of the decimal number whose digits are the bytes of `w`, the most significant in
/// the low byte; every byte is an ASCII digit or 0 (a leading zero).
#[inline]
pub fn dec_value8(w: u64) -> u64 {
    // Pairs of digits, then pairs of pairs, then the two halves: each step multiplies the more
    // significant part by its weight and adds the other in the same multiplication.
    let v = ((w & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul((10 << 8) | 1)) >> 8;
    let v = ((v & 0x00ff_00ff_00ff_00ff).wrapping_mul((100 << 16) | 1)) >> 16;
    ((v & 0x0000_ffff_0000_ffff).wrapping_mul((10000 << 32) | 1)) >> 32
}

/// The value of the hex number whose digits are the bytes of `w`, the most significant in the
/// low byte; every byte is a lower-case hex digit or 0 (a leading zero).
#[inline]
pub fn hex_value8(w: u64) -> u64 {
    // `a`-`f` have bit 6 set and 1-6 in the low nibble: add 9 to those.
    let v = (w & 0x0f0f_0f0f_0f0f_0f0f) + ((w >> 6) & ONES) * 9;
    let v = ((v << 4) | (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = ((v << 8) | (v >> 16)) & 0x0000_ffff_0000_ffff;
    ((v << 16) | (v >> 32)) & 0xffff_ffff
}

/// Which bytes of 32 bytes of text are decimal digits, lower-case hex letters (`a`-`f`) and
/// spaces: bit `i` of each mask for byte `i`.
///
/// A line parser finds its fields' ends and checks their digits with a few bit operations on
/// these, instead of testing the bytes one at a time (a quarter of a parsing worker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classes {
    /// `0`-`9`.
    pub digits: u32,
    /// `a`-`f`.
    pub letters: u32,
    /// ` `.
    pub spaces: u32,
}

/// The [`Classes`] of `b`: 16 bytes at a time with SSE2 (part of every x86-64 processor).
#[cfg(target_arch = "x86_64")]
#[inline]
pub fn classes(b: &[u8; 32]) -> Classes {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
        _mm_sub_epi8,
    };
    let mut c = Classes {
        digits: 0,
        letters: 0,
        spaces: 0,
    };
    for k in 0..2 {
        // SAFETY: SSE2 is enabled on every x86_64 target, and the unaligned load reads bytes
        // `16 * k..16 * k + 16` of `b`, which has 32.
        let (digits, letters, spaces) = unsafe {
            let v = _mm_loadu_si128(b.as_ptr().add(16 * k).cast::<__m128i>());
            // `x - lo` (wrapping) is at most `hi - lo` exactly for the bytes in `lo..=hi`.
            let in_range = |lo: u8, hi: u8| {
                let d = _mm_sub_epi8(v, _mm_set1_epi8(lo as i8));
                _mm_movemask_epi8(_mm_cmpeq_epi8(
                    _mm_min_epu8(d, _mm_set1_epi8((hi - lo) as i8)),
                    d,
                ))
            };
            (
                in_range(b'0', b'9'),
                in_range(b'a', b'f'),
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b' ' as i8))),
            )
        };
        let shift = 16 * k;
        c.digits |= u32::from(digits as u16) << shift;
        c.letters |= u32::from(letters as u16) << shift;
        c.spaces |= u32::from(spaces as u16) << shift;
    }
    c
}

/// The [`Classes`] of `b`, one byte at a time (the portable form, and the reference the SSE2
/// one is tested against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub fn classes_bytewise(b: &[u8; 32]) -> Classes {
    let mut c = Classes {
        digits: 0,
        letters: 0,
        spaces: 0,
    };
    for (i, &x) in b.iter().enumerate() {
        c.digits |= u32::from(x.is_ascii_digit()) << i;
        c.letters |= u32::from((b'a'..=b'f').contains(&x)) << i;
        c.spaces |= u32::from(x == b' ') << i;
    }
    c
}

/// The [`Classes`] of `b` (portable form).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub fn classes(b: &[u8; 32]) -> Classes {
    classes_bytewise(b)
}

/// Which bytes of 32 bytes of text are decimal digits, lower-case hex digits (`0`-`9`, `a`-`f`)
/// and newlines: bit `i` of each mask for byte `i`.
///
/// A parser that reads a short line from its start takes its length (the first newline) and
/// the extent of each of its numbers (a run of digits) from these with a few bit operations,
/// instead of classifying a word of text per number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberClasses {
    /// `0`-`9`.
    pub digits: u32,
    /// `0`-`9` and `a`-`f`.
    pub hex: u32,
    /// `\n`.
    pub newlines: u32,
}

/// The [`NumberClasses`] of `b`: 16 bytes at a time with SSE2 (part of every x86-64
/// processor).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn number_classes(b: &[u8; 32]) -> NumberClasses {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_sub_epi8,
    };
    let mut c = NumberClasses {
        digits: 0,
        hex: 0,
        newlines: 0,
    };
    for k in 0..2 {
        // SAFETY: SSE2 is enabled on every x86_64 target, and the unaligned load reads bytes
        // `16 * k..16 * k + 16` of `b`, which has 32.
        let (digits, hex, newlines) = unsafe {
            let v = _mm_loadu_si128(b.as_ptr().add(16 * k).cast::<__m128i>());
            // `x - lo` (wrapping) is at most `hi - lo` exactly for the bytes in `lo..=hi`.
            let in_range = |lo: u8, hi: u8| {
                let d = _mm_sub_epi8(v, _mm_set1_epi8(lo as i8));
                _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8((hi - lo) as i8)), d)
            };
            let digits = in_range(b'0', b'9');
            (
                _mm_movemask_epi8(digits),
                _mm_movemask_epi8(_mm_or_si128(digits, in_range(b'a', b'f'))),
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8))),
            )
        };
        let shift = 16 * k;
        c.digits |= u32::from(digits as u16) << shift;
        c.hex |= u32::from(hex as u16) << shift;
        c.newlines |= u32::from(newlines as u16) << shift;
    }
    c
}

/// The [`NumberClasses`] of `b`, one byte at a time (the portable form, and the reference the
/// SSE2 one is tested against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub fn number_classes_bytewise(b: &[u8; 32]) -> NumberClasses {
    let mut c = NumberClasses {
        digits: 0,
        hex: 0,
        newlines: 0,
    };
    for (i, &x) in b.iter().enumerate() {
        c.digits |= u32::from(x.is_ascii_digit()) << i;
        c.hex |= u32::from(x.is_ascii_digit() || (b'a'..=b'f').contains(&x)) << i;
        c.newlines |= u32::from(x == b'\n') << i;
    }
    c
}

/// The [`NumberClasses`] of `b` (portable form).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub fn number_classes(b: &[u8; 32]) -> NumberClasses {
    number_classes_bytewise(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_matches_std() {
        for v in [0u64, 1, 9, 10, 15, 16, 255, 0xb602_7400, u64::MAX, 1 << 63] {
            let mut d = Vec::new();
            push_dec(&mut d, v);
            assert_eq!(d, v.to_string().into_bytes());
            let mut h = Vec::new();
            push_0x(&mut h, v);
            assert_eq!(h, format!("{v:#x}").into_bytes());
        }
    }

    #[test]
    fn hex_matches_std_for_every_digit_count_and_nibble() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for shift in 0..64 {
            for v in [
                1u64 << shift,
                (1u64 << shift) - 1,
                u64::MAX >> shift,
                x >> shift,
            ] {
                let mut h = Vec::new();
                push_hex(&mut h, v);
                assert_eq!(h, format!("{v:x}").into_bytes());
            }
            x = x.rotate_left(7).wrapping_mul(0xff51_afd7_ed55_8ccd);
        }
        for n in 0..16u64 {
            let v = n * 0x1111_1111_1111_1111;
            assert_eq!(hex_digits(v).0, *format!("{v:016x}").as_bytes());
        }
        for v in [
            0u64,
            1,
            0xa,
            0x10,
            0xeb8,
            0x55d2_1555_94a0,
            u64::MAX,
            1 << 63,
        ] {
            let (buf, n) = hex_left(v);
            assert_eq!(&buf[..n], format!("{v:x}").as_bytes());
            assert!(buf[n..].iter().all(|&b| b == b'0'));
        }
    }

    /// Values at every length boundary of a printer with `base` digits up to `max_digits`:
    /// each power, one less, one more, and a number with every digit different from zero.
    fn boundaries(base: u64, max_digits: u32) -> Vec<u64> {
        let mut vs = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63];
        for p in 1..max_digits {
            let t = base.pow(p);
            vs.extend([
                t - 1,
                t,
                t + 1,
                t / base * (base - 1) + t / 3,
                t.saturating_mul(base - 1),
            ]);
        }
        vs
    }

    #[test]
    fn left_aligned_hex_matches_std_at_every_length() {
        let mut vs = boundaries(16, 16);
        // Every nibble value in every position.
        for shift in (0..64).step_by(4) {
            for nibble in 0..16u64 {
                vs.push(nibble << shift);
                vs.push((nibble << shift) | 1);
            }
        }
        for v in vs {
            let (buf, n) = hex_left(v);
            let want = format!("{v:x}");
            assert_eq!(&buf[..n], want.as_bytes(), "{v:#x}");
            assert!(buf[n..].iter().all(|&b| b == b'0'), "{v:#x}");
            assert_eq!(hex16(v), *format!("{v:016x}").as_bytes(), "{v:#x}");
        }
    }

    #[test]
    fn short_hex_matches_std_below_256_and_declines_the_rest() {
        for v in 0..256u64 {
            let (word, n) = hex_short(v).unwrap();
            assert_eq!(
                &word.to_le_bytes()[..n],
                format!("{v:x}").as_bytes(),
                "{v:#x}"
            );
        }
        for v in [256u64, 0x1000, u64::MAX, 1 << 32, 1 << 63] {
            assert_eq!(hex_short(v), None, "{v:#x}");
        }
    }

    #[test]
    fn left_aligned_decimal_matches_std_at_every_length() {
        for v in boundaries(10, 20) {
            let want = v.to_string();
            match dec_left(v) {
                Some((word, n)) => {
                    assert!(v < 100_000_000, "{v}");
                    assert_eq!(&word.to_le_bytes()[..n], want.as_bytes(), "{v}");
                }
                None => assert!(v >= 100_000_000, "{v}"),
            }
        }
        // Every number below 10^4 (the table and the first of the eight-digit words), and
        // the eight-digit words' lanes at their edges.
        for v in (0..10_000).chain([99_999_999, 10_009_999, 10_000_001, 12_345_678, 90_000_009]) {
            let (word, n) = dec_left(v).unwrap();
            assert_eq!(&word.to_le_bytes()[..n], v.to_string().as_bytes(), "{v}");
        }
    }

    #[test]
    fn decimal_in_place_matches_std() {
        let mut vs = vec![0u64, u64::MAX];
        for p in 0..20u32 {
            let t = 10u64.pow(p);
            vs.extend([t - 1, t, t + 1, t.wrapping_mul(7) / 3]);
        }
        for v in vs {
            let mut buf = [b'#'; 24];
            let end = put_dec(&mut buf, 2, v);
            assert_eq!(&buf[2..end], v.to_string().as_bytes(), "{v}");
            assert_eq!(dec_len(v), v.to_string().len());
            assert_eq!(buf[end..], [b'#'; 24][end..]);
        }
    }

    #[test]
    fn parsing_accepts_exactly_the_digits() {
        assert_eq!(parse_dec(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_dec(b"18446744073709551616"), None);
        assert_eq!(parse_dec(b""), None);
        assert_eq!(parse_dec(b"1a"), None);
        assert_eq!(parse_dec(b"+1"), None);
        assert_eq!(parse_hex_digits(b"DeadBeef"), Some(0xdead_beef));
        assert_eq!(parse_hex_digits(b"ffffffffffffffff"), Some(u64::MAX));
        assert_eq!(parse_hex_digits(b"10000000000000000"), None);
        assert_eq!(parse_hex_digits(b"g"), None);
        assert_eq!(parse_hex_digits(b""), None);
    }

    #[test]
    fn word_wide_reading_matches_byte_by_byte() {
        // Every byte value in every position: the per-byte tests and the SSE2 classes.
        for pos in 0..8 {
            for b in 0..=255u8 {
                let mut bytes = *b"7a 0x9f\n";
                bytes[pos] = b;
                let w = word_at(&bytes, 0);
                for (i, &x) in bytes.iter().take(8).enumerate() {
                    let flag = |m: u64| m >> (8 * i) & 0xff;
                    assert_eq!(flag(not_dec_digits(w)) == 0, x.is_ascii_digit(), "{x}");
                    let hex = x.is_ascii_digit() || (b'a'..=b'f').contains(&x);
                    assert_eq!(flag(not_lower_hex_digits(w)) == 0, hex, "{x}");
                }
                let mut block = [b'x'; 32];
                block[pos * 3..pos * 3 + 8].copy_from_slice(&bytes[..8]);
                block[31 - pos] = b;
                assert_eq!(classes(&block), classes_bytewise(&block));
                assert_eq!(number_classes(&block), number_classes_bytewise(&block));
            }
        }
        // Short texts read as zero past their end.
        assert_eq!(word_at(b"12", 0), u64::from_le_bytes(*b"12\0\0\0\0\0\0"));
        assert_eq!(word_at(b"12", 2), 0);
        for v in [0u64, 1, 7, 10, 99_999_999, 12_345_678, 0xffff_ffff, 0xabc] {
            let dec = format!("{v:08}");
            if dec.len() == 8 {
                assert_eq!(dec_value8(word_at(dec.as_bytes(), 0)), v);
            }
            let hex = format!("{v:08x}");
            if hex.len() == 8 {
                assert_eq!(hex_value8(word_at(hex.as_bytes(), 0)), v);
            }
        }
    }
}
