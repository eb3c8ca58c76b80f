//! Fixed-width integers in a trace's byte order, and the width arithmetic every interpretation
//! needs: how many bytes an unsigned or two's-complement value takes.

use crate::container::ByteOrder;

/// Reads a `width`-byte (0–8) unsigned integer from the start of `bytes`.
/// The caller guarantees `bytes.len() >= width` and `width <= 8`.
pub fn read_uint(bytes: &[u8], width: u8, order: ByteOrder) -> u64 {
    let w = usize::from(width);
    let mut v = 0u64;
    match order {
        ByteOrder::Big => {
            for &b in &bytes[..w] {
                v = (v << 8) | u64::from(b);
            }
        }
        ByteOrder::Little => {
            for &b in bytes[..w].iter().rev() {
                v = (v << 8) | u64::from(b);
            }
        }
    }
    v
}

/// Appends the low `width` bytes (0–8) of `value`.
pub fn write_uint(out: &mut Vec<u8>, value: u64, width: u8, order: ByteOrder) {
    let w = usize::from(width);
    let be = value.to_be_bytes();
    match order {
        ByteOrder::Big => out.extend_from_slice(&be[8 - w..]),
        ByteOrder::Little => out.extend(be[8 - w..].iter().rev()),
    }
}

/// Sign-extends the low `width` bytes of `stored` (two's complement) to 64 bits.
#[inline]
pub fn sign_extend(stored: u64, width: u8) -> u64 {
    match width {
        0 => 0,
        8.. => stored,
        w => {
            let bits = u32::from(w) * 8;
            let shift = 64 - bits;
            (((stored << shift) as i64) >> shift) as u64
        }
    }
}

/// Keeps only the low `width` bytes of `value`.
#[inline]
pub fn truncate(value: u64, width: u8) -> u64 {
    if width >= 8 {
        value
    } else {
        value & ((1u64 << (u32::from(width) * 8)) - 1)
    }
}

/// Fewest bytes that hold `value` unsigned (0 for 0).
pub fn unsigned_width(value: u64) -> u8 {
    ((64 - value.leading_zeros()).div_ceil(8)) as u8
}

/// Fewest bytes that hold `value` read as a signed 64-bit integer in two's complement
/// (0 for 0, 1 for -128..=127, ...).
pub fn signed_width(value: u64) -> u8 {
    let v = value as i64;
    if v == 0 {
        return 0;
    }
    // Bits needed = significant bits of the magnitude-like value plus one sign bit.
    let significant = if v < 0 {
        64 - (!v).leading_zeros()
    } else {
        64 - v.leading_zeros()
    };
    (significant + 1).div_ceil(8) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_minimal() {
        assert_eq!(unsigned_width(0), 0);
        assert_eq!(unsigned_width(255), 1);
        assert_eq!(unsigned_width(256), 2);
        assert_eq!(unsigned_width(u64::MAX), 8);
        assert_eq!(signed_width(0), 0);
        assert_eq!(signed_width(127), 1);
        assert_eq!(signed_width(128), 2);
        assert_eq!(signed_width((-128i64) as u64), 1);
        assert_eq!(signed_width((-129i64) as u64), 2);
        assert_eq!(signed_width(i64::MIN as u64), 8);
        assert_eq!(signed_width(i64::MAX as u64), 8);
    }

    #[test]
    fn every_width_and_order_round_trips() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            for w in 0..=8u8 {
                let v = truncate(0x0102_0304_0506_0708, w);
                let mut out = vec![];
                write_uint(&mut out, v, w, order);
                assert_eq!(out.len(), usize::from(w));
                assert_eq!(read_uint(&out, w, order), v);
                if w == 2 {
                    let want = if order == ByteOrder::Big {
                        [7, 8]
                    } else {
                        [8, 7]
                    };
                    assert_eq!(out, want);
                }
                let neg = (-3i64) as u64;
                if w > 0 {
                    assert_eq!(sign_extend(truncate(neg, w), w), neg);
                }
            }
        }
    }
}
