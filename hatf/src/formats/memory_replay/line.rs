//! One Android `memory_replay` line: `<tid>: <action> <ptr> [args]`, parsed and printed the
//! way the recorder (bionic's malloc debug `record_allocs`) prints it.

use crate::shared::text::numbers::{
    dec_value8, hex_value8, not_dec_digits, not_lower_hex_digits, parse_dec, parse_hex_digits,
    push_0x, push_dec, word_at,
};

/// The action of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `malloc PTR SIZE`.
    Malloc,
    /// `calloc PTR NMEMB SIZE`.
    Calloc,
    /// `memalign PTR ALIGN SIZE`.
    Memalign,
    /// `realloc NEW OLD SIZE`.
    Realloc,
    /// `free PTR`.
    Free,
    /// `thread_done 0x0`.
    ThreadDone,
}

impl Action {
    fn from_name(n: &[u8]) -> Option<Action> {
        Some(match n {
            b"malloc" => Action::Malloc,
            b"calloc" => Action::Calloc,
            b"memalign" => Action::Memalign,
            b"realloc" => Action::Realloc,
            b"free" => Action::Free,
            b"thread_done" => Action::ThreadDone,
            _ => return None,
        })
    }

    /// The action's name as printed.
    pub fn name(self) -> &'static str {
        match self {
            Action::Malloc => "malloc",
            Action::Calloc => "calloc",
            Action::Memalign => "memalign",
            Action::Realloc => "realloc",
            Action::Free => "free",
            Action::ThreadDone => "thread_done",
        }
    }

    fn numbers(self) -> usize {
        match self {
            Action::Free | Action::ThreadDone => 0,
            Action::Malloc => 1,
            Action::Calloc | Action::Memalign | Action::Realloc => 2,
        }
    }
}

/// A parsed line (without its line end). `realloc NEW OLD SIZE` has `ptr` = NEW, `a` = OLD
/// (parsed as hex), `b` = SIZE; the others have their numbers in `a`, `b` in text order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayLine {
    /// Thread id.
    pub tid: u64,
    /// What happened.
    pub action: Action,
    /// The pointer field.
    pub ptr: u64,
    /// First number after the pointer (size, nmemb, alignment, or realloc's old pointer).
    pub a: u64,
    /// Second number (size), when the action has one.
    pub b: u64,
}

pub use crate::shared::text::lines::LineError;

fn dec(t: &[u8]) -> Option<u64> {
    parse_dec(t)
}

fn hex(t: &[u8]) -> Option<u64> {
    let d = t.strip_prefix(b"0x")?;
    if d.is_empty() || d.len() > 16 {
        return None;
    }
    // One leading `+` is taken, as Rust's own number parsing takes it; such a line still
    // parses (and is then kept verbatim, as it does not print back the same).
    let d = match d.strip_prefix(b"+") {
        Some(rest) if !rest.is_empty() => rest,
        _ => d,
    };
    parse_hex_digits(d)
}

/// Most tokens a line can have (`<action> <ptr> <a> <b>`); more is an error either way.
const MAX_TOKENS: usize = 4;

/// Parses one line without its `\n`.
pub fn parse(text: &[u8]) -> Result<ReplayLine, LineError> {
    parse_checked(text).map(|(line, _)| line)
}

/// True when `t` is decimal digits as printed (no leading zero unless it is `0`).
fn canonical_dec(t: &[u8]) -> bool {
    !t.is_empty() && (t[0] != b'0' || t.len() == 1) && t.iter().all(u8::is_ascii_digit)
}

/// True when `t` is `0x` and lower-case hex digits as `%#x`-style printing gives them (`0x0`
/// for zero, else no leading zero).
fn canonical_hex(t: &[u8]) -> bool {
    t.len() > 2
        && t.starts_with(b"0x")
        && (t[2] != b'0' || t.len() == 3)
        && t[2..]
            .iter()
            .all(|&b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Parses one line without its `\n` and says whether it is exactly what [`render`] prints for
/// it (before the `\n`): one space between fields, numbers without leading zeros, lower-case
/// hex. Checking the fields while they are at hand is what the encoder does for every line,
/// instead of printing the line again and comparing.
pub fn parse_checked(text: &[u8]) -> Result<(ReplayLine, bool), LineError> {
    let err = |col: usize, m: &str| LineError {
        column: col + 1,
        message: m.to_string(),
    };
    // Lines are short: a plain scan beats memchr's set-up cost here.
    let colon = text
        .iter()
        .position(|&b| b == b':')
        .ok_or_else(|| err(0, "expected `<tid>: `"))?;
    let tid = dec(&text[..colon]).ok_or_else(|| err(0, "expected a decimal thread id"))?;
    // Space-separated tokens after the colon: the first MAX_TOKENS kept, all counted.
    let mut toks: [(usize, &[u8]); MAX_TOKENS] = [(0, &text[..0]); MAX_TOKENS];
    let mut count = 0usize;
    let mut start = colon + 1;
    let mut push = |at: usize, end: usize| {
        if end > at {
            if count < MAX_TOKENS {
                toks[count] = (at, &text[at..end]);
            }
            count += 1;
        }
    };
    for (i, &b) in text.iter().enumerate().skip(colon + 1) {
        if b == b' ' {
            push(start, i);
            start = i + 1;
        }
    }
    push(start, text.len());
    if count == 0 {
        return Err(err(colon + 1, "expected an action"));
    }
    let (at, name) = toks[0];
    let action = Action::from_name(name).ok_or_else(|| {
        err(
            at,
            "expected malloc, calloc, memalign, realloc, free or thread_done",
        )
    })?;
    if count != 2 + action.numbers() {
        return Err(err(
            at,
            &format!(
                "`{}` takes a pointer and {} number(s)",
                action.name(),
                action.numbers()
            ),
        ));
    }
    let ptr = hex(toks[1].1).ok_or_else(|| err(toks[1].0, "expected a 0x pointer"))?;
    let mut nums = [0u64; 2];
    for (k, &(p, t)) in toks[2..count].iter().enumerate() {
        let v = if action == Action::Realloc && k == 0 {
            hex(t)
        } else {
            dec(t)
        };
        nums[k] = v.ok_or_else(|| err(p, "expected a number"))?;
    }
    // The tokens follow `<tid>: ` one space apart and end the line; each number as printed.
    let mut next = colon + 2;
    let mut canonical = canonical_dec(&text[..colon]) && canonical_hex(toks[1].1);
    for (k, &(at, t)) in toks[..count].iter().enumerate() {
        canonical &= at == next;
        next = at + t.len() + 1;
        if k >= 2 {
            canonical &= if action == Action::Realloc && k == 2 {
                canonical_hex(t)
            } else {
                canonical_dec(t)
            };
        }
    }
    canonical &= next == text.len() + 1;
    let line = ReplayLine {
        tid,
        action,
        ptr,
        a: nums[0],
        b: nums[1],
    };
    Ok((line, canonical))
}

/// A word of text ([`word_at`]) holding `lit` in its low bytes.
const fn lit(lit: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let mut i = 0;
    while i < lit.len() {
        w[i] = lit[i];
        i += 1;
    }
    u64::from_le_bytes(w)
}

/// The low `n` bytes of a word.
const fn low_bytes(n: usize) -> u64 {
    if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    }
}

/// True for `0`-`9` and `a`-`f`.
fn is_lower_hex(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'a'..=b'f')
}

/// Reads a line in exactly the recorder's form from left to right, eight bytes at a time: the
/// line is `text[..len]`; bytes past it (the next lines of a chunk) may be read into a word but
/// never decide anything.
struct Canonical<'a> {
    text: &'a [u8],
    len: usize,
    at: usize,
}

impl Canonical<'_> {
    /// Takes `n` bytes (at most 8) when they are `lit`'s ([`lit`]).
    #[inline(always)]
    fn lit(&mut self, lit: u64, n: usize) -> Option<()> {
        let end = self.at + n;
        (end <= self.len && word_at(self.text, self.at) & low_bytes(n) == lit)
            .then(|| self.at = end)
    }

    /// Takes a space.
    #[inline(always)]
    fn space(&mut self) -> Option<()> {
        (self.at < self.len && self.text[self.at] == b' ').then(|| self.at += 1)
    }

    /// How many of the (up to 8) bytes of `w`, read at `at`, are digits by `not_digits`
    /// before the first that is not, counting only bytes of the line.
    #[inline(always)]
    fn run(&self, not_digits: u64, at: usize) -> usize {
        ((not_digits.trailing_zeros() / 8) as usize).min(self.len - at.min(self.len))
    }

    /// A decimal number as printed: digits, no leading zero unless it is `0`, fits a `u64`.
    #[inline(always)]
    fn dec(&mut self) -> Option<u64> {
        let w = word_at(self.text, self.at);
        let n = self.run(not_dec_digits(w), self.at);
        if n == 8 {
            return self.long_dec();
        }
        if n == 0 || (n > 1 && w as u8 == b'0') {
            return None;
        }
        // The digits' values, moved up so that the bytes after them drop out and zeros
        // (leading zeros) come in below.
        let v = dec_value8((w ^ 0x3030_3030_3030_3030) << (8 * (8 - n)));
        self.at += n;
        Some(v)
    }

    /// [`Canonical::dec`] for 8 digits or more, one byte at a time.
    #[cold]
    fn long_dec(&mut self) -> Option<u64> {
        let start = self.at;
        let mut v = 0u64;
        while let Some(&b) = self.text[..self.len].get(self.at) {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(d))?;
            self.at += 1;
        }
        (self.text[start] != b'0').then_some(v)
    }

    /// `0x` and 1 to 16 lower-case hex digits, no leading zero unless it is `0x0`.
    #[inline(always)]
    fn hex(&mut self) -> Option<u64> {
        self.lit(lit(b"0x"), 2)?;
        let w = word_at(self.text, self.at);
        let n = self.run(not_lower_hex_digits(w), self.at);
        let (v, digits) = match n {
            0 => return None,
            1..=7 => (hex_value8(w << (8 * (8 - n))), n),
            _ => {
                let w2 = word_at(self.text, self.at + 8);
                let n2 = self.run(not_lower_hex_digits(w2), self.at + 8);
                let next = self.at + 16;
                if n2 == 8 && next < self.len && is_lower_hex(self.text[next]) {
                    return None; // More than 16 digits.
                }
                let v = match n2 {
                    0 => hex_value8(w),
                    _ => (hex_value8(w) << (4 * n2)) | hex_value8(w2 << (8 * (8 - n2))),
                };
                (v, 8 + n2)
            }
        };
        if digits > 1 && w as u8 == b'0' {
            return None;
        }
        self.at += digits;
        Some(v)
    }

    /// The action's name and the space after it.
    #[inline(always)]
    fn action(&mut self) -> Option<Action> {
        let w = word_at(self.text, self.at);
        let (action, len) = match w as u8 {
            b'm' if w & low_bytes(7) == lit(b"malloc ") => (Action::Malloc, 7),
            b'm' if w == lit(b"memalign") && self.text.get(self.at + 8) == Some(&b' ') => {
                (Action::Memalign, 9)
            }
            b'f' if w & low_bytes(5) == lit(b"free ") => (Action::Free, 5),
            b'r' if w == lit(b"realloc ") => (Action::Realloc, 8),
            b'c' if w & low_bytes(7) == lit(b"calloc ") => (Action::Calloc, 7),
            b't' if w == lit(b"thread_d")
                && word_at(self.text, self.at + 8) & low_bytes(4) == lit(b"one ") =>
            {
                (Action::ThreadDone, 12)
            }
            _ => return None,
        };
        let end = self.at + len;
        (end <= self.len).then(|| {
            self.at = end;
            action
        })
    }
}

/// Parses `text` (one line without its `\n`) when it is exactly what [`render`] prints;
/// `None` for anything else (a line that does not parse, or one that parses but prints back
/// differently), which [`parse_checked`] then sorts out. It gives what `parse_checked` gives
/// for such a line, in one pass instead of splitting tokens and checking them apart: that was
/// a quarter of an encode.
#[inline]
pub fn parse_canonical(text: &[u8]) -> Option<ReplayLine> {
    parse_canonical_in(text, text.len())
}

/// [`parse_canonical`] of the line `text[..len]`, where `text` may go on past the line (with
/// the rest of a chunk): numbers are read a word at a time, and a word that reaches past the
/// line then needs no copying. What follows the line never changes the result.
#[inline]
pub fn parse_canonical_in(text: &[u8], len: usize) -> Option<ReplayLine> {
    let mut c = Canonical { text, len, at: 0 };
    let tid = c.dec()?;
    c.lit(lit(b": "), 2)?;
    let action = c.action()?;
    let ptr = c.hex()?;
    let (a, b) = match action {
        Action::Free | Action::ThreadDone => (0, 0),
        Action::Malloc => {
            c.space()?;
            (c.dec()?, 0)
        }
        Action::Realloc => {
            c.space()?;
            let old = c.hex()?;
            c.space()?;
            (old, c.dec()?)
        }
        Action::Calloc | Action::Memalign => {
            c.space()?;
            let a = c.dec()?;
            c.space()?;
            (a, c.dec()?)
        }
    };
    (c.at == len).then_some(ReplayLine {
        tid,
        action,
        ptr,
        a,
        b,
    })
}

/// Appends the canonical text of `l`, with its `\n`.
pub fn render(l: &ReplayLine, out: &mut Vec<u8>) {
    push_dec(out, l.tid);
    out.extend_from_slice(b": ");
    out.extend_from_slice(l.action.name().as_bytes());
    out.push(b' ');
    push_0x(out, l.ptr);
    match l.action {
        Action::Free | Action::ThreadDone => {}
        Action::Malloc => {
            out.push(b' ');
            push_dec(out, l.a);
        }
        Action::Realloc => {
            out.push(b' ');
            push_0x(out, l.a);
            out.push(b' ');
            push_dec(out, l.b);
        }
        Action::Calloc | Action::Memalign => {
            out.push(b' ');
            push_dec(out, l.a);
            out.push(b' ');
            push_dec(out, l.b);
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorder_lines_render_back_exactly() {
        for l in [
            "186: malloc 0xb6027400 1024",
            "186: free 0x0",
            "200: calloc 0xb48c1100 32 8",
            "300: realloc 0x96b90920 0x93605280 150",
            "400: memalign 0xae42d080 16 104",
            "600: thread_done 0x0",
        ] {
            let mut v = Vec::new();
            render(&parse(l.as_bytes()).unwrap(), &mut v);
            assert_eq!(v, format!("{l}\n").into_bytes());
        }
    }

    #[test]
    fn odd_numbers_parse_as_before_and_too_many_tokens_fail() {
        // A `+` after `0x` was accepted by the old `from_str_radix` parser.
        assert_eq!(parse(b"1: free 0x+10").unwrap().ptr, 0x10);
        assert!(parse(b"1: free 0x+").is_err());
        assert!(parse(b"1: free 0x1 2 3 4 5 6").is_err());
        assert_eq!(parse(b"1:  malloc  0x10  7").unwrap().a, 7);
    }

    #[test]
    fn bad_lines_name_the_column() {
        assert_eq!(parse(b"12: mallok 0x1 2").unwrap_err().column, 5);
        assert_eq!(parse(b"12: malloc 0x1").unwrap_err().column, 5);
        assert_eq!(parse(b"12: malloc 1 2").unwrap_err().column, 12);
        assert_eq!(parse(b"x: free 0x1").unwrap_err().column, 1);
    }

    #[test]
    fn the_canonical_flag_agrees_with_rendering() {
        let tids = ["186", "0", "007", "+1"];
        let actions = [
            "malloc",
            "calloc",
            "memalign",
            "realloc",
            "free",
            "thread_done",
        ];
        let ptrs = ["0x0", "0xb6027400", "0x00b6", "0xB6", "0x", "0x+10", "0x00"];
        let nums = [
            "", " 1024", " 0", " 01", " 0x10", " 0xa", " 0x0a", " 7 8", " 0x10 5",
        ];
        let mut checked = 0;
        for tid in tids {
            for sep in [": ", ":", ":  "] {
                for action in actions {
                    for ptr in ptrs {
                        for n in nums {
                            for end in ["", " "] {
                                let text = format!("{tid}{sep}{action} {ptr}{n}{end}");
                                // The one-pass parser takes exactly the lines that parse and
                                // print back the same.
                                let slow = parse_checked(text.as_bytes())
                                    .ok()
                                    .filter(|&(_, canonical)| canonical)
                                    .map(|(l, _)| l);
                                assert_eq!(parse_canonical(text.as_bytes()), slow, "{text:?}");
                                let Ok((l, canonical)) = parse_checked(text.as_bytes()) else {
                                    continue;
                                };
                                let mut v = Vec::new();
                                render(&l, &mut v);
                                let same = v == format!("{text}\n").into_bytes();
                                assert_eq!(canonical, same, "{text:?}");
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 300, "{checked}");
    }

    #[test]
    fn the_one_pass_parser_agrees_on_spacing_and_number_lengths() {
        let nums = [
            "",
            "0",
            "00",
            "1",
            "10",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "0x0",
            "0x1",
            "0xffffffffffffffff",
            "0x1ffffffffffffffff",
            "0x0000000000000001",
            "0xA",
            "x",
        ];
        let heads = [
            "1: malloc",
            "1: free",
            "1: realloc",
            "1: calloc",
            "1:malloc",
            "x",
        ];
        let mut canonical = 0;
        for head in heads {
            for a in nums {
                for b in nums {
                    for c in nums {
                        for sep in [" ", "  "] {
                            let text = [head, a, b, c].join(sep);
                            let text = text.trim_end_matches(' ');
                            let slow = parse_checked(text.as_bytes())
                                .ok()
                                .filter(|&(_, canonical)| canonical)
                                .map(|(l, _)| l);
                            assert_eq!(parse_canonical(text.as_bytes()), slow, "{text:?}");
                            // What follows the line in a chunk never changes the result.
                            for next in ["\n", "\n0123456789abcdef0", "\n7: free 0x1"] {
                                let chunk = format!("{text}{next}");
                                let got = parse_canonical_in(chunk.as_bytes(), text.len());
                                assert_eq!(got, slow, "{text:?} then {next:?}");
                            }
                            canonical += usize::from(slow.is_some());
                        }
                    }
                }
            }
        }
        // Tids as long as they get, and one past.
        for tid in ["18446744073709551615", "18446744073709551616", "0", "01"] {
            let text = format!("{tid}: free 0x1");
            let slow = parse_checked(text.as_bytes())
                .ok()
                .filter(|&(_, canonical)| canonical)
                .map(|(l, _)| l);
            assert_eq!(parse_canonical(text.as_bytes()), slow, "{text:?}");
        }
        assert!(canonical > 20, "{canonical}");
    }
}
