//! The encoder's quick reader of a `memory_replay` line in exactly the recorder's form, from a
//! window of the text that starts at the line.
//!
//! The window's first 32 bytes (64 for a longer line) are classified at once ([`number_classes`]):
//! the first newline gives the line's length, and each number's extent is a run of digits in a
//! mask, so a number is found and checked with a few bit operations and read a word at a time.
//! The action is found through a table indexed by its first two letters and checked with one
//! or two word comparisons, with no branch per kind. A line's `<tid>: ` that is the same bytes
//! as the line before's (most lines) is not read again ([`TidPrefix`]).
//!
//! Anything else (another spelling, a bad line, a number too long for a word or two) gives
//! `None`, and the caller reads the line with [`super::line`]'s parsers, which decide what it
//! is; what this reader accepts it reads exactly as [`super::line::parse_canonical`] does.

use super::model;
use crate::shared::text::numbers::{dec_value8, hex_value8, number_classes, NumberClasses, POW10};

/// Bytes of text the reader needs from a line's start (the line and whatever follows it):
/// numbers are read as whole words, which may reach past a line of up to 63 bytes. (More
/// than that, so that [`word`] can bound a position with a mask.)
pub const WINDOW: usize = 136;

/// Bytes classified at once for a short line.
const SHORT: usize = 32;

/// The fields of a line as the model takes them (see `encode.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// The kind code ([`kinds`]).
    pub kind: u8,
    /// The pointer (realloc's new one).
    pub addr: u64,
    /// The size (0 for `free`, `thread_done`).
    pub size: u64,
    /// realloc's old pointer, else 0.
    pub old: u64,
    /// calloc's element count or memalign's alignment, else 0.
    pub extra: u64,
}

/// The bytes `<tid>: ` of a line, when they fit a word: a line that starts with the same
/// bytes has the same (canonical) thread id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TidPrefix {
    /// The prefix's bytes, as [`word`] reads them; zero above them.
    word: u64,
    /// Ones over the prefix's bytes.
    mask: u64,
    /// The prefix's length.
    len: usize,
}

impl TidPrefix {
    /// No prefix: nothing matches it (no word under a zero mask is 1).
    pub const NONE: TidPrefix = TidPrefix {
        word: 1,
        mask: 0,
        len: 0,
    };
}

/// A line at the start of a window, classified.
pub struct Line<'a> {
    s: &'a [u8; WINDOW],
    /// Per byte (bit `i` for byte `i`) of the first 64: decimal digits; `0`-`9` and `a`-`f`.
    digits: u64,
    hex: u64,
    /// The line's length without its `\n`: less than 64, or 64 when it has no `\n` there.
    len: usize,
}

/// The length of a run of ones of `mask` from bit `at` (`at` < 64 + 8).
#[inline(always)]
fn run(mask: u64, at: usize) -> usize {
    (!mask.checked_shr(at as u32).unwrap_or(0)).trailing_zeros() as usize
}

/// The 8 bytes of `s` from `i` as a word (the first in the low bits). Positions the reader asks
/// for are below 64 + 8 (a field starts within a line of at most 63 bytes, or right after
/// it); the mask changes none of them, and only lets the compiler see that the read is in
/// bounds.
#[inline(always)]
fn word(s: &[u8; WINDOW], i: usize) -> u64 {
    let i = i & 127;
    let w = &s[i..i + 8];
    u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
}

/// What the reader needs to know of an action: its text (with the space after it) as two
/// words under masks, and what follows it.
#[derive(Clone, Copy)]
struct Action {
    lit: [u64; 2],
    mask: [u64; 2],
    /// Bytes of the action and its space.
    len: usize,
    kind: u8,
    /// Numbers after the pointer: 0, 1 or 2.
    numbers: u8,
    /// The first of two is realloc's old pointer (hex), not the extra value (calloc's count,
    /// memalign's alignment).
    old_pointer: bool,
}

/// Up to 8 bytes of text as a word ([`word`]'s order), and ones over them.
const fn text_word(t: &[u8]) -> (u64, u64) {
    let mut w = 0u64;
    let mut i = 0;
    while i < t.len() {
        w |= (t[i] as u64) << (8 * i);
        i += 1;
    }
    let mask = if t.len() >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * t.len())) - 1
    };
    (w, mask)
}

/// The [`Action`] of `name`.
const fn action(name: &[u8], kind: u8, numbers: u8, old_pointer: bool) -> Action {
    // The name and its space, in two words.
    let mut t = [0u8; 16];
    let mut i = 0;
    while i < name.len() {
        t[i] = name[i];
        i += 1;
    }
    t[name.len()] = b' ';
    let len = name.len() + 1;
    let (first, second) = t.split_at(8);
    let (lo_len, hi_len) = if len > 8 { (8, len - 8) } else { (len, 0) };
    let (l0, m0) = text_word(first.split_at(lo_len).0);
    let (l1, m1) = text_word(second.split_at(hi_len).0);
    Action {
        lit: [l0, l1],
        mask: [m0, m1],
        len,
        kind,
        numbers,
        old_pointer,
    }
}

/// The actions by [`action_slot`] of their first two letters. The two slots no action takes
/// hold `malloc`, whose letters lead to another slot: no text matches them.
const ACTIONS: [Action; 8] = {
    let malloc = action(b"malloc", model::MALLOC, 1, false);
    [
        action(b"calloc", model::CALLOC, 2, false),
        action(b"free", model::FREE, 0, false),
        action(b"thread_done", model::THREAD_DONE, 0, false),
        action(b"memalign", model::MEMALIGN, 2, false),
        action(b"realloc", model::REALLOC, 2, true),
        malloc,
        malloc,
        malloc,
    ]
};

/// The slot in [`ACTIONS`] of the action whose text starts `w`: from bits of its first two
/// letters that tell the six actions apart.
#[inline(always)]
fn action_slot(w: u64) -> usize {
    (((w >> 1) ^ (w >> 8)) & 7) as usize
}

impl<'a> Line<'a> {
    /// Classifies the line at the start of `s`.
    #[inline(always)]
    pub fn new(s: &'a [u8; WINDOW]) -> Self {
        let short: &[u8; SHORT] = s[..SHORT].try_into().unwrap_or(&[0; SHORT]);
        let c = number_classes(short);
        let (mut digits, mut hex, mut newlines) = widen(c);
        if newlines == 0 {
            // A longer line (realloc's, or a long thread id): classify the next 32 bytes too.
            let next: &[u8; SHORT] = s[SHORT..2 * SHORT].try_into().unwrap_or(&[0; SHORT]);
            let (d, h, n) = widen(number_classes(next));
            digits |= d << SHORT;
            hex |= h << SHORT;
            newlines |= n << SHORT;
        }
        Line {
            s,
            digits,
            hex,
            len: newlines.trailing_zeros().min(64) as usize,
        }
    }

    /// Whether the line starts with `prefix`: the prefix's length when it does.
    #[inline(always)]
    pub fn starts_with(&self, prefix: &TidPrefix) -> Option<usize> {
        (word(self.s, 0) & prefix.mask == prefix.word).then_some(prefix.len)
    }

    /// The line's length without its `\n`, when it has one among the window's first 64
    /// bytes.
    #[inline(always)]
    pub fn len(&self) -> Option<usize> {
        (self.len < 64).then_some(self.len)
    }

    /// The thread id of a line that starts with it as printed (`<tid>: `, no leading zero, at
    /// most 16 digits) and the length of that prefix, with the prefix when it fits a word.
    #[inline(always)]
    pub fn tid(&self) -> Option<(u64, usize, TidPrefix)> {
        let n = run(self.digits, 0);
        if n == 0 || n > 16 || (n > 1 && self.s[0] == b'0') {
            return None;
        }
        if word(self.s, n) & 0xffff != u64::from(u16::from_le_bytes(*b": ")) {
            return None;
        }
        let len = n + 2;
        let prefix = if len <= 8 {
            // `len` is 3..=8: a whole word's prefix (8) keeps every bit.
            let mask = u64::MAX >> (64 - 8 * len);
            TidPrefix {
                word: word(self.s, 0) & mask,
                mask,
                len,
            }
        } else {
            TidPrefix::NONE
        };
        Some((self.dec(0, n), len, prefix))
    }

    /// The fields of the line after its `<tid>: `, which ends at `at`, when the rest is as
    /// the recorder prints it.
    #[inline(always)]
    pub fn fields(&self, at: usize) -> Option<Fields> {
        let w = word(self.s, at);
        let a = &ACTIONS[action_slot(w)];
        if w & a.mask[0] != a.lit[0] || word(self.s, at + 8) & a.mask[1] != a.lit[1] {
            return None;
        }
        let (addr, end) = self.pointer(at + a.len)?;
        let mut f = Fields {
            kind: a.kind,
            addr,
            size: 0,
            old: 0,
            extra: 0,
        };
        let end = match a.numbers {
            0 => end,
            1 => {
                let (size, end) = self.number(self.space(end)?)?;
                f.size = size;
                end
            }
            _ => {
                let at = self.space(end)?;
                let (first, end) = if a.old_pointer {
                    self.pointer(at)?
                } else {
                    self.number(at)?
                };
                let (size, end) = self.number(self.space(end)?)?;
                f.size = size;
                if a.old_pointer {
                    f.old = first;
                } else {
                    f.extra = first;
                }
                end
            }
        };
        (end == self.len).then_some(f)
    }

    /// The position after the space at `at`.
    #[inline(always)]
    fn space(&self, at: usize) -> Option<usize> {
        (word(self.s, at) as u8 == b' ').then_some(at + 1)
    }

    /// `0x` and 1 to 16 lower-case hex digits at `at`, no leading zero unless it is `0x0`:
    /// the value and the position after it.
    #[inline(always)]
    fn pointer(&self, at: usize) -> Option<(u64, usize)> {
        let w = word(self.s, at);
        let d = at + 2;
        let n = run(self.hex, d);
        if w & 0xffff != u64::from(u16::from_le_bytes(*b"0x"))
            || n == 0
            || n > 16
            || (n > 1 && (w >> 16) as u8 == b'0')
        {
            return None;
        }
        let v = if n <= 8 {
            hex_value8(word(self.s, d) << (8 * (8 - n)))
        } else {
            let low = word(self.s, d + 8) << (8 * (16 - n));
            (hex_value8(word(self.s, d)) << (4 * (n - 8))) | hex_value8(low)
        };
        Some((v, d + n))
    }

    /// 1 to 16 decimal digits at `at`, no leading zero unless it is `0`: the value and the
    /// position after it.
    #[inline(always)]
    fn number(&self, at: usize) -> Option<(u64, usize)> {
        let n = run(self.digits, at);
        if n == 0 || n > 16 || (n > 1 && word(self.s, at) as u8 == b'0') {
            return None;
        }
        Some((self.dec(at, n), at + n))
    }

    /// The value of the `n` (1 to 16) decimal digits at `at`.
    #[inline(always)]
    fn dec(&self, at: usize, n: usize) -> u64 {
        let digits = |w: u64, n: usize| dec_value8((w ^ 0x3030_3030_3030_3030) << (8 * (8 - n)));
        if n <= 8 {
            digits(word(self.s, at), n)
        } else {
            digits(word(self.s, at), 8) * POW10[n - 8] + digits(word(self.s, at + 8), n - 8)
        }
    }
}

/// The masks of [`NumberClasses`] as words.
#[inline(always)]
fn widen(c: NumberClasses) -> (u64, u64, u64) {
    (u64::from(c.digits), u64::from(c.hex), u64::from(c.newlines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::memory_replay::line;
    use proptest::prelude::*;

    /// The text in a window, followed by `next` (what follows the line in a chunk), padded.
    fn window(text: &[u8], next: &[u8]) -> [u8; WINDOW] {
        let mut s = [b'7'; WINDOW];
        let t: Vec<u8> = text.iter().chain(next).copied().collect();
        let n = t.len().min(WINDOW);
        s[..n].copy_from_slice(&t[..n]);
        s
    }

    /// What the quick reader gives for `text` (a line without its `\n`) followed by `next`:
    /// the thread id and fields, read with no prefix and with the prefix of the line itself
    /// (which must agree).
    fn quick(text: &[u8], next: &[u8]) -> Option<(u64, Fields)> {
        let s = window(text, next);
        let l = Line::new(&s);
        let len = l.len()?;
        let (tid, at, prefix) = l.tid()?;
        let f = l.fields(at)?;
        assert_eq!(len, text.len(), "{text:?}");
        if prefix != TidPrefix::NONE {
            assert_eq!(l.starts_with(&prefix), Some(at));
        }
        Some((tid, f))
    }

    /// What [`line::parse_canonical`] gives for `text`, as the quick reader's fields.
    fn canonical(text: &[u8]) -> Option<(u64, Fields)> {
        let l = line::parse_canonical(text)?;
        let r = model::record_of(&l, 0);
        let f = Fields {
            kind: r.kind,
            addr: r.addr,
            size: r.size,
            old: r.old,
            extra: r.extra,
        };
        Some((l.tid, f))
    }

    /// True when the quick reader is meant to take a line that [`line::parse_canonical`]
    /// takes: shorter than 64 bytes, a thread id and decimal numbers of at most 16 digits.
    fn within_reach(text: &[u8]) -> bool {
        text.len() < 64
            && text
                .split(|&b| b == b' ' || b == b':')
                .filter(|t| !t.starts_with(b"0x"))
                .all(|t| t.len() <= 16)
    }

    /// The quick reader agrees with the one-pass parser on `text`, whatever follows it.
    fn agrees(text: &[u8]) -> bool {
        let want = canonical(text);
        for next in [
            &b"\n"[..],
            b"\n0x1234 5678 9",
            b"\n\n",
            b"\n: 0x",
            b"\n7: free 0x1\n",
        ] {
            let got = quick(text, next);
            match want {
                Some(w) if within_reach(text) => assert_eq!(got, Some(w), "{text:?}"),
                _ => assert!(got.is_none() || got == want, "{text:?}: {got:?}"),
            }
        }
        want.is_some()
    }

    #[test]
    fn every_action_reads_as_the_one_pass_parser_reads_it() {
        let tids = [
            "186",
            "0",
            "007",
            "1234567",
            "1234567890123456",
            "12345678901234567",
        ];
        let actions = [
            "malloc",
            "calloc",
            "memalign",
            "realloc",
            "free",
            "thread_done",
            "mallo",
            "frees",
            "Malloc",
            "thread_dome",
            "memalig",
        ];
        let ptrs = [
            "0x0",
            "0xb6027400",
            "0x00b6",
            "0xB6",
            "0x",
            "0x+10",
            "0xffffffffffffffff",
            "0x1ffffffffffffffff",
            "0x123456789",
            "0xa",
            "0x0a",
            "0x01",
        ];
        let nums = [
            "",
            " 1024",
            " 0",
            " 01",
            " 0x10",
            " 0xa",
            " 0x0a",
            " 7 8",
            " 0x10 5",
            " 0x0 0",
            " 99999999",
            " 123456789",
            " 1234567890123456",
            " 12345678901234567",
            " 5 0x7",
            " 3  4",
            " 3 4 5",
            " 0x0a 5",
            " 0x01 7",
            " 0x1 07",
            " 01 7",
        ];
        let mut taken = 0;
        for tid in tids {
            for sep in [": ", ":", ":  ", " : "] {
                for action in actions {
                    for ptr in ptrs {
                        for n in nums {
                            for end in ["", " ", "\r"] {
                                let text = format!("{tid}{sep}{action} {ptr}{n}{end}");
                                taken += usize::from(agrees(text.as_bytes()));
                            }
                        }
                    }
                }
            }
        }
        assert!(taken > 250, "{taken}");
    }

    #[test]
    fn long_lines_and_thread_prefixes() {
        // Realloc lines past 32 bytes, up to the 64 the reader classifies, and past them.
        for ptr in ["0x1", "0xb4827400", "0xffffffffffffffff"] {
            for size in ["7", "123456789012", "1234567890123456"] {
                let text = format!("123456: realloc {ptr} {ptr} {size}");
                assert!(agrees(text.as_bytes()), "{text}");
            }
        }
        // A prefix matches only the same thread id's bytes.
        let s = window(b"202: free 0x10", b"\n");
        let (_, at, prefix) = Line::new(&s).tid().unwrap();
        assert_eq!(at, 5);
        for (other, same) in [
            (&b"202: malloc 0x1 2"[..], true),
            (b"2020: free 0x1", false),
            (b"20: free 0x1", false),
            (b"203: free 0x1", false),
            (b"202:  free 0x1", true),
        ] {
            let w = window(other, b"\n");
            assert_eq!(
                Line::new(&w).starts_with(&prefix).is_some(),
                same,
                "{other:?}"
            );
        }
        assert_eq!(Line::new(&s).starts_with(&TidPrefix::NONE), None);
        // A prefix of a whole word (six digits, `: `) matches its own bytes only.
        let s = window(b"123456: free 0x10", b"\n");
        let (_, at, prefix) = Line::new(&s).tid().unwrap();
        assert_eq!(at, 8);
        let w = window(b"999999: free 0x10", b"\n");
        assert_eq!(Line::new(&w).starts_with(&prefix), None);
        assert_eq!(Line::new(&s).starts_with(&prefix), Some(8));
        // Too long a prefix for a word: none.
        let s = window(b"1234567: free 0x10", b"\n");
        assert_eq!(Line::new(&s).tid().unwrap().2, TidPrefix::NONE);
    }

    /// Tokens lines are made of in [`random_lines_read_as_the_one_pass_parser_reads_them`].
    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("malloc".to_string()),
            Just("free".to_string()),
            Just("calloc".to_string()),
            Just("realloc".to_string()),
            Just("memalign".to_string()),
            Just("thread_done".to_string()),
            (0u64..u64::MAX).prop_map(|v| format!("0x{v:x}")),
            (0u64..4096).prop_map(|v| format!("0x{v:x}")),
            (0u64..u64::MAX).prop_map(|v| v.to_string()),
            (0u64..100_000).prop_map(|v| v.to_string()),
            (0u64..4096).prop_map(|v| format!("0x0{v:x}")),
            (0u64..100).prop_map(|v| format!("0{v}")),
            "[0-9a-fx:A-F \\r]{0,6}",
            proptest::collection::vec(any::<u8>(), 0..4)
                .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Random lines near the recorder's form (and random bytes): whatever the quick reader
        /// takes, it reads as the one-pass parser does, and it takes every such line within
        /// its reach.
        #[test]
        fn random_lines_read_as_the_one_pass_parser_reads_them(
            tid in prop_oneof![(0u64..100_000).prop_map(|t| t.to_string()), token()],
            sep in prop_oneof![Just(": "), Just(":"), Just(" ")],
            tokens in proptest::collection::vec(token(), 0..5),
            next in proptest::collection::vec(any::<u8>(), 0..20),
        ) {
            let text = format!("{tid}{sep}{}", tokens.join(" "));
            let text = text.replace('\n', " ");
            agrees(text.as_bytes());
            // What follows the line never changes what is read.
            let mut after = b"\n".to_vec();
            after.extend_from_slice(&next);
            let got = quick(text.as_bytes(), &after);
            prop_assert!(got.is_none() || got == canonical(text.as_bytes()));
        }
    }
}
