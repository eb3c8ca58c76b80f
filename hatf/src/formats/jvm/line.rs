//! One line of a JVM trace (`<type>:<time>[:field]...`), parsed and printed back.
//!
//! The field order of every record type is the seed document's (Appendix B of the TraceVis
//! thesis), which is also the order TraceVis's reader expects.

use std::io::Write;

/// The record types, in the order of their kind codes (1..=11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `VS:time`, VM start.
    Vs,
    /// `VI:time`, VM initialised.
    Vi,
    /// `VD:time`, VM death.
    Vd,
    /// `CL:time:class`, class load.
    Cl,
    /// `OA:time:class:object`, object allocation.
    Oa,
    /// `OF:time:class:object`, object freed.
    Of,
    /// `TB:time:thread`, thread start.
    Tb,
    /// `TE:time:thread`, thread stop.
    Te,
    /// `MN:time:thread:class:method:object`, method entry (object 0 = static).
    Mn,
    /// `MX:time:thread:class:method`, method exit.
    Mx,
    /// `FP:time:thread:class:method`, frame popped by an exception.
    Fp,
}

/// A field after the time stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Thread id (decimal).
    Thread,
    /// Class name (any bytes but `:` and line ends).
    Class,
    /// Method name (any bytes but `:` and line ends).
    Method,
    /// Object id (decimal).
    Object,
}

impl Kind {
    /// Every kind, in code order.
    pub const ALL: [Kind; 11] = [
        Kind::Vs,
        Kind::Vi,
        Kind::Vd,
        Kind::Cl,
        Kind::Oa,
        Kind::Of,
        Kind::Tb,
        Kind::Te,
        Kind::Mn,
        Kind::Mx,
        Kind::Fp,
    ];

    /// The kind code stored in the `kind` stream (1..=11).
    pub fn code(self) -> u8 {
        Kind::ALL.iter().position(|&k| k == self).unwrap_or(0) as u8 + 1
    }

    /// The kind of a code, if it is one.
    pub fn from_code(c: u8) -> Option<Kind> {
        Kind::ALL.get(usize::from(c).checked_sub(1)?).copied()
    }

    /// The two letters of the record type.
    pub fn letters(self) -> &'static str {
        match self {
            Kind::Vs => "VS",
            Kind::Vi => "VI",
            Kind::Vd => "VD",
            Kind::Cl => "CL",
            Kind::Oa => "OA",
            Kind::Of => "OF",
            Kind::Tb => "TB",
            Kind::Te => "TE",
            Kind::Mn => "MN",
            Kind::Mx => "MX",
            Kind::Fp => "FP",
        }
    }

    fn from_letters(t: &[u8]) -> Option<Kind> {
        Kind::ALL
            .iter()
            .copied()
            .find(|k| k.letters().as_bytes() == t)
    }

    /// The fields after the time stamp, in text order.
    pub fn fields(self) -> &'static [Field] {
        use Field::*;
        match self {
            Kind::Vs | Kind::Vi | Kind::Vd => &[],
            Kind::Cl => &[Class],
            Kind::Oa | Kind::Of => &[Class, Object],
            Kind::Tb | Kind::Te => &[Thread],
            Kind::Mn => &[Thread, Class, Method, Object],
            Kind::Mx | Kind::Fp => &[Thread, Class, Method],
        }
    }
}

/// A parsed record; fields the kind does not have are 0 or empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Record type.
    pub kind: Kind,
    /// Time stamp.
    pub time: i64,
    /// Thread id.
    pub thread: i64,
    /// Class name.
    pub class: &'a [u8],
    /// Method name.
    pub method: &'a [u8],
    /// Object id.
    pub object: i64,
}

/// How a line parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed<'a> {
    /// A record printed exactly as [`render`] prints it.
    Canonical(Record<'a>),
    /// A record TraceVis would read, spelled differently (leading zeros, `+`): kept verbatim.
    Spelled(Record<'a>),
}

pub use crate::shared::text::lines::LineError;

/// A decimal number: `Some((value, canonical))`. Java's `Long` accepts a sign and leading zeros;
/// only `-?[1-9][0-9]*|0` prints back unchanged.
fn number(t: &[u8]) -> Option<(i64, bool)> {
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v: i64 = std::str::from_utf8(t).ok()?.parse().ok()?;
    let canonical = t[0] != b'+' && (digits == b"0" && !neg || digits[0] != b'0');
    Some((v, canonical))
}

/// Parses one line without its line end.
pub fn parse(line: &[u8]) -> Result<Parsed<'_>, LineError> {
    let err = |column: usize, message: String| LineError { column, message };
    let mut parts = Vec::with_capacity(6);
    let mut start = 0;
    for p in memchr::memchr_iter(b':', line) {
        parts.push((start, &line[start..p]));
        start = p + 1;
    }
    parts.push((start, &line[start..]));
    let kind = Kind::from_letters(parts[0].1).ok_or_else(|| {
        err(
            1,
            "expected a record type (VS VI VD CL OA OF TB TE MN MX FP) followed by `:`".to_string(),
        )
    })?;
    let Some(&(at, t)) = parts.get(1) else {
        return Err(err(
            3,
            format!("`{}` needs `:<time stamp>`", kind.letters()),
        ));
    };
    let (time, mut canonical) =
        number(t).ok_or_else(|| err(at + 1, "expected a decimal time stamp".to_string()))?;
    let fields = kind.fields();
    let need = 2 + fields.len();
    if parts.len() != need {
        // Too few: the line ends where a field was due; too many: the `:` of the first extra.
        let column = parts.get(need).map_or(line.len() + 1, |&(at, _)| at);
        return Err(err(
            column,
            format!(
                "`{}` has {} fields after the time stamp, this line has {}",
                kind.letters(),
                fields.len(),
                parts.len() - 2
            ),
        ));
    }
    let mut r = Record {
        kind,
        time,
        thread: 0,
        class: b"",
        method: b"",
        object: 0,
    };
    for (&field, &(at, t)) in fields.iter().zip(&parts[2..]) {
        match field {
            Field::Class => r.class = t,
            Field::Method => r.method = t,
            Field::Thread | Field::Object => {
                let what = if field == Field::Thread {
                    "thread"
                } else {
                    "object"
                };
                let (v, c) = number(t)
                    .ok_or_else(|| err(at + 1, format!("expected a decimal {what} id")))?;
                canonical &= c;
                if field == Field::Thread {
                    r.thread = v;
                } else {
                    r.object = v;
                }
            }
        }
    }
    Ok(if canonical {
        Parsed::Canonical(r)
    } else {
        Parsed::Spelled(r)
    })
}

/// Appends the text of `r` without a line end.
pub fn render(r: &Record<'_>, out: &mut Vec<u8>) {
    let _ = write!(out, "{}:{}", r.kind.letters(), r.time);
    for &f in r.kind.fields() {
        out.push(b':');
        match f {
            Field::Thread => {
                let _ = write!(out, "{}", r.thread);
            }
            Field::Class => out.extend_from_slice(r.class),
            Field::Method => out.extend_from_slice(r.method),
            Field::Object => {
                let _ = write!(out, "{}", r.object);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_examples_print_back_exactly() {
        for l in [
            "VS:0",
            "VI:12",
            "CL:15:java/lang/Object",
            "OA:20:java/lang/String:1234567",
            "OF:99:java/lang/String:1234567",
            "TB:21:1",
            "MN:22:1:java/lang/String:<init>:1234567",
            "MN:22:1:Main:main:0",
            "MX:23:1:Main:main",
            "FP:24:1:Main:main",
            "TE:25:-3",
            "VD:30",
        ] {
            let Ok(Parsed::Canonical(r)) = parse(l.as_bytes()) else {
                panic!("{l} did not parse canonically");
            };
            let mut v = Vec::new();
            render(&r, &mut v);
            assert_eq!(v, l.as_bytes());
        }
    }

    #[test]
    fn other_spellings_are_recognised_but_not_canonical() {
        for l in ["VS:007", "TB:+1:2", "TB:1:-0"] {
            assert!(matches!(parse(l.as_bytes()), Ok(Parsed::Spelled(_))), "{l}");
        }
    }

    #[test]
    fn errors_name_the_column() {
        assert_eq!(parse(b"XX:1").unwrap_err().column, 1);
        assert_eq!(parse(b"VS").unwrap_err().column, 3);
        assert_eq!(parse(b"VS:x1").unwrap_err().column, 4);
        assert_eq!(parse(b"OA:1:C:zz").unwrap_err().column, 8);
        assert_eq!(parse(b"MX:1:2:C").unwrap_err().column, 9);
        assert_eq!(parse(b"VS:1:2").unwrap_err().column, 5);
        assert_eq!(parse(b"").unwrap_err().column, 1);
    }
}
