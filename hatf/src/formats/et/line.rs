//! One line of an Elephant Tracks text trace: what kind it is and its numeric fields.

use crate::shared::text::numbers::put_dec;

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
    #[inline]
    pub fn from_letter(letter: u8) -> Option<Kind> {
        // A table, not a chain of comparisons: this runs once per line.
        KIND_OF_LETTER[usize::from(letter)]
    }

    /// [`Kind::from_letter`] spelled out, for building [`KIND_OF_LETTER`].
    const fn from_letter_slow(letter: u8) -> Option<Kind> {
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

    /// Whether a record of this kind may have `len` fields (after the letter): one of
    /// [`Kind::arities`], tested with a bit mask.
    #[inline]
    pub fn takes(self, len: usize) -> bool {
        let mask: u8 = match self {
            Kind::N | Kind::A => 1 << 6,
            Kind::D => (1 << 3) | (1 << 4),
            Kind::U | Kind::T | Kind::H | Kind::X => 1 << 4,
            Kind::M | Kind::W => 1 << 3,
            Kind::E => 1 << 2,
        };
        len < 8 && mask & (1 << len) != 0
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

/// [`Kind::from_letter`] of every byte.
static KIND_OF_LETTER: [Option<Kind>; 256] = {
    let mut table = [None; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = Kind::from_letter_slow(b as u8);
        b += 1;
    }
    table
};

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
    classify_in(line, 0, line.len())
}

/// Parses the line `text[start..end]` (without its `\n`). The bytes after `end` are read, but
/// never change the result: numbers are read eight bytes at a time where `text` has them.
pub fn classify_in(text: &[u8], start: usize, end: usize) -> Line {
    let line = &text[start..end];
    if line.is_empty() {
        return Line::Blank;
    }
    if line[0] == b'#' {
        return Line::Comment;
    }
    // A canonical record starts with its letter, so it is never a line of white space; trying
    // it first spares most lines a second scan.
    if let Some(r) = parse_canonical(text, start, end) {
        return Line::Canonical(r);
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::WhiteSpace;
    }
    match parse_loose(line) {
        Ok(r) => Line::Spelled(r),
        Err((column, reason)) => Line::Bad { column, reason },
    }
}

/// How many of the 8 bytes of `chunk` (little-endian, first byte lowest) are ASCII digits
/// before the first one that is not, and the chunk with `'0'` taken from each byte.
#[inline]
fn leading_digits(chunk: u64) -> (usize, u64) {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = chunk ^ ZEROS;
    // A digit byte becomes 0..=9, so neither it nor it + 0x76 has its high bit set; every
    // other byte has one or the other. A carry out of a non-digit byte can only mark later
    // bytes, which do not matter.
    let non_digit = (x.wrapping_add(0x7676_7676_7676_7676) | x) & HIGH;
    ((non_digit.trailing_zeros() / 8) as usize, x)
}

/// The value of the first `n` (1..=8) digits of `x` (bytes already 0..=9, first digit in the
/// lowest byte).
#[inline]
fn digits_value(x: u64, n: usize) -> u64 {
    let v = x << (64 - 8 * n as u32);
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    (v.wrapping_mul(10_000) + (v >> 32)) & 0xffff_ffff
}

/// Reads the digits starting at `text[i]`, stopping at `end` or the first other byte: their
/// value (wrapped past `u64::MAX`, which the caller checks) and where they stop.
#[inline]
fn scan_number(text: &[u8], mut i: usize, end: usize) -> (u64, usize) {
    let mut v = 0u64;
    while let Some(bytes) = text.get(i..i + 8) {
        let chunk = u64::from_le_bytes([
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
        ]);
        let (n, x) = leading_digits(chunk);
        let n = n.min(end - i);
        if n == 0 {
            return (v, i);
        }
        v = v.wrapping_mul(POW10[n]).wrapping_add(digits_value(x, n));
        i += n;
        if n < 8 {
            return (v, i);
        }
    }
    while let Some(d) = text[..end]
        .get(i)
        .map(|b| b.wrapping_sub(b'0'))
        .filter(|&d| d <= 9)
    {
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    (v, i)
}

/// 10^n for n in 0..=8.
const POW10: [u64; 9] = [
    1,
    10,
    100,
    1000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The fast path: `K` then single spaces and canonical decimal numbers, nothing else.
fn parse_canonical(text: &[u8], start: usize, end: usize) -> Option<Record> {
    parse_canonical_until(text, start, end, false).map(|(r, _)| r)
}

/// The canonical record starting at `text[start]` and ending at the first `\n` (or the end of
/// `text`), if the line is one: the record and where the line ends (the `\n`'s offset, or
/// `text.len()`). The same record [`classify_in`] finds for that line, found without looking
/// for the line's end first. [`LineReader::read`] without the memory of the line before.
pub fn canonical_line_at(text: &[u8], start: usize) -> Option<(Record, usize)> {
    LineReader::default().read(text, start)
}

/// Reads canonical lines, remembering how the line before ended.
///
/// Most lines of a trace end with the same field as the line before (the thread id, constant
/// in single-threaded runs): the reader keeps the last field's text (its space, digits and
/// `\n`) and value, and a line ending with the same bytes gets the value without reading the
/// digits. This is a memory of text, not a prediction: the bytes are compared exactly, so the
/// record read is the same whatever line came before.
pub struct LineReader {
    /// The last field of the line before, with its space and `\n`, as two little-endian words
    /// (bytes past it zero), and which bytes of them count.
    tail: [u64; 2],
    tail_mask: [u64; 2],
    /// Its length in bytes (space and `\n` included) and value.
    tail_len: usize,
    tail_value: u64,
}

impl Default for LineReader {
    fn default() -> Self {
        // Matches only a field starting with a 0 byte, where a field starts with a space;
        // and even there the "line end" it gives (that 0 byte) sends the line to the general
        // reader.
        LineReader {
            tail: [0, 0],
            tail_mask: [0xff, 0],
            tail_len: 1,
            tail_value: 0,
        }
    }
}

impl LineReader {
    /// [`canonical_line_at`], the same result, faster on lines ending like the line read
    /// before.
    ///
    /// Numbers of up to 15 digits with sixteen bytes readable after their space (all but the
    /// last few lines of a block) are read here, each in one or two 8-byte words, with a
    /// loop unrolled for the kind's number of fields; any other line goes the general way
    /// ([`parse_canonical_until`]). The general loop spent about 400 instructions on a line of
    /// four fields, a loop over up to six fields about 230.
    #[inline(always)]
    pub fn read(&mut self, text: &[u8], start: usize) -> Option<(Record, usize)> {
        let kind = Kind::from_letter(*text.get(start)?)?;
        let mut fields = [0u64; MAX_FIELDS];
        let i = start + 1;
        let read = match kind {
            Kind::E => self.fields::<2>(text, i, &mut fields),
            Kind::M | Kind::W => self.fields::<3>(text, i, &mut fields),
            Kind::U | Kind::T | Kind::H | Kind::X => self.fields::<4>(text, i, &mut fields),
            Kind::N | Kind::A => self.fields::<6>(text, i, &mut fields),
            Kind::D => self.death_fields(text, i, &mut fields),
        };
        match read {
            Some((len, end)) if matches!(text.get(end), None | Some(b'\n')) => {
                Some((Record { kind, len, fields }, end))
            }
            // Another shape (more fields, odd spacing, long numbers, the end of the text):
            // the general reader decides.
            _ => parse_canonical_until(text, start, text.len(), true),
        }
    }

    /// The fields of a `D` record, three or four.
    #[inline(always)]
    fn death_fields(
        &mut self,
        text: &[u8],
        i: usize,
        fields: &mut [u64; MAX_FIELDS],
    ) -> Option<(usize, usize)> {
        let (_, i) = self.fields::<3>(text, i, fields)?;
        if text.get(i) != Some(&b' ') {
            return Some((3, i));
        }
        let (v, i) = number_at(text, i)?;
        fields[3] = v;
        Some((4, i))
    }

    /// Reads `N` fields (each a space and a number) from `text[i]` into `fields`; the field
    /// count and where the fields stop, or `None` for a shape the fast path does not read.
    #[inline(always)]
    fn fields<const N: usize>(
        &mut self,
        text: &[u8],
        mut i: usize,
        fields: &mut [u64; MAX_FIELDS],
    ) -> Option<(usize, usize)> {
        for field in fields.iter_mut().take(N - 1) {
            let (v, next) = number_at(text, i)?;
            *field = v;
            i = next;
        }
        let (v, end) = self.last_number_at(text, i)?;
        fields[N - 1] = v;
        Some((N, end))
    }

    /// [`number_at`] for what should be the last field of the line: the field of the line
    /// before when its bytes (and `\n`) are here, and else read and remembered.
    #[inline(always)]
    fn last_number_at(&mut self, text: &[u8], i: usize) -> Option<(u64, usize)> {
        let chunk = text.get(i..i + 16)?;
        let (low, high) = chunk.split_at(8);
        let (low, high) = (word(low), word(high));
        if ((low ^ self.tail[0]) & self.tail_mask[0]) | ((high ^ self.tail[1]) & self.tail_mask[1])
            == 0
        {
            return Some((self.tail_value, i + self.tail_len - 1));
        }
        let (v, end) = number_at(text, i)?;
        if text.get(end) == Some(&b'\n') && end + 1 - i <= 16 {
            self.remember(low, high, end + 1 - i, v);
        }
        Some((v, end))
    }

    /// Remembers the last field of a line: `len` bytes (at most 16: space, digits, `\n`) of
    /// the words `low` and `high`, whose value is `value`.
    #[inline(never)]
    fn remember(&mut self, low: u64, high: u64, len: usize, value: u64) {
        let mask = |bytes: usize| match bytes {
            0 => 0,
            8.. => u64::MAX,
            n => (1u64 << (8 * n)) - 1,
        };
        self.tail_mask = [mask(len), mask(len.saturating_sub(8))];
        self.tail = [low & self.tail_mask[0], high & self.tail_mask[1]];
        self.tail_len = len;
        self.tail_value = value;
    }
}

/// A field at `text[i]`: a space and a canonical number of 1 to 15 digits, with sixteen bytes
/// readable from the space. Its value and where its digits stop, or `None` when it is not
/// such a field (the general reader decides what it is).
#[inline(always)]
fn number_at(text: &[u8], i: usize) -> Option<(u64, usize)> {
    let chunk = text.get(i..i + 17)?;
    if chunk[0] != b' ' {
        return None;
    }
    let (low, high) = chunk[1..].split_at(8);
    let (n, x) = leading_digits(word(low));
    // No digits, or a leading zero (a first digit 0 followed by another digit).
    if n == 0 || (n > 1 && x & 0xff == 0) {
        return None;
    }
    if n < 8 {
        return Some((digits_value(x, n), i + 1 + n));
    }
    let (m, y) = leading_digits(word(high));
    match m {
        0 => Some((digits_value(x, 8), i + 9)),
        8 => None,
        m => Some((
            digits_value(x, 8) * POW10[m] + digits_value(y, m),
            i + 9 + m,
        )),
    }
}

/// The eight bytes of `bytes` (exactly eight) as a little-endian word.
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(bytes);
    u64::from_le_bytes(w)
}

/// [`parse_canonical`] of `text[start..end]`, or, with `to_newline`, of the line starting at
/// `start` and ending at the first `\n` before `end`; also returns where the line ended.
#[inline]
fn parse_canonical_until(
    text: &[u8],
    start: usize,
    end: usize,
    to_newline: bool,
) -> Option<(Record, usize)> {
    let kind = Kind::from_letter(*text.get(start)?)?;
    let mut fields = [0u64; MAX_FIELDS];
    let mut len = 0;
    let mut i = start + 1;
    while i < end {
        if to_newline && text[i] == b'\n' {
            break;
        }
        if text[i] != b' ' || len == MAX_FIELDS {
            return None;
        }
        i += 1;
        let first = i;
        let (mut v, stop) = scan_number(text, i, end);
        i = stop;
        let digits = &text[first..i];
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        // 19 digits cannot overflow; a longer number is read again, checked.
        if digits.len() > 19 {
            v = digits.iter().try_fold(0u64, |v, &b| {
                v.checked_mul(10)?.checked_add(u64::from(b - b'0'))
            })?;
        }
        fields[len] = v;
        len += 1;
    }
    if !kind.takes(len) {
        return None;
    }
    Some((Record { kind, len, fields }, i))
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

/// Longest canonical line: a letter, then up to six fields of a space and 20 digits, and `\n`.
const LINE_MAX: usize = 1 + MAX_FIELDS * 21 + 1;

/// Writes `r` the canonical way (no trailing newline).
pub fn render(r: &Record, out: &mut Vec<u8>) {
    let mut buf = [0u8; LINE_MAX];
    let n = render_into(r, &mut buf);
    out.extend_from_slice(&buf[..n]);
}

/// Writes `r` the canonical way and a `\n`.
pub fn render_line(r: &Record, out: &mut Vec<u8>) {
    let mut buf = [0u8; LINE_MAX];
    let n = render_into(r, &mut buf);
    buf[n] = b'\n';
    out.extend_from_slice(&buf[..n + 1]);
}

/// The line into `buf` (whole lines are appended at once: a copy per number would be a tenth
/// of a decode); returns its length.
#[inline]
fn render_into(r: &Record, buf: &mut [u8; LINE_MAX]) -> usize {
    buf[0] = r.kind.letter();
    let mut n = 1;
    for &v in r.fields() {
        buf[n] = b' ';
        n += 1;
        n = put_dec(buf, n, v);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks the lines of `text`, checking that `read` (a quick reader, called at the start
    /// of each line) finds a canonical line, ending where the line ends, exactly where
    /// classifying the line alone finds one; returns how many it found.
    fn canonical_as_classified(
        text: &[u8],
        mut read: impl FnMut(&[u8], usize) -> Option<(Record, usize)>,
    ) -> usize {
        let (mut start, mut canonical) = (0, 0);
        while start < text.len() {
            let end = text[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |p| start + p);
            let want = classify(&text[start..end]);
            match read(text, start) {
                Some((r, e)) => {
                    assert_eq!(e, end, "line at {start}");
                    assert_eq!(want, Line::Canonical(r), "line at {start}");
                    canonical += 1;
                }
                None => assert!(!matches!(want, Line::Canonical(_)), "line at {start}"),
            }
            start = end + 1;
        }
        canonical
    }

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

    /// The eight-bytes-at-a-time reader agrees with the plain line parse, for numbers of
    /// every length followed by every kind of byte, at the end of the text or not.
    #[test]
    fn numbers_read_in_chunks() {
        let mut numbers = vec![u64::MAX, u64::MAX / 10, 10_000_000_000_000_000_000];
        let mut v = 7u64;
        for len in 1..=19u64 {
            numbers.push(v);
            v = v * 10 + len % 10;
        }
        for v in numbers {
            for after in ["", " 1", "\r", "x", "0", " "] {
                for pad in ["", "\n", "\n12345678901234567890 9", "9999999999"] {
                    let line = format!("E 1 {v}{after}");
                    let text = format!("{line}{pad}");
                    let got = classify_in(text.as_bytes(), 0, line.len());
                    assert_eq!(got, classify(line.as_bytes()), "{line:?} + {pad:?}");
                    if after.is_empty() {
                        assert!(
                            matches!(got, Line::Canonical(r) if r.fields[1] == v),
                            "{line:?} {got:?}"
                        );
                    }
                }
            }
        }
    }

    /// The word-at-a-time reader of [`canonical_line_at`] agrees with classifying each line,
    /// on random lines of every shape: numbers of 0 to 22 digits (leading zeros, past
    /// `u64::MAX`), odd separators, wrong field counts, lines near the end of the text.
    #[test]
    fn canonical_line_at_agrees_with_classify() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = move |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut text = Vec::new();
        for _ in 0..20_000 {
            text.push(b"NADUMEWTHXQ"[next(11) as usize]);
            for _ in 0..next(8) {
                let sep: &[u8] = match next(40) {
                    0 => b"  ",
                    1 => b"\t",
                    2 => b"",
                    _ => b" ",
                };
                text.extend_from_slice(sep);
                let digits = match next(6) {
                    0 => next(23),
                    1 | 2 => 9 + next(2),
                    _ => 1 + next(4),
                };
                for k in 0..digits {
                    let d = if k == 0 && next(20) != 0 {
                        1 + next(9)
                    } else {
                        next(10)
                    };
                    text.push(b'0' + d as u8);
                }
            }
            if next(50) == 0 {
                text.push(b'\r');
            }
            text.push(b'\n');
        }
        // The last lines again without the final newline: every distance from the end.
        text.extend_from_slice(b"E 1234567890123 4294967295\nM 18446744073709551615 0 7");
        let canonical = canonical_as_classified(&text, canonical_line_at);
        assert!(canonical > 1000, "{canonical} canonical lines");
    }

    /// One reader over many lines, most ending like the line before (a few thread ids, some
    /// with spaces, `\r`, leading zeros or other fields glued on), reads each line as
    /// classifying it alone does.
    #[test]
    fn reader_remembering_line_ends_agrees_with_classify() {
        let mut x = 0x0bad_5eed_1234_5678u64;
        let mut next = move |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let tails: [&[u8]; 9] = [
            b" 1496724653",
            b" 1496724653",
            b" 149672465",
            b" 14967246530",
            b" 7",
            b" 12345678901234",
            b" 123456789012345",
            b" 01496724653",
            b" 1496724653\r",
        ];
        let mut text = Vec::new();
        for _ in 0..30_000 {
            let kind = b"NADUMEWTHX"[next(10) as usize];
            text.push(kind);
            // The right field count mostly, sometimes one more or one fewer.
            let arity = Kind::from_letter(kind).map_or(3, |k| k.arities()[0]) as u64;
            let fields = match next(8) {
                0 => arity - 1,
                1 => arity + 1,
                _ => arity,
            };
            for _ in 1..fields {
                text.push(b' ');
                let v = match next(4) {
                    0 => next(10),
                    1 => 1 << 31 | next(1 << 31),
                    _ => next(100_000),
                };
                text.extend_from_slice(v.to_string().as_bytes());
            }
            text.extend_from_slice(tails[next(tails.len() as u64) as usize]);
            text.push(b'\n');
        }
        let mut reader = LineReader::default();
        let canonical = canonical_as_classified(&text, |t, at| reader.read(t, at));
        assert!(canonical > 10_000, "{canonical} canonical lines");
    }

    /// Finding a canonical line without its end first gives what classifying the line gives.
    #[test]
    fn canonical_lines_found_in_place() {
        let text = b"E 1 2\nE 1  2\nW 3 4 5\n\n# c\nE 01 2\nD 1 2 3 4\nE 1 2\rE 1 2";
        assert_eq!(canonical_as_classified(text, canonical_line_at), 3);
    }

    /// The bit-mask test of field counts and the letter table say what the lists say.
    #[test]
    fn kinds_by_table_and_mask() {
        for b in 0..=255u8 {
            assert_eq!(Kind::from_letter(b), Kind::from_letter_slow(b), "{b}");
            if let Some(kind) = Kind::from_letter(b) {
                assert_eq!(kind.letter(), b);
                for len in 0..=12 {
                    assert_eq!(kind.takes(len), kind.arities().contains(&len), "{b} {len}");
                }
            }
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
        // The largest number is canonical; one more is not a number at all.
        assert!(matches!(
            classify(b"E 18446744073709551615 1"),
            Line::Canonical(Record {
                fields: [u64::MAX, 1, 0, 0, 0, 0],
                ..
            })
        ));
        assert!(matches!(
            classify(b"E 18446744073709551616 1"),
            Line::Bad { .. }
        ));
        assert!(matches!(
            classify(b"E 99999999999999999999 1"),
            Line::Bad { .. }
        ));
        assert!(matches!(
            classify(b"E 123456789012345678901 1"),
            Line::Bad { .. }
        ));
    }
}
