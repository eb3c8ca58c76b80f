//! The compiled matcher: turns one line of text into a record's values by the DTD's line
//! patterns, without backtracking and without trying every pattern on every line.
//!
//! Patterns are grouped by the first byte their line must start with; a line is tried only
//! against its first byte's group (which keeps the DTD's order, and includes the patterns that
//! start with a field). Each try is one left-to-right pass over the line.

use memchr::memmem;
use metatf_dtd::lines::{Digits, LinePiece, LineRecord, LineSpec, NumberSpelling};

use crate::universal::Value;

/// Where a pattern stopped matching a line and what it wanted there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// Byte offset in the line.
    pub at: usize,
    /// What the pattern expected, in words.
    pub expected: String,
}

/// What a pattern wanted where it stopped matching, named without building text: the encoder
/// tries several patterns on most lines and drops every miss but the strict mode's one, so the
/// words are made only by [`Matcher::explain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// The literal text of a record's piece.
    Literal {
        /// The record's index in DTD order.
        record: usize,
        /// The piece's index in the record's pattern.
        piece: usize,
    },
    /// The literal that ends a byte-string piece, somewhere after it.
    TextThen {
        /// The record's index in DTD order.
        record: usize,
        /// The byte-string piece's index (the literal is the next piece).
        piece: usize,
    },
    /// A run of spaces.
    Spaces,
    /// The end of the line.
    LineEnd,
    /// The `0x` of a prefixed hexadecimal number.
    Prefix,
    /// `count` digits of the radix.
    Digits {
        /// Hexadecimal rather than decimal.
        hex: bool,
        /// How many digits.
        count: usize,
    },
    /// Digits of a number that fits in 64 bits.
    Fits {
        /// Hexadecimal rather than decimal.
        hex: bool,
        /// A signed number (63 bits and a sign).
        signed: bool,
    },
    /// The `:` of a clock.
    Colon,
    /// A clock's minutes or seconds.
    TwoDigits,
    /// The `.` before a fraction.
    Dot,
    /// This many fraction digits.
    Fraction(usize),
    /// A time or fixed-point number that fits in 64 bits.
    TimeFits,
}

impl Want {
    /// The words for what was wanted, for the records of `records`.
    fn describe(self, records: &[LineRecord]) -> String {
        let digits = |hex: bool| {
            if hex {
                "hexadecimal digits"
            } else {
                "decimal digits"
            }
        };
        let literal = |record: usize, piece: usize| match &records[record].pieces[piece] {
            LinePiece::Literal(l) => String::from_utf8_lossy(l).escape_debug().to_string(),
            _ => String::new(),
        };
        match self {
            Want::Literal { record, piece } => format!("`{}`", literal(record, piece)),
            Want::TextThen { record, piece } => {
                format!("`{}` after the text", literal(record, piece + 1))
            }
            Want::Spaces => "one or more spaces".into(),
            Want::LineEnd => "the end of the line".into(),
            Want::Prefix => "`0x`".into(),
            Want::Digits { hex, count } => format!("{} ({count} of them)", digits(hex)),
            Want::Fits { hex, signed: false } => {
                format!("{} of a number that fits in 64 bits", digits(hex))
            }
            Want::Fits { hex, signed: true } => {
                format!("{} of a number that fits in 64 bits (signed)", digits(hex))
            }
            Want::Colon => "`:`".into(),
            Want::TwoDigits => "two digits from 00 to 59".into(),
            Want::Dot => "`.`".into(),
            Want::Fraction(k) => format!("{k} fraction digits"),
            Want::TimeFits => "a time or fixed-point number that fits in 64 bits".into(),
        }
    }
}

/// Where a try stopped: the byte offset and what was wanted there.
type Stop = (usize, Want);

/// The line patterns of a DTD, ready to match lines.
pub struct Matcher {
    records: Vec<LineRecord>,
    /// Per first byte (256 = the empty line): indices of the records to try, in DTD order.
    groups: Vec<Vec<u32>>,
    /// Compiled searchers for the literal after each byte-string field, by (record, piece).
    finders: Vec<Vec<Option<memmem::Finder<'static>>>>,
}

impl Matcher {
    /// Compiles the patterns.
    pub fn new(spec: &LineSpec) -> Matcher {
        let records = spec.records.clone();
        let mut groups = vec![Vec::new(); 257];
        for (i, r) in records.iter().enumerate() {
            match r.pieces.first() {
                Some(LinePiece::Literal(l)) => groups[usize::from(l[0])].push(i as u32),
                Some(LinePiece::Spaces { .. }) => groups[usize::from(b' ')].push(i as u32),
                None => groups[256].push(i as u32),
                _ => {
                    for g in &mut groups {
                        g.push(i as u32);
                    }
                }
            }
        }
        let finders = records
            .iter()
            .map(|r| {
                r.pieces
                    .iter()
                    .enumerate()
                    .map(|(k, p)| match (p, r.pieces.get(k + 1)) {
                        (LinePiece::Bytes { .. }, Some(LinePiece::Literal(l))) => {
                            Some(memmem::Finder::new(l).into_owned())
                        }
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        Matcher {
            records,
            groups,
            finders,
        }
    }

    /// The patterns, in DTD order.
    pub fn records(&self) -> &[LineRecord] {
        &self.records
    }

    /// The first record (in DTD order) whose pattern matches the whole `line`, with its values
    /// left in `values`.
    pub fn find(&self, line: &[u8], values: &mut Vec<Value>) -> Option<usize> {
        self.find_from(line, values, 0)
    }

    /// [`Matcher::find`] among the records from index `first` on (in DTD order): the next
    /// match after a record that matched a line but does not print it back.
    pub fn find_from(&self, line: &[u8], values: &mut Vec<Value>, first: usize) -> Option<usize> {
        let group = &self.groups[line.first().map_or(256, |&b| usize::from(b))];
        group
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| i >= first)
            .find(|&i| self.try_record(i, line, values).is_ok())
    }

    /// Why no pattern matches `line`: the miss that got furthest, naming its record.
    pub fn explain(&self, line: &[u8]) -> Miss {
        let mut values = Vec::new();
        let mut best: Option<(Stop, usize)> = None;
        for i in 0..self.records.len() {
            if let Err(stop) = self.try_record(i, line, &mut values) {
                if best.as_ref().is_none_or(|(b, _)| stop.0 > b.0) {
                    best = Some((stop, i));
                }
            }
        }
        match best {
            Some(((at, want), i)) => Miss {
                at,
                expected: format!(
                    "{} (record `{}`)",
                    want.describe(&self.records),
                    self.records[i].name
                ),
            },
            None => Miss {
                at: 0,
                expected: "a line of a record with a line pattern (the DTD has none)".into(),
            },
        }
    }

    fn try_record(&self, i: usize, line: &[u8], values: &mut Vec<Value>) -> Result<(), Stop> {
        let rec = &self.records[i];
        values.clear();
        values.resize(rec.field_count, Value::Uint(0));
        let mut pos = 0;
        for (k, piece) in rec.pieces.iter().enumerate() {
            match piece {
                LinePiece::Literal(l) => {
                    if !line[pos..].starts_with(l) {
                        let same = line[pos..]
                            .iter()
                            .zip(l.iter())
                            .take_while(|(a, b)| a == b)
                            .count();
                        return Err((
                            pos + same,
                            Want::Literal {
                                record: i,
                                piece: k,
                            },
                        ));
                    }
                    pos += l.len();
                }
                LinePiece::Number { field, spelling } => {
                    let (v, used) =
                        number(&line[pos..], spelling).map_err(|(at, want)| (pos + at, want))?;
                    values[*field] = Value::Uint(v);
                    pos += used;
                }
                LinePiece::Bytes {
                    field,
                    length_field,
                } => {
                    let end = match &self.finders[i][k] {
                        Some(f) => match f.find(&line[pos..]) {
                            Some(n) => pos + n,
                            None => {
                                return Err((
                                    line.len(),
                                    Want::TextThen {
                                        record: i,
                                        piece: k,
                                    },
                                ))
                            }
                        },
                        None => line.len(),
                    };
                    values[*length_field] = Value::Uint((end - pos) as u64);
                    values[*field] = Value::Bytes(line[pos..end].to_vec());
                    pos = end;
                }
                LinePiece::Spaces { field } => {
                    let run = line[pos..].iter().take_while(|&&b| b == b' ').count();
                    if run == 0 {
                        return Err((pos, Want::Spaces));
                    }
                    values[*field] = Value::Uint(run as u64);
                    pos += run;
                }
            }
        }
        if pos != line.len() {
            return Err((pos, Want::LineEnd));
        }
        Ok(())
    }
}

/// Reads a number spelled as `s` at the start of `text`: its value and the bytes it used, or
/// where and why it is not one.
pub fn number(text: &[u8], s: &NumberSpelling) -> Result<(u64, usize), (usize, Want)> {
    let mut pos = 0;
    if matches!(s.digits, Digits::Spaced(_)) {
        // Any run of spaces: the printer's check decides whether it was the right count.
        pos = text.iter().take_while(|&&b| b == b' ').count();
    }
    let negative = s.signed && text.get(pos) == Some(&b'-');
    if negative {
        pos += 1;
    }
    if s.prefix {
        if !text[pos..].starts_with(b"0x") {
            return Err((pos, Want::Prefix));
        }
        pos += 2;
    }
    let radix = u32::from(s.radix);
    let run = text[pos..]
        .iter()
        .take_while(|b| (**b as char).is_digit(radix))
        .count();
    let want = match s.digits {
        Digits::Exactly(n) => usize::from(n),
        _ => run.max(1),
    };
    let hex = radix == 16;
    if run < want {
        return Err((pos + run, Want::Digits { hex, count: want }));
    }
    let mut v: u64 = 0;
    for &b in &text[pos..pos + want] {
        let d = u64::from((b as char).to_digit(radix).unwrap_or(0));
        v = v
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(d))
            .ok_or((pos, Want::Fits { hex, signed: false }))?;
    }
    if s.signed {
        let limit = if negative {
            1u64 << 63
        } else {
            (1u64 << 63) - 1
        };
        if v > limit {
            return Err((pos, Want::Fits { hex, signed: true }));
        }
        if negative {
            v = v.wrapping_neg();
        }
    }
    pos += want;
    if s.clock || s.fraction > 0 {
        let (scaled, used) =
            fixed_point(v, &text[pos..], s).map_err(|(at, why)| (pos + at, why))?;
        return Ok((scaled, pos + used));
    }
    Ok((v, pos))
}

/// Reads what follows the integer part `whole` of a clock or fixed-point spelling (`:MM:SS`,
/// then `.` and the fraction digits) at the start of `text`: the value (seconds for a clock,
/// scaled by 10^fraction) and the bytes used.
fn fixed_point(whole: u64, text: &[u8], s: &NumberSpelling) -> Result<(u64, usize), Stop> {
    let too_big = |at: usize| (at, Want::TimeFits);
    let mut pos = 0;
    let mut v = whole;
    if s.clock {
        for _ in 0..2 {
            if text.get(pos) != Some(&b':') {
                return Err((pos, Want::Colon));
            }
            pos += 1;
            let two = text
                .get(pos..pos + 2)
                .filter(|d| d.iter().all(u8::is_ascii_digit));
            let part = match two {
                Some(d) if d[0] < b'6' => u64::from((d[0] - b'0') * 10 + (d[1] - b'0')),
                _ => return Err((pos, Want::TwoDigits)),
            };
            v = v
                .checked_mul(60)
                .and_then(|v| v.checked_add(part))
                .ok_or(too_big(pos))?;
            pos += 2;
        }
    }
    if s.fraction > 0 {
        if text.get(pos) != Some(&b'.') {
            return Err((pos, Want::Dot));
        }
        pos += 1;
        let k = usize::from(s.fraction);
        let digits = text
            .get(pos..pos + k)
            .filter(|d| d.iter().all(u8::is_ascii_digit));
        let Some(digits) = digits else {
            return Err((pos, Want::Fraction(k)));
        };
        let frac = digits
            .iter()
            .fold(0u64, |a, &d| a * 10 + u64::from(d - b'0'));
        v = v
            .checked_mul(10u64.pow(u32::from(s.fraction)))
            .and_then(|v| v.checked_add(frac))
            .ok_or(too_big(pos))?;
        pos += k;
    }
    Ok((v, pos))
}
