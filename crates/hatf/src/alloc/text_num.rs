//! Reading and writing the numbers of text traces without `str` conversions or `fmt`.
//!
//! Parsing and printing numbers was two fifths of an encode (every line is parsed, then printed
//! again to check that it is in canonical form) and most of a decode; these do the same job
//! with a few instructions per digit.

/// Appends `v` in decimal.
pub fn push_dec(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// "00" to "99": two decimal digits at a time.
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Powers of ten, for counting digits.
const POW10: [u64; 20] = {
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
/// end. Digits are written in place, two at a time, with no copy.
#[inline]
pub fn put_dec(buf: &mut [u8], at: usize, mut v: u64) -> usize {
    let end = at + dec_len(v);
    let mut i = end;
    while v >= 100 {
        let r = (v % 100) as usize;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[2 * r..2 * r + 2]);
    }
    if v >= 10 {
        let r = v as usize;
        buf[i - 2..i].copy_from_slice(&PAIRS[2 * r..2 * r + 2]);
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
#[inline]
pub fn hex_left(v: u64) -> ([u8; 16], usize) {
    let digits = ((67 - (v | 1).leading_zeros()) / 4) as usize;
    if digits <= 8 {
        // Most addresses of a 32-bit process, and sizes: half the work.
        let mut buf = [b'0'; 16];
        buf[..8].copy_from_slice(&hex8((v as u32) << (32 - 4 * digits)));
        return (buf, digits);
    }
    let (buf, _) = hex_digits(v << (64 - 4 * digits));
    (buf, digits)
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
}
