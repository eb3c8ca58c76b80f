//! A small reader for malloc-bench's `Tracefile` protobuf (proto2):
//! `Tracefile { repeated TraceLine lines = 1; optional uint64 max_simultaneous_allocs = 2; }`,
//! `TraceLine` a oneof of `malloc = 1 {result_id, input_size, input_alignment}`,
//! `free = 2 {input_id, input_size_hint, input_alignment_hint}`,
//! `realloc = 3 {result_id, input_id, input_size}`, `calloc = 4 {result_id, input_nmemb,
//! input_size}` (all uint64, field numbers 1, 2, 3). Read as a stream, one line at a time.

use std::io::Read;

use crate::shared::allocation::event::{AllocEvent, AllocKind};
use metatf::varint::{self, Cursor};

/// One decoded trace line: the oneof case (1–4) and its three numbers (0 when absent), plus
/// which of them were present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceLine {
    /// 1 malloc, 2 free, 3 realloc, 4 calloc.
    pub case: u32,
    /// Fields 1, 2, 3 of the case message.
    pub fields: [u64; 3],
    /// Whether fields 1, 2, 3 were present.
    pub present: [bool; 3],
}

impl TraceLine {
    /// The event of this line; ids become addresses id + 1 so that 0 keeps meaning "null".
    pub fn event(&self) -> AllocEvent {
        let [a, b, c] = self.fields;
        match self.case {
            1 if self.present[2] => AllocEvent {
                address: a + 1,
                size: b,
                extra: c,
                ..AllocEvent::new(AllocKind::Memalign)
            },
            1 => AllocEvent {
                address: a + 1,
                size: b,
                ..AllocEvent::new(AllocKind::Malloc)
            },
            2 => AllocEvent {
                address: a + 1,
                ..AllocEvent::new(AllocKind::Free)
            },
            3 => AllocEvent {
                address: a + 1,
                old_address: if self.present[1] { b + 1 } else { 0 },
                size: c,
                ..AllocEvent::new(AllocKind::Realloc)
            },
            _ => AllocEvent {
                address: a + 1,
                extra: b,
                size: b.saturating_mul(c),
                ..AllocEvent::new(AllocKind::Calloc)
            },
        }
    }
}

/// Length of the well-formed protobuf field at the start of `rest` (wire types 0, 1, 2, 5).
pub fn field_len(rest: &[u8]) -> Option<usize> {
    let mut at = 0;
    let key = varint::take(rest, &mut at)?;
    let end = match key & 7 {
        0 => varint::take(rest, &mut at).map(|_| at)?,
        1 => at.checked_add(8)?,
        2 => {
            let n = varint::take(rest, &mut at)?;
            at.checked_add(usize::try_from(n).ok()?)?
        }
        5 => at.checked_add(4)?,
        _ => return None,
    };
    (end <= rest.len()).then_some(end)
}

/// The next varint of a protobuf stream, or `None` at a clean end before it. The bytes are
/// gathered here and decoded by `metatf::varint`, so protobuf follows its rules (longer forms
/// accepted, more than 64 bits refused).
fn read_varint(r: &mut dyn Read, offset: &mut u64) -> Result<Option<u64>, String> {
    let mut bytes = [0u8; varint::MAX_LEN];
    let mut len = 0;
    while len < varint::MAX_LEN {
        let mut byte = [0u8; 1];
        match r.read(&mut byte) {
            Ok(0) if len == 0 => return Ok(None),
            Ok(0) => return Err(format!("input ends inside a varint at byte {offset}")),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("cannot read at byte {offset}: {e}")),
        }
        *offset += 1;
        bytes[len] = byte[0];
        len += 1;
        if byte[0] & 0x80 == 0 {
            break;
        }
    }
    let mut at = 0;
    varint::take_checked(&bytes[..len], &mut at)
        .map(Some)
        .map_err(|_| format!("varint overflows 64 bits at byte {offset}"))
}

fn skip(c: &mut Cursor<'_>, wire: u64) -> Result<(), String> {
    match wire {
        0 => c.u64().map(|_| ()),
        1 => c.take(8).map(|_| ()),
        2 => {
            let n = c.u64()?;
            c.take(usize::try_from(n).map_err(|_| "length too large".to_string())?)
                .map(|_| ())
        }
        5 => c.take(4).map(|_| ()),
        w => Err(format!("unsupported wire type {w}")),
    }
}

fn parse_line(bytes: &[u8]) -> Result<TraceLine, String> {
    let mut c = Cursor::new(bytes, "TraceLine");
    let mut line = TraceLine::default();
    while !c.is_empty() {
        let key = c.u64()?;
        let (field, wire) = (key >> 3, key & 7);
        if (1..=4).contains(&field) && wire == 2 {
            let n = usize::try_from(c.u64()?).map_err(|_| "length too large".to_string())?;
            let mut inner = Cursor::new(c.take(n)?, "TraceLine case");
            line.case = field as u32;
            while !inner.is_empty() {
                let k = inner.u64()?;
                let (f, w) = (k >> 3, k & 7);
                if (1..=3).contains(&f) && w == 0 {
                    line.fields[f as usize - 1] = inner.u64()?;
                    line.present[f as usize - 1] = true;
                } else {
                    skip(&mut inner, w)?;
                }
            }
        } else {
            skip(&mut c, wire)?;
        }
    }
    if line.case == 0 {
        return Err("trace line without malloc/free/realloc/calloc".to_string());
    }
    Ok(line)
}

/// Calls `sink` with every trace line of the (uncompressed) protobuf stream `r`. Errors name
/// the byte offset in the uncompressed message and the line number.
pub fn for_each_line(r: &mut dyn Read, sink: &mut dyn FnMut(&TraceLine)) -> Result<(), String> {
    let mut offset = 0u64;
    let mut n = 0u64;
    let mut buf = Vec::new();
    while let Some(key) = read_varint(r, &mut offset)? {
        let at = offset;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                read_varint(r, &mut offset)?.ok_or("input ends after a field key")?;
            }
            2 => {
                let len = read_varint(r, &mut offset)?.ok_or("input ends after a field key")?;
                let len =
                    usize::try_from(len).map_err(|_| format!("length too large at byte {at}"))?;
                if len > 1 << 20 {
                    return Err(format!(
                        "field of {len} bytes at byte {at} is implausibly long"
                    ));
                }
                buf.resize(len, 0);
                r.read_exact(&mut buf)
                    .map_err(|e| format!("input ends inside field {field} at byte {at}: {e}"))?;
                offset += len as u64;
                if field == 1 {
                    let line = parse_line(&buf)
                        .map_err(|m| format!("trace line {n} at byte {at}: {m}"))?;
                    sink(&line);
                    n += 1;
                }
            }
            w => return Err(format!("unsupported wire type {w} at byte {at}")),
        }
    }
    Ok(())
}

/// One top-level field of a `Tracefile` message that carries data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopLevel {
    /// `lines` (field 1): one trace line.
    Line(TraceLine),
    /// `max_simultaneous_allocs` (field 2).
    MaxSimultaneousAllocs(u64),
}

/// Reads one whole top-level field (as [`field_len`] cuts them); `None` when it is neither a
/// trace line nor `max_simultaneous_allocs`, or does not parse as one.
pub fn parse_top_level(field: &[u8]) -> Option<TopLevel> {
    let mut c = Cursor::new(field, "Tracefile field");
    let key = c.u64().ok()?;
    let parsed = match key {
        0x0a => {
            let n = usize::try_from(c.u64().ok()?).ok()?;
            TopLevel::Line(parse_line(c.take(n).ok()?).ok()?)
        }
        0x10 => TopLevel::MaxSimultaneousAllocs(c.u64().ok()?),
        _ => return None,
    };
    c.is_empty().then_some(parsed)
}
