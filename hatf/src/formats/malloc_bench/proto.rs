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

/// Longest top-level field read as a stream: a trace line is a few dozen bytes, so a longer
/// one is damage, refused before it is buffered.
const MAX_STREAMED_FIELD: u64 = 1 << 20;

/// Calls `sink` with every trace line of the (uncompressed) protobuf stream `r`. Errors name
/// the byte offset in the uncompressed message and the line number.
///
/// The stream is read in pieces and cut into top-level fields by [`field_len`], the same cut
/// a stored message gets, so the message's structure is parsed in one place.
pub fn for_each_line(r: &mut dyn Read, sink: &mut dyn FnMut(&TraceLine)) -> Result<(), String> {
    let mut buf: Vec<u8> = Vec::new();
    // `buf[start..]` is not read yet; `offset` is its position in the message.
    let (mut start, mut offset, mut n, mut ended) = (0usize, 0u64, 0u64, false);
    loop {
        let rest = &buf[start..];
        if let Some(len) = field_len(rest) {
            let mut c = Cursor::new(&rest[..len], "Tracefile field");
            if c.u64()? == 0x0a {
                let inner = c.u64().and_then(|m| c.take(m as usize))?;
                let line = parse_line(inner)
                    .map_err(|m| format!("trace line {n} at byte {offset}: {m}"))?;
                sink(&line);
                n += 1;
            }
            start += len;
            offset += len as u64;
            continue;
        }
        // A field not whole yet: refuse what no more bytes can make whole, else read on.
        let mut at = 0;
        if let Some(key) = varint::take(rest, &mut at) {
            match key & 7 {
                0 | 1 | 5 => {}
                2 => match varint::take(rest, &mut at) {
                    Some(len) if len > MAX_STREAMED_FIELD => {
                        return Err(format!(
                            "field of {len} bytes at byte {offset} is implausibly long"
                        ))
                    }
                    _ => {}
                },
                w => return Err(format!("unsupported wire type {w} at byte {offset}")),
            }
        } else if rest.len() >= varint::MAX_LEN {
            return Err(format!("varint overflows 64 bits at byte {offset}"));
        }
        // (A field's value that never ends, e.g. a varint of only continuation bytes.)
        if rest.len() as u64 > MAX_STREAMED_FIELD + 2 * varint::MAX_LEN as u64 {
            return Err(format!("field at byte {offset} does not parse"));
        }
        if ended {
            return match rest.is_empty() {
                true => Ok(()),
                false => Err(format!("input ends inside the field at byte {offset}")),
            };
        }
        buf.drain(..start);
        start = 0;
        let old = buf.len();
        buf.resize(old + (1 << 16), 0);
        let got = loop {
            match r.read(&mut buf[old..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                got => break got,
            }
        }
        .map_err(|e| format!("cannot read at byte {}: {e}", offset + old as u64))?;
        buf.truncate(old + got);
        ended = got == 0;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader handing out at most `step` bytes a call, so that fields straddle reads.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// A `Tracefile` of `n` malloc/free lines and a `max_simultaneous_allocs` field.
    fn tracefile(n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            let mut inner = Vec::new();
            if i % 2 == 0 {
                // malloc {result_id = i, input_size = 1000 * i}
                let mut m = vec![0x08];
                varint::put_u64(&mut m, i);
                m.push(0x10);
                varint::put_u64(&mut m, 1000 * i);
                inner.push(0x0a);
                varint::put_u64(&mut inner, m.len() as u64);
                inner.extend(m);
            } else {
                // free {input_id = i - 1}
                let mut f = vec![0x08];
                varint::put_u64(&mut f, i - 1);
                inner.push(0x12);
                varint::put_u64(&mut inner, f.len() as u64);
                inner.extend(f);
            }
            out.push(0x0a);
            varint::put_u64(&mut out, inner.len() as u64);
            out.extend(inner);
        }
        out.extend([0x10, 0x2a]);
        out
    }

    fn lines(bytes: &[u8], step: usize) -> Result<Vec<TraceLine>, String> {
        let mut got = Vec::new();
        for_each_line(&mut Trickle { bytes, step }, &mut |l| got.push(*l))?;
        Ok(got)
    }

    #[test]
    fn streamed_lines_are_the_stored_fields_lines() {
        let bytes = tracefile(3_000);
        let mut want = Vec::new();
        let mut at = 0;
        while let Some(len) = field_len(&bytes[at..]) {
            if let Some(TopLevel::Line(l)) = parse_top_level(&bytes[at..at + len]) {
                want.push(l);
            }
            at += len;
        }
        assert_eq!(want.len(), 3_000);
        for step in [1, 3, 7, 1 << 16] {
            assert_eq!(lines(&bytes, step).unwrap(), want, "reads of {step} bytes");
        }
    }

    #[test]
    fn a_cut_or_damaged_stream_is_an_error() {
        let bytes = tracefile(10);
        for cut in [1, 2, 5, bytes.len() - 1] {
            let e = lines(&bytes[..cut], 3).unwrap_err();
            assert!(e.contains("ends inside"), "cut at {cut}: {e}");
        }
        let e = lines(&[0x0b, 0x00], 1).unwrap_err();
        assert!(e.contains("unsupported wire type 3"), "{e}");
        let mut long = vec![0x0a];
        varint::put_u64(&mut long, 2 << 20);
        assert!(lines(&long, 1).unwrap_err().contains("implausibly long"));
    }

    /// A value that never ends is refused after a bounded read, not buffered to the end.
    #[test]
    fn an_endless_varint_is_refused_early() {
        let mut bytes = vec![0x08];
        bytes.extend(std::iter::repeat_n(0x80, 4 << 20));
        let mut r = Trickle {
            bytes: &bytes,
            step: 1 << 16,
        };
        let e = for_each_line(&mut r, &mut |_| {}).unwrap_err();
        assert!(e.contains("does not parse"), "{e}");
        assert!(
            r.bytes.len() > 2 << 20,
            "read {} bytes",
            bytes.len() - r.bytes.len()
        );
    }
}
