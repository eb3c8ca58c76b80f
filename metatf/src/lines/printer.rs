//! Spelling a record as its line: the inverse of the matcher for every line the encoder keeps
//! as a record (the encoder checks this on each line before trusting it).

use metatf_dtd::lines::{Digits, LinePiece, LineRecord, NumberSpelling};

use crate::universal::Value;

/// Appends the line of `rec` holding `values` to `out` (no line ending). The error says which
/// value does not fit the pattern.
pub fn print(rec: &LineRecord, values: &[Value], out: &mut Vec<u8>) -> Result<(), String> {
    for piece in &rec.pieces {
        match piece {
            LinePiece::Literal(l) => out.extend_from_slice(l),
            LinePiece::Number { field, spelling } => match values.get(*field) {
                Some(Value::Uint(v)) => spell(*v, spelling, out)
                    .map_err(|e| format!("record `{}`: field {}: {e}", rec.name, field + 1))?,
                _ => {
                    return Err(format!(
                        "record `{}`: field {} is not a number",
                        rec.name,
                        field + 1
                    ))
                }
            },
            LinePiece::Spaces { field } => match values.get(*field) {
                Some(Value::Uint(n)) if (1..=super::MAX_LINE as u64).contains(n) => {
                    out.extend(std::iter::repeat_n(b' ', *n as usize));
                }
                _ => {
                    return Err(format!(
                        "record `{}`: field {} is not a count of spaces (1 to {})",
                        rec.name,
                        field + 1,
                        super::MAX_LINE
                    ))
                }
            },
            LinePiece::Bytes { field, .. } => match values.get(*field) {
                Some(Value::Bytes(b)) => out.extend_from_slice(b),
                _ => {
                    return Err(format!(
                        "record `{}`: field {} is not a byte string",
                        rec.name,
                        field + 1
                    ))
                }
            },
        }
    }
    Ok(())
}

/// Appends `v` spelled as `s`.
pub fn spell(v: u64, s: &NumberSpelling, out: &mut Vec<u8>) -> Result<(), String> {
    let (negative, mut magnitude) = if s.signed && (v as i64) < 0 {
        (true, (v as i64).unsigned_abs())
    } else {
        (false, v)
    };
    // A clock or fixed-point spelling: the bytes after the integer part (`:MM:SS`, `.` and
    // the fraction), written after it, and the integer part left in `magnitude`.
    let mut tail = [0u8; 32];
    let mut tail_len = 0;
    if s.clock || s.fraction > 0 {
        let k = usize::from(s.fraction);
        if k > 0 {
            let scale = 10u64.pow(u32::from(s.fraction));
            let mut frac = magnitude % scale;
            magnitude /= scale;
            tail_len = 1 + k;
            tail[0] = b'.';
            for d in tail[1..=k].iter_mut().rev() {
                *d = b'0' + (frac % 10) as u8;
                frac /= 10;
            }
        }
        if s.clock {
            let (minutes, seconds) = ((magnitude / 60) % 60, magnitude % 60);
            magnitude /= 3600;
            tail.copy_within(0..tail_len, 6);
            tail[..6].copy_from_slice(&[
                b':',
                b'0' + (minutes / 10) as u8,
                b'0' + (minutes % 10) as u8,
                b':',
                b'0' + (seconds / 10) as u8,
                b'0' + (seconds % 10) as u8,
            ]);
            tail_len += 6;
        }
    }
    let sign_and_prefix = usize::from(negative) + if s.prefix { 2 } else { 0 };
    // The sign and prefix are written after the digits are counted, so that a spaced spelling
    // knows how many spaces go before them.
    let digits: &[u8; 16] = if s.upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    // Digits are written from the end of the buffer; the two radixes get their own loops so
    // that the division is by a constant (a shift for 16), which decoding spends much time on.
    let mut buf = [0u8; 64];
    let mut start = buf.len();
    let mut m = magnitude;
    if s.radix == 16 {
        loop {
            start -= 1;
            buf[start] = digits[(m & 15) as usize];
            m >>= 4;
            if m == 0 {
                break;
            }
        }
    } else {
        loop {
            start -= 1;
            buf[start] = digits[(m % 10) as usize];
            m /= 10;
            if m == 0 {
                break;
            }
        }
    }
    let n = buf.len() - start;
    if let Digits::Spaced(w) = s.digits {
        let spaces = usize::from(w).saturating_sub(sign_and_prefix + n + tail_len);
        out.extend(std::iter::repeat_n(b' ', spaces));
    }
    if negative {
        out.push(b'-');
    }
    if s.prefix {
        out.extend_from_slice(b"0x");
    }
    let pad = match s.digits {
        Digits::Minimal | Digits::Spaced(_) => 0,
        Digits::AtLeast(w) => usize::from(w).saturating_sub(n),
        Digits::Exactly(w) => {
            if n > usize::from(w) {
                return Err(format!("{v} needs more than {w} digits"));
            }
            usize::from(w) - n
        }
    };
    out.extend(std::iter::repeat_n(b'0', pad));
    out.extend_from_slice(&buf[start..]);
    out.extend_from_slice(&tail[..tail_len]);
    Ok(())
}
