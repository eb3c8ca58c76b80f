//! One wee_alloc trace line, `Alloc(size),` or `Free(index),`: parsed and printed back.

use std::io::Write;

/// A parsed line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeeLine {
    /// `Alloc(size),`
    Alloc(u64),
    /// `Free(index),`
    Free(u64),
}

/// Parses a line without its `\n`; on failure, the 1-based column and message.
pub fn parse(text: &[u8]) -> Result<WeeLine, (usize, String)> {
    let (ctor, rest): (fn(u64) -> WeeLine, &[u8]) = if let Some(r) = text.strip_prefix(b"Alloc(") {
        (WeeLine::Alloc, r)
    } else if let Some(r) = text.strip_prefix(b"Free(") {
        (WeeLine::Free, r)
    } else {
        return Err((1, "expected `Alloc(` or `Free(`".to_string()));
    };
    let at = text.len() - rest.len() + 1;
    let digits = rest
        .strip_suffix(b"),")
        .ok_or_else(|| (at, "expected a number and `),`".to_string()))?;
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return Err((at, "expected a decimal number".to_string()));
    }
    let n = std::str::from_utf8(digits)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| (at, "number too large".to_string()))?;
    Ok(ctor(n))
}

/// Prints a line, with its `\n`.
pub(super) fn render(l: WeeLine, out: &mut Vec<u8>) {
    let _ = match l {
        WeeLine::Alloc(n) => writeln!(out, "Alloc({n}),"),
        WeeLine::Free(n) => writeln!(out, "Free({n}),"),
    };
}
