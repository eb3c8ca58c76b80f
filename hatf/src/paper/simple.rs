//! "Simple binary": fixed 16-byte records of four 32-bit big-endian words, as in the paper.
//!
//! Record: byte 0 = kind (0 malloc, 1 calloc, 2 memalign, 3 free, 4 realloc, 5 create thread,
//! 6 destroy thread), with bit 7 set when a continuation record follows; bytes 1-3 = thread bits
//! 0-23; bytes 4-7 = size bits 0-31; bytes 8-11 = address bits 0-31; bytes 12-15 = bits 0-31 of
//! the old address (realloc) or of `extra` (other kinds).
//! Continuation (only when some value does not fit, e.g. 64-bit addresses): byte 0 = 0x7f,
//! bytes 1-3 = thread bits 24-47, then bits 32-63 of the three words.
//! The paper's traces were 32-bit, so it never needed the continuation.

use crate::shared::allocation::event::{AllocEvent, AllocKind};

/// Bytes per record.
pub const RECORD: usize = 16;
const CONTINUATION: u8 = 0x7f;
const FOLLOWS: u8 = 0x80;

/// The kind byte of each event kind.
pub fn kind_code(k: AllocKind) -> u8 {
    match k {
        AllocKind::Malloc => 0,
        AllocKind::Calloc => 1,
        AllocKind::Memalign => 2,
        AllocKind::Free => 3,
        AllocKind::Realloc => 4,
        AllocKind::CreateThread => 5,
        AllocKind::DestroyThread => 6,
    }
}

/// The event kind of a kind byte.
pub fn kind_from_code(c: u8) -> Option<AllocKind> {
    Some(match c {
        0 => AllocKind::Malloc,
        1 => AllocKind::Calloc,
        2 => AllocKind::Memalign,
        3 => AllocKind::Free,
        4 => AllocKind::Realloc,
        5 => AllocKind::CreateThread,
        6 => AllocKind::DestroyThread,
        _ => return None,
    })
}

fn words(e: &AllocEvent) -> Result<[u64; 3], String> {
    if e.kind == AllocKind::Realloc {
        if e.extra != 0 {
            return Err(
                "a realloc with a non-zero extra value has no place in simple binary".into(),
            );
        }
        Ok([e.size, e.address, e.old_address])
    } else {
        if e.old_address != 0 {
            return Err("only a realloc has an old address in simple binary".into());
        }
        Ok([e.size, e.address, e.extra])
    }
}

/// Encodes events; fails (naming the event) for a thread id of 2^48 or more.
pub fn encode(events: &[AllocEvent]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(events.len() * RECORD);
    for (i, e) in events.iter().enumerate() {
        let w = words(e).map_err(|m| format!("event {i}: {m}"))?;
        if e.thread >> 48 != 0 {
            return Err(format!(
                "event {i}: thread {} needs more than 48 bits",
                e.thread
            ));
        }
        let needs_more = e.thread >> 24 != 0 || w.iter().any(|v| v >> 32 != 0);
        let mut rec = [0u8; RECORD];
        rec[0] = kind_code(e.kind) | if needs_more { FOLLOWS } else { 0 };
        rec[1..4].copy_from_slice(&(e.thread as u32).to_be_bytes()[1..]);
        for (k, v) in w.iter().enumerate() {
            rec[4 + 4 * k..8 + 4 * k].copy_from_slice(&(*v as u32).to_be_bytes());
        }
        out.extend_from_slice(&rec);
        if needs_more {
            let mut c = [0u8; RECORD];
            c[0] = CONTINUATION;
            c[1..4].copy_from_slice(&((e.thread >> 24) as u32).to_be_bytes()[1..]);
            for (k, v) in w.iter().enumerate() {
                c[4 + 4 * k..8 + 4 * k].copy_from_slice(&((v >> 32) as u32).to_be_bytes());
            }
            out.extend_from_slice(&c);
        }
    }
    Ok(out)
}

fn word(rec: &[u8], k: usize) -> u64 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&rec[4 + 4 * k..8 + 4 * k]);
    u64::from(u32::from_be_bytes(b))
}

fn thread24(rec: &[u8]) -> u64 {
    u64::from(u32::from_be_bytes([0, rec[1], rec[2], rec[3]]))
}

/// Decodes; errors name the byte offset and the record.
pub fn decode(bytes: &[u8]) -> Result<Vec<AllocEvent>, String> {
    let partial = bytes.len() % RECORD;
    if partial > 0 {
        return Err(format!(
            "byte {}: {} bytes is not a whole number of {RECORD}-byte records",
            bytes.len() - partial,
            bytes.len()
        ));
    }
    let mut events = Vec::with_capacity(bytes.len() / RECORD);
    let mut recs = bytes.chunks_exact(RECORD).enumerate();
    while let Some((n, rec)) = recs.next() {
        let at = n * RECORD;
        let kind = kind_from_code(rec[0] & !FOLLOWS).ok_or_else(|| {
            format!(
                "byte {at}, record {n}: kind byte {:#04x} is not 0..=6",
                rec[0]
            )
        })?;
        let mut w = [word(rec, 0), word(rec, 1), word(rec, 2)];
        let mut thread = thread24(rec);
        if rec[0] & FOLLOWS != 0 {
            let Some((_, c)) = recs.next() else {
                return Err(format!(
                    "byte {at}, record {n}: the continuation record is missing"
                ));
            };
            if c[0] != CONTINUATION {
                return Err(format!(
                    "byte {}, record {}: expected a continuation record (0x7f)",
                    at + RECORD,
                    n + 1
                ));
            }
            thread |= thread24(c) << 24;
            for (k, v) in w.iter_mut().enumerate() {
                *v |= word(c, k) << 32;
            }
            if thread >> 24 == 0 && w.iter().all(|v| v >> 32 == 0) {
                return Err(format!(
                    "byte {}, record {}: a continuation record that adds nothing",
                    at + RECORD,
                    n + 1
                ));
            }
        }
        let mut e = AllocEvent::new(kind);
        e.thread = thread;
        e.size = w[0];
        e.address = w[1];
        if kind == AllocKind::Realloc {
            e.old_address = w[2];
        } else {
            e.extra = w[2];
        }
        events.push(e);
    }
    Ok(events)
}
