//! The model of a malloc-bench `Tracefile` protobuf: each top-level field becomes one record in
//! a single byte stream (docs/FORMAT.md §6.1, `malloc-bench`), in which allocation ids and
//! freed ids are replaced by guesses that usually hold. One combined stream, not one per field:
//! the traces repeat whole sequences of lines, and an LZ coder finds those repeats once in a
//! combined stream instead of once per field stream (measured on grep: 8% smaller).
//!
//! A field whose bytes are not the canonical serialisation of what it says (other field order,
//! over-long varints, unknown fields) is kept verbatim, so any byte string round-trips.

use std::collections::BTreeSet;

use crate::alloc::model::live::LiveSet;
use crate::alloc::varint::{put_u64, Cursor};

/// Record kind of a top-level field kept as its bytes (then varint length and the bytes).
pub const K_VERBATIM: u8 = 64;
/// Record kind of `max_simultaneous_allocs` (field 2, canonical; then the varint value).
pub const K_MAX: u8 = 65;

/// Free symbol: the id was not live; its value follows.
const FREE_MISS: u64 = 0;
/// Free symbol: the id after the last freed one.
const FREE_NEXT: u64 = 1;
/// Free symbols from this one on: the live id of rank `symbol - FREE_RANK`, newest first.
const FREE_RANK: u64 = 2;

/// Id symbols: the lowest free id, the most recently freed id, one more than the largest id,
/// or a miss followed by the id.
const ID_LOWEST: u8 = 0;
const ID_LIFO: u8 = 1;
const ID_FRESH: u8 = 2;
const ID_MISS: u8 = 3;

/// Which fields of a case are allocation ids, freed ids and plain numbers (0, 1, 2 = fields
/// 1, 2, 3): (freed, allocated). Field 1 of malloc/realloc/calloc is `result_id`, field 2 of
/// realloc `input_id`, field 1 of free `input_id`.
fn roles(case: u8) -> (Option<usize>, Option<usize>) {
    match case {
        1 | 4 => (None, Some(0)),
        2 => (Some(0), None),
        _ => (Some(1), Some(0)),
    }
}

/// What encoder and decoder both know about ids.
#[derive(Debug, Default)]
pub struct IdState {
    live: LiveSet,
    free_ids: BTreeSet<u64>,
    /// Freed ids, most recent last; entries no longer free are skipped lazily.
    lifo: Vec<u64>,
    fresh: u64,
    last_freed: Option<u64>,
}

impl IdState {
    /// A state before the first record.
    pub fn new() -> Self {
        IdState::default()
    }

    fn lifo_top(&mut self) -> Option<u64> {
        while let Some(&t) = self.lifo.last() {
            if self.free_ids.contains(&t) {
                return Some(t);
            }
            self.lifo.pop();
        }
        None
    }

    fn freed(&mut self, id: u64) {
        self.last_freed = Some(id);
        self.free_ids.insert(id);
        self.lifo.push(id);
        if self.lifo.len() > 2 * self.free_ids.len() + 1024 {
            // Keep the newest entry of each id that is still free: older copies of an id are
            // never reached (the newest one is met first, and all go stale together), so
            // dropping them changes no prediction and keeps the stack within 2 × free + 1024.
            let mut seen = std::collections::HashSet::with_capacity(self.free_ids.len());
            let free = &self.free_ids;
            let mut kept: Vec<u64> = self
                .lifo
                .iter()
                .rev()
                .filter(|&&id| free.contains(&id) && seen.insert(id))
                .copied()
                .collect();
            kept.reverse();
            self.lifo = kept;
        }
    }

    fn allocated(&mut self, id: u64) {
        self.free_ids.remove(&id);
        self.live.insert(id);
        self.fresh = self.fresh.max(id.saturating_add(1));
    }

    fn encode_free(&mut self, id: u64, out: &mut Vec<u8>) {
        let next = self.last_freed.and_then(|l| l.checked_add(1));
        if next == Some(id) && self.live.contains(id) {
            self.live.remove(id);
            put_u64(out, FREE_NEXT);
        } else if let Some(rank) = self.live.remove(id) {
            put_u64(out, rank as u64 + FREE_RANK);
        } else {
            put_u64(out, FREE_MISS);
            put_u64(out, id);
        }
        self.freed(id);
    }

    fn decode_free(&mut self, c: &mut Cursor<'_>) -> Result<u64, String> {
        let id = match c.u64()? {
            FREE_MISS => c.u64()?,
            FREE_NEXT => {
                let id = self
                    .last_freed
                    .and_then(|l| l.checked_add(1))
                    .filter(|&id| self.live.contains(id))
                    .ok_or("free symbol `next id` but that id is not live")?;
                self.live.remove(id);
                id
            }
            s => {
                let rank = usize::try_from(s - FREE_RANK).unwrap_or(usize::MAX);
                self.live.remove_rank(rank).ok_or_else(|| {
                    format!("free of rank {rank} but only {} live ids", self.live.len())
                })?
            }
        };
        self.freed(id);
        Ok(id)
    }

    fn encode_alloc(&mut self, id: u64, out: &mut Vec<u8>) {
        let lowest = self.free_ids.first().copied();
        let top = self.lifo_top();
        if lowest == Some(id) {
            out.push(ID_LOWEST);
        } else if top == Some(id) {
            out.push(ID_LIFO);
        } else if id == self.fresh {
            out.push(ID_FRESH);
        } else {
            out.push(ID_MISS);
            put_u64(out, id);
        }
        self.allocated(id);
    }

    fn decode_alloc(&mut self, c: &mut Cursor<'_>) -> Result<u64, String> {
        let id = match c.byte()? {
            ID_LOWEST => self
                .free_ids
                .first()
                .copied()
                .ok_or("id symbol `lowest free` but no id is free")?,
            ID_LIFO => self
                .lifo_top()
                .ok_or("id symbol `last freed` but no id is free")?,
            ID_FRESH => self.fresh,
            ID_MISS => c.u64()?,
            s => return Err(format!("unknown id symbol {s}")),
        };
        self.allocated(id);
        Ok(id)
    }
}

/// A canonical trace line: case 1–4, which of fields 1–3 are present, and their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line {
    case: u8,
    present: u8,
    values: [u64; 3],
}

impl Line {
    fn kind(&self) -> u8 {
        self.case | (self.present << 3)
    }

    fn write(&self, out: &mut Vec<u8>) {
        let mut inner = Vec::with_capacity(32);
        for f in 0..3 {
            if self.present & (1 << f) != 0 {
                put_u64(&mut inner, (f as u64 + 1) << 3);
                put_u64(&mut inner, self.values[f]);
            }
        }
        let mut body = Vec::with_capacity(inner.len() + 4);
        put_u64(&mut body, (u64::from(self.case) << 3) | 2);
        put_u64(&mut body, inner.len() as u64);
        body.extend_from_slice(&inner);
        out.push(0x0a);
        put_u64(out, body.len() as u64);
        out.extend_from_slice(&body);
    }

    /// Parses the body of a `lines` field; `None` for anything but one case message of
    /// varint fields 1–3 (the canonical check is done by re-serialising).
    fn parse(body: &[u8]) -> Option<Line> {
        let mut c = Cursor::new(body, "TraceLine");
        let key = c.u64().ok()?;
        let case = u8::try_from(key >> 3)
            .ok()
            .filter(|c| (1..=4).contains(c))?;
        if key & 7 != 2 {
            return None;
        }
        let n = usize::try_from(c.u64().ok()?).ok()?;
        let mut inner = Cursor::new(c.take(n).ok()?, "case");
        if !c.is_empty() {
            return None;
        }
        let mut line = Line {
            case,
            present: 0,
            values: [0; 3],
        };
        while !inner.is_empty() {
            let k = inner.u64().ok()?;
            let f = usize::try_from(k >> 3)
                .ok()
                .filter(|f| (1..=3).contains(f))?;
            if k & 7 != 0 || line.present >> (f - 1) != 0 {
                return None; // wrong wire type, or fields not in increasing order
            }
            line.values[f - 1] = inner.u64().ok()?;
            line.present |= 1 << (f - 1);
        }
        Some(line)
    }
}

/// The varint at `b[at..]` and the position after it.
fn varint_at(b: &[u8], mut at: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(at)?;
        at += 1;
        v |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some((v, at));
        }
    }
    None
}

/// Length of the top-level field at the start of `rest`, if it is well formed.
fn field_len(rest: &[u8]) -> Option<usize> {
    let (key, at) = varint_at(rest, 0)?;
    let end = match key & 7 {
        0 => varint_at(rest, at)?.1,
        1 => at.checked_add(8)?,
        2 => {
            let (n, at) = varint_at(rest, at)?;
            at.checked_add(usize::try_from(n).ok()?)?
        }
        5 => at.checked_add(4)?,
        _ => return None,
    };
    (end <= rest.len()).then_some(end)
}

/// Encodes the protobuf `text` into the model stream; returns the number of records.
pub fn encode(text: &[u8], out: &mut Vec<u8>) -> u64 {
    let mut ids = IdState::new();
    let mut at = 0usize;
    let mut records = 0u64;
    let mut scratch = Vec::with_capacity(64);
    while at < text.len() {
        let rest = &text[at..];
        let Some(n) = field_len(rest) else {
            // Not a protobuf field: keep everything that is left.
            out.push(K_VERBATIM);
            put_u64(out, rest.len() as u64);
            out.extend_from_slice(rest);
            records += 1;
            break;
        };
        let field = &rest[..n];
        records += 1;
        at += n;
        if let Some(line) = canonical_line(field, &mut scratch) {
            encode_line(&line, &mut ids, out);
            continue;
        }
        let mut c = Cursor::new(field, "Tracefile");
        if c.u64() == Ok(0x10) {
            if let Ok(v) = c.u64() {
                scratch.clear();
                scratch.push(0x10);
                put_u64(&mut scratch, v);
                if scratch == field {
                    out.push(K_MAX);
                    put_u64(out, v);
                    continue;
                }
            }
        }
        out.push(K_VERBATIM);
        put_u64(out, field.len() as u64);
        out.extend_from_slice(field);
    }
    records
}

fn canonical_line(field: &[u8], scratch: &mut Vec<u8>) -> Option<Line> {
    let mut c = Cursor::new(field, "Tracefile");
    if c.u64().ok()? != 0x0a {
        return None;
    }
    let n = usize::try_from(c.u64().ok()?).ok()?;
    let line = Line::parse(c.take(n).ok()?)?;
    scratch.clear();
    line.write(scratch);
    (scratch.as_slice() == field).then_some(line)
}

fn encode_line(line: &Line, ids: &mut IdState, out: &mut Vec<u8>) {
    out.push(line.kind());
    let (freed, allocated) = roles(line.case);
    let has = |f: usize| line.present & (1 << f) != 0;
    if let Some(f) = freed.filter(|&f| has(f)) {
        ids.encode_free(line.values[f], out);
    }
    if let Some(f) = allocated.filter(|&f| has(f)) {
        ids.encode_alloc(line.values[f], out);
    }
    for f in 0..3 {
        if has(f) && Some(f) != freed && Some(f) != allocated {
            put_u64(out, line.values[f]);
        }
    }
}

/// Decodes the model stream back into the protobuf bytes; errors name the record.
pub fn decode(stream: &[u8], text: &mut Vec<u8>) -> Result<u64, String> {
    let mut ids = IdState::new();
    let mut c = Cursor::new(stream, "model");
    let mut records = 0u64;
    while !c.is_empty() {
        let at = |m: String| format!("record {records}: {m}");
        let kind = c.byte().map_err(at)?;
        match kind {
            K_VERBATIM => {
                let n = c.u64().map_err(at)?;
                let n = usize::try_from(n).map_err(|_| at("verbatim field too long".into()))?;
                text.extend_from_slice(c.take(n).map_err(at)?);
            }
            K_MAX => {
                text.push(0x10);
                put_u64(text, c.u64().map_err(at)?);
            }
            k if (1..=4).contains(&(k & 7)) && k < 64 => {
                let line = decode_line(k, &mut ids, &mut c).map_err(at)?;
                line.write(text);
            }
            k => return Err(at(format!("unknown record kind {k}"))),
        }
        records += 1;
    }
    Ok(records)
}

fn decode_line(kind: u8, ids: &mut IdState, c: &mut Cursor<'_>) -> Result<Line, String> {
    let mut line = Line {
        case: kind & 7,
        present: kind >> 3,
        values: [0; 3],
    };
    let (freed, allocated) = roles(line.case);
    let has = |f: usize| line.present & (1 << f) != 0;
    if let Some(f) = freed.filter(|&f| has(f)) {
        line.values[f] = ids.decode_free(c)?;
    }
    if let Some(f) = allocated.filter(|&f| has(f)) {
        line.values[f] = ids.decode_alloc(c)?;
    }
    for f in 0..3 {
        if has(f) && Some(f) != freed && Some(f) != allocated {
            line.values[f] = c.u64()?;
        }
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(case: u8, fields: &[(usize, u64)]) -> Vec<u8> {
        let mut l = Line {
            case,
            present: 0,
            values: [0; 3],
        };
        for &(f, v) in fields {
            l.present |= 1 << f;
            l.values[f] = v;
        }
        let mut out = Vec::new();
        l.write(&mut out);
        out
    }

    fn round_trip(text: &[u8]) -> Vec<u8> {
        let mut stream = Vec::new();
        let n = encode(text, &mut stream);
        let mut back = Vec::new();
        assert_eq!(decode(&stream, &mut back).unwrap(), n);
        assert_eq!(back, text);
        stream
    }

    #[test]
    fn lines_ids_and_odd_bytes_round_trip() {
        let mut t = Vec::new();
        for i in 0..50u64 {
            t.extend(line(1, &[(0, i), (1, 16 + i % 3)]));
        }
        for i in (0..50u64).rev().step_by(2) {
            t.extend(line(2, &[(0, i)]));
        }
        t.extend(line(3, &[(0, 7), (1, 3), (2, 99)]));
        t.extend(line(3, &[(0, 3), (2, 9)]));
        t.extend(line(4, &[(0, 1000), (1, 2), (2, 8)]));
        t.extend(line(2, &[(0, 123_456)]));
        t.extend(line(2, &[]));
        t.extend([0x10, 0x96, 0x01]); // max_simultaneous_allocs = 150
        t.extend([0x10, 0x80, 0x00]); // over-long varint: verbatim
        let stream = round_trip(&t);
        assert!(
            stream.len() < t.len() / 2,
            "{} vs {}",
            stream.len(),
            t.len()
        );
        // Fields out of order, unknown fields and garbage stay verbatim.
        round_trip(&[0x0a, 0x06, 0x0a, 0x04, 0x10, 0x05, 0x08, 0x01]);
        round_trip(&[0x0a, 0x04, 0x2a, 0x02, 0x08, 0x01]);
        round_trip(&[0xff, 0xff, 0xff]);
        round_trip(&[]);
    }

    #[test]
    fn corrupt_streams_are_errors() {
        let mut text = Vec::new();
        text.extend(line(1, &[(0, 0), (1, 5)]));
        text.extend(line(2, &[(0, 0)]));
        let mut stream = Vec::new();
        encode(&text, &mut stream);
        for cut in 0..stream.len() {
            let _ = decode(&stream[..cut], &mut Vec::new());
        }
        assert!(decode(&[2 | 8, 9], &mut Vec::new()).is_err()); // free of rank 7, nothing live
        assert!(decode(&[1 | 8, 7], &mut Vec::new()).is_err()); // unknown id symbol
        assert!(decode(&[0], &mut Vec::new()).is_err());
    }
}
