//! "ASCII": one line per event.
//!
//! `m SIZE ADDR` malloc, `c SIZE ADDR NMEMB` calloc, `a SIZE ADDR ALIGN` memalign, `f ADDR` free,
//! `r SIZE OLD NEW` realloc, `t` / `d` thread start / end; then, only when non-zero, ` T<thread>`,
//! and for values the kind has no column for: ` S<size>`, ` X<extra>`, ` A<address>`, ` O<old>`.
//! Sizes, counts and threads are decimal; addresses are lower-case hex without `0x`.

use crate::shared::allocation::event::{AllocEvent, AllocKind};
use std::fmt::Write as _;

fn line(e: &AllocEvent, out: &mut String) {
    let (letter, has_size, has_addr, has_extra) = match e.kind {
        AllocKind::Malloc => ('m', true, true, false),
        AllocKind::Calloc => ('c', true, true, true),
        AllocKind::Memalign => ('a', true, true, true),
        AllocKind::Free => ('f', false, true, false),
        AllocKind::Realloc => ('r', true, true, false),
        AllocKind::CreateThread => ('t', false, false, false),
        AllocKind::DestroyThread => ('d', false, false, false),
    };
    out.push(letter);
    if has_size {
        let _ = write!(out, " {}", e.size);
    }
    if e.kind == AllocKind::Realloc {
        let _ = write!(out, " {:x}", e.old_address);
    }
    if has_addr {
        let _ = write!(out, " {:x}", e.address);
    }
    if has_extra {
        let _ = write!(out, " {}", e.extra);
    }
    if e.thread != 0 {
        let _ = write!(out, " T{}", e.thread);
    }
    if !has_size && e.size != 0 {
        let _ = write!(out, " S{}", e.size);
    }
    if !has_extra && e.extra != 0 {
        let _ = write!(out, " X{}", e.extra);
    }
    if !has_addr && e.address != 0 {
        let _ = write!(out, " A{:x}", e.address);
    }
    if e.kind != AllocKind::Realloc && e.old_address != 0 {
        let _ = write!(out, " O{:x}", e.old_address);
    }
    out.push('\n');
}

/// Encodes events as text.
pub fn encode(events: &[AllocEvent]) -> Vec<u8> {
    let mut s = String::with_capacity(events.len() * 16);
    for e in events {
        line(e, &mut s);
    }
    s.into_bytes()
}

fn num(tok: &str, hex: bool) -> Option<u64> {
    if hex {
        u64::from_str_radix(tok, 16).ok()
    } else {
        tok.parse().ok()
    }
}

fn parse_line(text: &str) -> Option<AllocEvent> {
    let mut toks = text.split(' ');
    let kind = match toks.next()? {
        "m" => AllocKind::Malloc,
        "c" => AllocKind::Calloc,
        "a" => AllocKind::Memalign,
        "f" => AllocKind::Free,
        "r" => AllocKind::Realloc,
        "t" => AllocKind::CreateThread,
        "d" => AllocKind::DestroyThread,
        _ => return None,
    };
    let mut e = AllocEvent::new(kind);
    match kind {
        AllocKind::Malloc => {
            e.size = num(toks.next()?, false)?;
            e.address = num(toks.next()?, true)?;
        }
        AllocKind::Calloc | AllocKind::Memalign => {
            e.size = num(toks.next()?, false)?;
            e.address = num(toks.next()?, true)?;
            e.extra = num(toks.next()?, false)?;
        }
        AllocKind::Free => e.address = num(toks.next()?, true)?,
        AllocKind::Realloc => {
            e.size = num(toks.next()?, false)?;
            e.old_address = num(toks.next()?, true)?;
            e.address = num(toks.next()?, true)?;
        }
        AllocKind::CreateThread | AllocKind::DestroyThread => {}
    }
    for tok in toks {
        let (k, v) = tok.split_at_checked(1)?;
        match k {
            "T" => e.thread = num(v, false)?,
            "S" => e.size = num(v, false)?,
            "X" => e.extra = num(v, false)?,
            "A" => e.address = num(v, true)?,
            "O" => e.old_address = num(v, true)?,
            _ => return None,
        }
    }
    Some(e)
}

/// Decodes text written by [`encode`]; a line that is not exactly what [`encode`] writes is an
/// error naming its line and column 1.
pub fn decode(bytes: &[u8]) -> Result<Vec<AllocEvent>, String> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| format!("byte {}: not UTF-8", e.valid_up_to()))?;
    let mut events = Vec::new();
    let mut buf = String::new();
    let body = text.strip_suffix('\n').unwrap_or(text);
    if body.is_empty() {
        return if text.is_empty() {
            Ok(events)
        } else {
            Err("line 1:1: empty line".into())
        };
    }
    if !text.ends_with('\n') {
        return Err("the last line has no newline".into());
    }
    for (n, l) in body.split('\n').enumerate() {
        let e =
            parse_line(l).ok_or_else(|| format!("line {}:1: not an event line: {l:?}", n + 1))?;
        buf.clear();
        line(&e, &mut buf);
        if buf.as_bytes()[..buf.len() - 1] != *l.as_bytes() {
            return Err(format!("line {}:1: not in canonical form: {l:?}", n + 1));
        }
        events.push(e);
    }
    Ok(events)
}
