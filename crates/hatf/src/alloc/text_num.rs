//! Reading and writing the numbers of text traces without `str` conversions or `fmt`.
//!
//! Parsing and printing numbers was two fifths of an encode (every line is parsed, then printed
//! again to check that it is in canonical form) and most of a decode; these do the same job
//! with a few instructions per digit.

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Appends `v` in decimal.
pub fn push_dec(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Appends `v` as lower-case hex digits with no prefix (`0` for zero), as `{:x}` would.
pub fn push_hex(out: &mut Vec<u8>, v: u64) {
    let digits = ((67 - (v | 1).leading_zeros()) / 4) as usize;
    let mut buf = [0u8; 16];
    for (i, slot) in buf[..digits].iter_mut().rev().enumerate() {
        *slot = HEX_DIGITS[((v >> (4 * i)) & 15) as usize];
    }
    out.extend_from_slice(&buf[..digits]);
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
