//! One glibc `mtrace` line: parsing it into fields and printing fields the way glibc does.
//!
//! glibc writes `@ CALLER OP ADDR [SIZE]\n` (the `@ CALLER ` part only when it knows the caller),
//! with ADDR printed by `%p` (`0x…`, or `(nil)` for NULL) and SIZE by `%#lx` (`0x…`, or `0` for
//! zero). The caller itself may contain spaces, so a line is taken apart from the right.

use crate::shared::text::numbers::{classes, hex_value8, parse_hex_digits, push_0x, word_at};

/// The operation of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+ ADDR SIZE`: malloc (and calloc, memalign) returned ADDR.
    Malloc,
    /// `- ADDR`: free.
    Free,
    /// `< OLD`: first half of a realloc.
    ReallocOld,
    /// `> NEW SIZE`: second half of a realloc.
    ReallocNew,
}

impl Op {
    fn from_byte(b: &[u8]) -> Option<Op> {
        match b {
            b"+" => Some(Op::Malloc),
            b"-" => Some(Op::Free),
            b"<" => Some(Op::ReallocOld),
            b">" => Some(Op::ReallocNew),
            _ => None,
        }
    }

    /// The operation character.
    pub fn char(self) -> u8 {
        match self {
            Op::Malloc => b'+',
            Op::Free => b'-',
            Op::ReallocOld => b'<',
            Op::ReallocNew => b'>',
        }
    }

    /// True when the line carries a size.
    pub fn has_size(self) -> bool {
        matches!(self, Op::Malloc | Op::ReallocNew)
    }
}

/// A parsed operation line (without its line end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpLine<'a> {
    /// The text between `@ ` and the operation, when the line has a caller.
    pub caller: Option<&'a [u8]>,
    /// What happened.
    pub op: Op,
    /// The block address.
    pub addr: u64,
    /// The size (0 for `-` and `<`).
    pub size: u64,
}

/// What a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// An allocation operation.
    Op(OpLine<'a>),
    /// A `= …` line (`= Start`, `= End`); the text after `= `.
    Marker(&'a [u8]),
}

pub use crate::shared::text::lines::LineError;

fn hex(tok: &[u8]) -> Option<u64> {
    if tok == b"(nil)" || tok == b"0" {
        return Some(0);
    }
    let digits = tok
        .strip_prefix(b"0x")
        .or_else(|| tok.strip_prefix(b"0X"))?;
    parse_hex_digits(digits)
}

/// Parses `text` (one line without its `\n`).
pub fn parse(text: &[u8]) -> Result<Line<'_>, LineError> {
    parse_checked(text).map(|(line, _)| line)
}

/// True when `tok` is `0x` and lower-case hex digits without leading zeros, which is how
/// glibc prints a non-zero value.
fn canonical_nonzero_hex(tok: &[u8]) -> bool {
    tok.len() > 2
        && tok.starts_with(b"0x")
        && tok[2] != b'0'
        && tok[2..]
            .iter()
            .all(|&b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Parses `text` (one line without its `\n`) and says whether it is exactly what [`render`]
/// prints for it (before the `\n`): numbers in glibc's form (`%p`: `(nil)` for zero, else
/// `0x` and lower-case digits; `%#lx`: `0` for zero), which is all a line that parses can
/// differ in, as its tokens are split at single spaces and kept as they are. Markers are
/// always "canonical" here. Checking the tokens while they are at hand is what the encoder
/// does for every line; rendering the line again and comparing would be a tenth of an encode.
pub fn parse_checked(text: &[u8]) -> Result<(Line<'_>, bool), LineError> {
    if let Some(rest) = text.strip_prefix(b"= ") {
        return Ok((Line::Marker(rest), true));
    }
    // Split off up to three tokens from the right: [SIZE], ADDR, OP.
    let mut toks: [(usize, &[u8]); 3] = [(0, &text[..0]); 3];
    let mut n = 0usize;
    let mut end = text.len();
    while n < 3 {
        let start = memchr::memrchr(b' ', &text[..end]).map_or(0, |p| p + 1);
        toks[n] = (start, &text[start..end]);
        n += 1;
        if start == 0 {
            break;
        }
        end = start - 1;
    }
    let toks = &toks[..n];
    let err = |column: usize, message: &str| LineError {
        column: column + 1,
        message: message.to_string(),
    };
    let canonical_addr = |a: &[u8]| a == b"(nil)" || canonical_nonzero_hex(a);
    let (op_at, op, addr, size, canonical) = match toks {
        [(_, a), (o_at, o), ..] if matches!(Op::from_byte(o), Some(Op::Free | Op::ReallocOld)) => {
            let op = Op::from_byte(o).ok_or_else(|| err(*o_at, "expected an operation"))?;
            let addr = hex(a).ok_or_else(|| err(toks[0].0, "expected a hex address"))?;
            (*o_at, op, addr, 0, canonical_addr(a))
        }
        [(s_at, s), (a_at, a), (o_at, o)]
            if matches!(Op::from_byte(o), Some(Op::Malloc | Op::ReallocNew)) =>
        {
            let size = hex(s).ok_or_else(|| err(*s_at, "expected a hex size"))?;
            let addr = hex(a).ok_or_else(|| err(*a_at, "expected a hex address"))?;
            let op = Op::from_byte(o).ok_or_else(|| err(*o_at, "expected an operation"))?;
            let canonical = canonical_addr(a) && (*s == b"0" || canonical_nonzero_hex(s));
            (*o_at, op, addr, size, canonical)
        }
        _ => {
            return Err(err(
                0,
                "expected `@ CALLER OP ADDR [SIZE]`, `OP ADDR [SIZE]` or `= TEXT` \
                 (OP one of + - < >)",
            ));
        }
    };
    let caller = if op_at == 0 {
        None
    } else {
        let prefix = &text[..op_at - 1];
        match prefix.strip_prefix(b"@ ") {
            Some(c) => Some(c),
            None => return Err(err(0, "expected `@ ` before the caller")),
        }
    };
    let line = OpLine {
        caller,
        op,
        addr,
        size,
    };
    Ok((Line::Op(line), canonical))
}

/// Per byte: its value as a lower-case hex digit, or [`NOT_HEX`].
static LOWER_HEX: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};
/// Not a lower-case hex digit (in [`LOWER_HEX`]).
const NOT_HEX: u8 = 0xff;

/// How a number token glibc printed is spelled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Spelled {
    /// `0x` and lower-case hex digits without leading zeros: a non-zero value.
    Hex,
    /// `(nil)`: `%p`'s zero.
    Nil,
    /// `0`: `%#lx`'s zero.
    Zero,
}

/// Reads the number token that ends at `end` backwards, when it is spelled as glibc prints
/// numbers and has a space before it: its value, spelling, and where that space is. One byte
/// at a time: for lines shorter than a [`Tail`] and tokens that start before it.
fn number_before(text: &[u8], end: usize) -> Option<(u64, Spelled, usize)> {
    let head = &text[..end];
    if head.ends_with(b" (nil)") {
        return Some((0, Spelled::Nil, end - 6));
    }
    if head.ends_with(b" 0") {
        return Some((0, Spelled::Zero, end - 2));
    }
    let (mut i, mut v, mut shift) = (end, 0u64, 0u32);
    while i > 0 {
        let d = LOWER_HEX[usize::from(text[i - 1])];
        if d == NOT_HEX {
            break;
        }
        if shift == 64 {
            return None; // More than 16 digits.
        }
        v |= u64::from(d) << shift;
        shift += 4;
        i -= 1;
    }
    // `i` is the first digit: at least one, not a leading zero, after ` 0x`.
    let canonical = i < end && text[i] != b'0' && i >= 3 && &text[i - 3..i] == b" 0x";
    // (Not `then_some`: it would compute `i - 3` for a line where `i < 3` too.)
    if canonical {
        Some((v, Spelled::Hex, i - 3))
    } else {
        None
    }
}

/// The operation whose character is just before the space at `space`, when it stands alone
/// (at the line start or after a space), with the position of the space before it (`None`: it
/// starts the line).
#[inline]
fn op_before(text: &[u8], space: usize) -> Option<(u8, Option<usize>)> {
    let at = space.checked_sub(1)?;
    match at {
        0 => Some((text[0], None)),
        _ if text[at - 1] == b' ' => Some((text[at], Some(at - 1))),
        _ => None,
    }
}

/// Bytes at the end of a line that [`Tail`] classifies at once: enough for the operation and
/// both numbers of nearly every line (`+ 0x55d2155594a0 0xeb8` is 22).
const TAIL: usize = 32;

/// The last [`TAIL`] bytes of a line, classified ([`classes`]): where its spaces and
/// lower-case hex digits are, so that a number token is found and checked with a few bit
/// operations, and read a word at a time.
struct Tail {
    /// Where the tail starts in the line.
    base: usize,
    /// Bit `i`: byte `base + i` is a lower-case hex digit.
    hex: u64,
    /// Bit `i`: byte `base + i` is a space.
    spaces: u64,
}

impl Tail {
    /// The tail of `text`, which has at least [`TAIL`] bytes.
    #[inline(always)]
    fn of(text: &[u8]) -> Tail {
        let base = text.len() - TAIL;
        let mut b = [0u8; TAIL];
        b.copy_from_slice(&text[base..]);
        let c = classes(&b);
        Tail {
            base,
            hex: u64::from(c.digits | c.letters),
            spaces: u64::from(c.spaces),
        }
    }

    /// [`number_before`], from the masks: the token is what follows the last space before
    /// `end`, and it must be `(nil)`, `0`, or `0x` and 1 to 16 lower-case hex digits without
    /// a leading zero. (The byte-wise reading takes exactly those: the digits it reads back
    /// over stop at the `x`, and ` 0x` must come before them.)
    #[inline(always)]
    fn number_before(&self, text: &[u8], end: usize) -> Option<(u64, Spelled, usize)> {
        let e = end.wrapping_sub(self.base);
        let below = if e <= TAIL {
            self.spaces & ((1u64 << e) - 1)
        } else {
            0
        };
        if below == 0 {
            // The token starts before the tail (or `end` is not in it).
            return number_before(text, end);
        }
        let space = self.base + 63 - below.leading_zeros() as usize;
        let tok = &text[space + 1..end];
        match tok {
            [b'0'] => Some((0, Spelled::Zero, space)),
            b"(nil)" => Some((0, Spelled::Nil, space)),
            [b'0', b'x', first, digits @ ..] if *first != b'0' && digits.len() < 16 => {
                // All of `first..end` are hex digits.
                let from = space + 3 - self.base;
                let want = (1u64 << e) - (1u64 << from);
                (self.hex & want == want)
                    .then(|| (hex_before(text, end, e - from), Spelled::Hex, space))
            }
            _ => None,
        }
    }
}

/// The value of the `n` lower-case hex digits (1 to 16, checked already) that end at `end`,
/// read a word at a time.
#[inline(always)]
fn hex_before(text: &[u8], end: usize, n: usize) -> u64 {
    // Each word is the 8 bytes before a point; the bytes before the digits are zeroed, to
    // read as leading zeros.
    let top = |w: u64, digits: usize| w & (u64::MAX << (64 - 8 * digits));
    if n <= 8 && end >= 8 {
        hex_value8(top(word_at(text, end - 8), n))
    } else if end >= 16 {
        let high = hex_value8(top(word_at(text, end - 16), n - 8));
        (high << 32) | hex_value8(word_at(text, end - 8))
    } else {
        // Too near the line start for whole words.
        parse_hex_digits(&text[end - n..end]).unwrap_or(0)
    }
}

/// Parses `text` (one line without its `\n`) when it is an operation line exactly as glibc
/// prints it; `None` for anything else (a marker, a line that does not parse, or one that
/// parses but prints back differently), which [`parse_checked`] then sorts out. It gives what
/// `parse_checked` gives for such a line, reading the numbers backwards once from the line's
/// end instead of splitting tokens and checking them apart: that was half of a parsing
/// worker. Lines of at least [`TAIL`] bytes (all with a caller) find their numbers through a
/// [`Tail`].
#[inline]
pub fn parse_canonical_op(text: &[u8]) -> Option<OpLine<'_>> {
    if text.len() >= TAIL {
        parse_op_with(text, &Tail::of(text))
    } else {
        parse_op_with(text, &Bytewise)
    }
}

/// Reads the number token that ends at a position, as [`number_before`] does.
trait NumberBefore {
    fn number_before(&self, text: &[u8], end: usize) -> Option<(u64, Spelled, usize)>;
}

/// [`number_before`] itself.
struct Bytewise;

impl NumberBefore for Bytewise {
    #[inline(always)]
    fn number_before(&self, text: &[u8], end: usize) -> Option<(u64, Spelled, usize)> {
        number_before(text, end)
    }
}

impl NumberBefore for Tail {
    #[inline(always)]
    fn number_before(&self, text: &[u8], end: usize) -> Option<(u64, Spelled, usize)> {
        Tail::number_before(self, text, end)
    }
}

/// [`parse_canonical_op`] with `number_before` reading the number token that ends at a
/// position (as [`number_before`] does).
#[inline(always)]
fn parse_op_with<'a>(text: &'a [u8], numbers: &impl NumberBefore) -> Option<OpLine<'a>> {
    // (A marker, `= …`, fails below: `=` is no operation, nor `= ` a caller's `@ `.)
    let (last, last_spelled, s1) = numbers.number_before(text, text.len())?;
    let (op, addr, size, op_space) = match op_before(text, s1) {
        Some((c @ (b'-' | b'<'), op_space)) => {
            if last_spelled == Spelled::Zero {
                return None;
            }
            let op = if c == b'-' { Op::Free } else { Op::ReallocOld };
            (op, last, 0, op_space)
        }
        _ => {
            if last_spelled == Spelled::Nil {
                return None;
            }
            let (addr, addr_spelled, s2) = numbers.number_before(text, s1)?;
            if addr_spelled == Spelled::Zero {
                return None;
            }
            let (c, op_space) = op_before(text, s2)?;
            let op = match c {
                b'+' => Op::Malloc,
                b'>' => Op::ReallocNew,
                _ => return None,
            };
            (op, addr, last, op_space)
        }
    };
    // The space before the operation, if any, ends `@ CALLER`.
    let caller = match op_space {
        None => None,
        Some(s) => Some(text[..s].strip_prefix(b"@ ")?),
    };
    Some(OpLine {
        caller,
        op,
        addr,
        size,
    })
}

/// Appends the line glibc would print for `line`, with its `\n`.
pub fn render(line: &OpLine<'_>, out: &mut Vec<u8>) {
    if let Some(c) = line.caller {
        out.extend_from_slice(b"@ ");
        out.extend_from_slice(c);
        out.push(b' ');
    }
    out.push(line.op.char());
    out.push(b' ');
    if line.addr == 0 {
        out.extend_from_slice(b"(nil)");
    } else {
        push_0x(out, line.addr);
    }
    if line.op.has_size() {
        if line.size == 0 {
            out.extend_from_slice(b" 0");
        } else {
            out.push(b' ');
            push_0x(out, line.size);
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> Vec<u8> {
        match parse(text.as_bytes()).unwrap() {
            Line::Op(l) => {
                let mut v = Vec::new();
                render(&l, &mut v);
                v
            }
            Line::Marker(_) => panic!("marker"),
        }
    }

    #[test]
    fn glibc_lines_render_back_exactly() {
        for l in [
            "@ perl:(perl_alloc+10)[0x6f930] + 0x55d2155594a0 0xeb8",
            "@ /lib/x86_64-linux-gnu/libc.so.6:[0x38896] < 0x55d150bc4d90",
            "@ /a b/c d:[0x1] > 0x10 0",
            "- (nil)",
            "+ (nil) 0x20",
        ] {
            assert_eq!(round(l), format!("{l}\n").into_bytes());
        }
    }

    #[test]
    fn callers_with_spaces_are_kept_whole() {
        let Ok(Line::Op(l)) = parse(b"@ /x y/z:[0x1] - 0x20") else {
            panic!("no parse")
        };
        assert_eq!(l.caller, Some(&b"/x y/z:[0x1]"[..]));
        assert_eq!((l.op, l.addr), (Op::Free, 0x20));
    }

    #[test]
    fn non_canonical_numbers_parse_but_render_differently() {
        assert_ne!(round("+ 0x0010 0x20"), b"+ 0x0010 0x20\n");
        assert_ne!(round("+ 0XAB 0x20"), b"+ 0XAB 0x20\n");
    }

    #[test]
    fn bad_lines_report_a_column() {
        let e = parse(b"@ caller * 0x10").unwrap_err();
        assert_eq!(e.column, 1);
        let e = parse(b"@ caller + 0xzz 0x10").unwrap_err();
        assert_eq!(e.column, 12);
        assert!(parse(b"").is_err());
        assert!(parse(b"x - 0x10").is_err());
    }

    #[test]
    fn the_canonical_flag_agrees_with_rendering() {
        let callers = [
            "",
            "@ perl:(x+10)[0x6f930] ",
            "@ /a b/c:[0x1] ",
            "@  ",
            "@ x  ",
            "@x ",
        ];
        let ops = ["+", "-", "<", ">", "*"];
        let nums = [
            "0x10",
            "0x0",
            "0",
            "(nil)",
            "0X10",
            "0x0010",
            "0xAB",
            "0xab",
            "0x",
            "00",
            "0xffffffffffffffff",
            "0x1ffffffffffffffff",
            "(NIL)",
        ];
        let mut checked = 0;
        let mut fast_checked = 0;
        for c in callers {
            for op in ops {
                for a in nums {
                    for s in ["", " 0x20", " 0", " 0x0", " (nil)", " 0X20", " 0x020"] {
                        for end in ["", "\r", " "] {
                            let text = format!("{c}{op} {a}{s}{end}");
                            // The one-pass parser takes exactly the lines that parse and
                            // print back the same.
                            let slow = match parse_checked(text.as_bytes()) {
                                Ok((Line::Op(l), true)) => Some(l),
                                _ => None,
                            };
                            assert_eq!(parse_canonical_op(text.as_bytes()), slow, "{text:?}");
                            fast_checked += 1;
                            // The encoder parses without a final `\r`, then requires none.
                            let core = text.strip_suffix('\r').unwrap_or(&text);
                            let Ok((Line::Op(l), canonical)) = parse_checked(core.as_bytes())
                            else {
                                continue;
                            };
                            let mut v = Vec::new();
                            render(&l, &mut v);
                            let same = v == format!("{text}\n").into_bytes();
                            assert_eq!(canonical && core == text, same, "{text:?}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 500, "{checked}");
        assert!(fast_checked > 5000, "{fast_checked}");
    }

    #[test]
    fn the_one_pass_parser_agrees_on_spacing_and_token_lengths() {
        // Lines cut and spaced every way around the tokens the one-pass parser looks back
        // over: it must take exactly the canonical operation lines, and parse them the same.
        let mut checked = 0;
        let parts = [
            "",
            " ",
            "@",
            "@ ",
            "@ c",
            "= ",
            "-",
            "<",
            "+",
            ">",
            "0",
            "(nil)",
            "0x1",
            "0x10",
            "0xffffffffffffffff",
            "0x1ffffffffffffffff",
            "0xfffffffffffffffff",
            "0x0000000000000001",
            "x",
        ];
        for a in parts {
            for b in parts {
                for c in parts {
                    for d in parts {
                        for sep in [" ", "  "] {
                            let text = [a, b, c, d].join(sep);
                            // Short lines are read byte by byte; after a long caller, through
                            // a `Tail`, whose window the tokens may start before.
                            for head in ["", "@ /usr/lib/libfoo.so.1:(f+10)[0x6f930] "] {
                                let text = format!("{head}{text}");
                                let slow = match parse_checked(text.as_bytes()) {
                                    Ok((Line::Op(l), true)) => Some(l),
                                    _ => None,
                                };
                                assert_eq!(parse_canonical_op(text.as_bytes()), slow, "{text:?}");
                                checked += usize::from(slow.is_some());
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
