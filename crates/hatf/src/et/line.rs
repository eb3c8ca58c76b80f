//! One line of an Elephant Tracks text trace: what kind it is and its numeric fields.

/// The record kinds of ET2/ET3 text traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `N obj size type site length thread`: object allocation.
    N,
    /// `A obj size type site length thread`: array allocation.
    A,
    /// `D obj thread time` or `D obj thread time size`: death.
    D,
    /// `U` pointer update; field order depends on the dialect.
    U,
    /// `M method receiver thread`: method entry.
    M,
    /// `E method thread`: method exit.
    E,
    /// `W obj class thread`: witness (object seen with its class).
    W,
    /// `T method receiver exception thread`: exception thrown.
    T,
    /// `H method receiver exception thread`: exception handled.
    H,
    /// `X method receiver exception thread`: method left by an exception.
    X,
}

impl Kind {
    /// The letter starting the line.
    pub fn letter(self) -> u8 {
        match self {
            Kind::N => b'N',
            Kind::A => b'A',
            Kind::D => b'D',
            Kind::U => b'U',
            Kind::M => b'M',
            Kind::E => b'E',
            Kind::W => b'W',
            Kind::T => b'T',
            Kind::H => b'H',
            Kind::X => b'X',
        }
    }

    /// The kind starting with `letter`.
    pub fn from_letter(letter: u8) -> Option<Kind> {
        Some(match letter {
            b'N' => Kind::N,
            b'A' => Kind::A,
            b'D' => Kind::D,
            b'U' => Kind::U,
            b'M' => Kind::M,
            b'E' => Kind::E,
            b'W' => Kind::W,
            b'T' => Kind::T,
            b'H' => Kind::H,
            b'X' => Kind::X,
            _ => return None,
        })
    }

    /// Field counts (after the letter) this kind may have.
    pub fn arities(self) -> &'static [usize] {
        match self {
            Kind::N | Kind::A => &[6],
            Kind::D => &[3, 4],
            Kind::U | Kind::T | Kind::H | Kind::X => &[4],
            Kind::M | Kind::W => &[3],
            Kind::E => &[2],
        }
    }
}

/// Most fields any record has.
pub const MAX_FIELDS: usize = 6;

/// A parsed record: its kind and numeric fields in text order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// What the line is.
    pub kind: Kind,
    /// Number of fields used in `fields`.
    pub len: usize,
    /// The fields, in the order they appear on the line.
    pub fields: [u64; MAX_FIELDS],
}

impl Record {
    /// The fields that are present.
    pub fn fields(&self) -> &[u64] {
        &self.fields[..self.len]
    }
}

/// What one line (without its `\n`) is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A record written exactly as [`render`] writes it.
    Canonical(Record),
    /// A record whose spelling differs from [`render`] (extra blanks, leading zeros, `\r`, ...).
    Spelled(Record),
    /// An empty line.
    Blank,
    /// A line starting with `#`.
    Comment,
    /// A line of white space only (spaces, tabs, a `\r`).
    WhiteSpace,
    /// Anything else: the 1-based byte column where parsing failed and why.
    Bad {
        /// 1-based byte column of the problem.
        column: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Parses one line (without the trailing `\n`).
pub fn classify(line: &[u8]) -> Line {
    if line.is_empty() {
        return Line::Blank;
    }
    if line[0] == b'#' {
        return Line::Comment;
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::WhiteSpace;
    }
    if let Some(r) = parse_canonical(line) {
        return Line::Canonical(r);
    }
    match parse_loose(line) {
        Ok(r) => Line::Spelled(r),
        Err((column, reason)) => Line::Bad { column, reason },
    }
}

/// The fast path: `K` then single spaces and canonical decimal numbers, nothing else.
fn parse_canonical(line: &[u8]) -> Option<Record> {
    let kind = Kind::from_letter(line[0])?;
    let mut fields = [0u64; MAX_FIELDS];
    let mut len = 0;
    let mut i = 1;
    while i < line.len() {
        if line[i] != b' ' || len == MAX_FIELDS {
            return None;
        }
        i += 1;
        let start = i;
        let mut v: u64 = 0;
        while i < line.len() && line[i].is_ascii_digit() {
            v = v.checked_mul(10)?.checked_add(u64::from(line[i] - b'0'))?;
            i += 1;
        }
        let digits = i - start;
        if digits == 0 || (digits > 1 && line[start] == b'0') {
            return None;
        }
        fields[len] = v;
        len += 1;
    }
    if !kind.arities().contains(&len) {
        return None;
    }
    Some(Record { kind, len, fields })
}

/// The tolerant path: whitespace-separated tokens, numbers with optional leading zeros or `+`.
fn parse_loose(line: &[u8]) -> Result<Record, (usize, String)> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < line.len() && !line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > start {
            tokens.push((start, &line[start..i]));
        }
    }
    let Some(&(kstart, ktok)) = tokens.first() else {
        return Err((1, "line holds only white space".to_string()));
    };
    let kind = match ktok {
        [b] => Kind::from_letter(*b),
        _ => None,
    }
    .ok_or_else(|| {
        (
            kstart + 1,
            format!(
                "`{}` is not a record letter (N A D U M E W T H X)",
                String::from_utf8_lossy(ktok)
            ),
        )
    })?;
    let mut fields = [0u64; MAX_FIELDS];
    let n = tokens.len() - 1;
    for (k, &(start, tok)) in tokens[1..].iter().enumerate() {
        let digits = tok.strip_prefix(b"+").unwrap_or(tok);
        let value = if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(digits)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
        } else {
            None
        };
        let Some(value) = value else {
            return Err((
                start + 1,
                format!(
                    "field {} of the `{}` record, `{}`, is not an unsigned decimal number",
                    k + 1,
                    kind.letter() as char,
                    String::from_utf8_lossy(tok)
                ),
            ));
        };
        if k < MAX_FIELDS {
            fields[k] = value;
        }
    }
    if !kind.arities().contains(&n) {
        let want: Vec<String> = kind.arities().iter().map(|a| a.to_string()).collect();
        return Err((
            tokens.get(1).map_or(kstart + 2, |t| t.0 + 1),
            format!(
                "a `{}` record has {} fields, this line has {n}",
                kind.letter() as char,
                want.join(" or ")
            ),
        ));
    }
    Ok(Record {
        kind,
        len: n,
        fields,
    })
}

/// Writes `r` the canonical way (no trailing newline).
pub fn render(r: &Record, out: &mut Vec<u8>) {
    out.push(r.kind.letter());
    for &v in r.fields() {
        out.push(b' ');
        push_decimal(out, v);
    }
}

/// Appends `v` in decimal.
pub fn push_decimal(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_lines_render_back() {
        for l in [
            "N 815033865 40 6 58 0 1950409828",
            "E 40 1",
            "D 1 2 3",
            "D 1 2 3 4",
            "U 0 0 0 0",
        ] {
            let Line::Canonical(r) = classify(l.as_bytes()) else {
                panic!("{l} not canonical");
            };
            let mut out = Vec::new();
            render(&r, &mut out);
            assert_eq!(out, l.as_bytes());
        }
    }

    #[test]
    fn glued_and_odd_lines() {
        assert!(matches!(
            classify(b"M 515 0 2018699554W 650023597 123 2018699554"),
            Line::Bad { column: 9, .. }
        ));
        assert!(matches!(classify(b"E 1  2"), Line::Spelled(_)));
        assert!(matches!(classify(b"E 01 2"), Line::Spelled(_)));
        assert!(matches!(classify(b"E 1 2\r"), Line::Spelled(_)));
        assert!(matches!(classify(b"E 1 2 3"), Line::Bad { .. }));
        assert!(matches!(classify(b"Q 1 2"), Line::Bad { column: 1, .. }));
        assert_eq!(classify(b""), Line::Blank);
        assert_eq!(classify(b"# x"), Line::Comment);
        assert_eq!(classify(b" \t\r"), Line::WhiteSpace);
    }
}
