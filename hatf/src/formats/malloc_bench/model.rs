//! The model of a malloc-bench `Tracefile` protobuf: each top-level field becomes one record in
//! a single byte stream (docs/FORMAT.md §6.1, `malloc-bench`), in which allocation ids and
//! freed ids are replaced by guesses that usually hold. One combined stream, not one per field:
//! the traces repeat whole sequences of lines, and an LZ coder finds those repeats once in a
//! combined stream instead of once per field stream.
//!
//! A field whose bytes are not the canonical serialisation of what it says (other field order,
//! over-long varints, unknown fields) is kept verbatim, so any byte string round-trips.
//!
//! Runs of records whose bytes repeat those of the record 1–4 before (a program alternating
//! between two calls, or repeating one) become one run record with the run's length
//! ([`RunCoder`]): the mixer then learns the distribution of run lengths instead of guessing,
//! byte after byte, where a run ends.

use std::collections::{BTreeSet, VecDeque};

use super::proto;
use crate::shared::live_set::LiveSet;
use metatf::varint::{put_u64, Cursor};

/// Record kind of a top-level field kept as its bytes (then varint length and the bytes).
pub const K_VERBATIM: u8 = 64;
/// Record kind of `max_simultaneous_allocs` (field 2, canonical; then the varint value).
pub const K_MAX: u8 = 65;
/// Record kinds `K_RUN + P − 1` (P = 1…[`MAX_PERIOD`]): the next n records have, each, the
/// bytes of the record P before it; varint n − [`MIN_RUN`] follows.
pub const K_RUN: u8 = 66;
/// Longest period a run record can repeat.
pub const MAX_PERIOD: usize = 4;
/// Shortest run written as a run record (shorter ones cost the mixer little as they are).
pub const MIN_RUN: u64 = 8;
/// Longest run one run record holds (a longer one is written as several). With
/// [`MAX_RUN_RECORD`] it bounds what a damaged or hostile run record makes the decoder produce
/// (at most 2^16 records of 64 stream bytes each).
pub const MAX_RUN: u64 = 1 << 16;
/// Longest record, in stream bytes, a run may repeat.
pub const MAX_RUN_RECORD: usize = 64;

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

/// Encodes the protobuf `text` into the model stream without run records (what the run coding
/// is measured against); returns the number of records.
pub fn encode(text: &[u8], out: &mut Vec<u8>) -> u64 {
    encode_with(text, out, false)
}

/// Encodes the protobuf `text` into the model stream with run records (what the encoder
/// writes); returns the number of records (each top-level field is
/// one, also inside a run).
pub fn encode_runs(text: &[u8], out: &mut Vec<u8>) -> u64 {
    encode_with(text, out, true)
}

fn encode_with(text: &[u8], out: &mut Vec<u8>, runs_wanted: bool) -> u64 {
    let mut ids = IdState::new();
    let mut runs = RunCoder::default();
    let mut at = 0usize;
    let mut records = 0u64;
    let (mut scratch, mut record) = (Vec::with_capacity(64), Vec::with_capacity(64));
    while at < text.len() {
        let rest = &text[at..];
        record.clear();
        match proto::field_len(rest) {
            Some(n) => {
                encode_field(&rest[..n], &mut ids, &mut scratch, &mut record);
                at += n;
            }
            None => {
                // Not a protobuf field: keep everything that is left.
                verbatim(rest, &mut record);
                at = text.len();
            }
        }
        records += 1;
        if runs_wanted {
            runs.push(&record, out);
        } else {
            out.extend_from_slice(&record);
        }
    }
    runs.finish(out);
    records
}

/// Appends the record of one well-formed top-level field.
fn encode_field(field: &[u8], ids: &mut IdState, scratch: &mut Vec<u8>, out: &mut Vec<u8>) {
    if let Some(line) = canonical_line(field, scratch) {
        encode_line(&line, ids, out);
        return;
    }
    let mut c = Cursor::new(field, "Tracefile");
    if c.u64() == Ok(0x10) {
        if let Ok(v) = c.u64() {
            scratch.clear();
            scratch.push(0x10);
            put_u64(scratch, v);
            if scratch == field {
                out.push(K_MAX);
                put_u64(out, v);
                return;
            }
        }
    }
    verbatim(field, out);
}

fn verbatim(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(K_VERBATIM);
    put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Writes records, turning runs of records that repeat the record P before (P ≤
/// [`MAX_PERIOD`], at least [`MIN_RUN`] in a row) into run records. Greedy and streaming: a
/// record waits (at most [`MIN_RUN`] of them) until it is known whether it starts a run; the
/// smallest period that reaches [`MIN_RUN`] repeats first wins and the run goes on as long as
/// that period holds. The records in a run are still records: they are what "the record P
/// before" means for the records after the run.
#[derive(Debug, Default)]
struct RunCoder {
    /// The last [`MAX_PERIOD`] records, newest last.
    recent: VecDeque<Vec<u8>>,
    /// Records not written yet, oldest first (they end the recent records).
    pending: VecDeque<Vec<u8>>,
    /// Per period P − 1: how many records in a row, up to the newest, equal the one P before.
    streak: [u64; MAX_PERIOD],
    /// The run being extended: its period and length.
    run: Option<(usize, u64)>,
    /// Buffers to reuse.
    spare: Vec<Vec<u8>>,
}

impl RunCoder {
    fn push(&mut self, record: &[u8], out: &mut Vec<u8>) {
        let repeats = |p: usize, recent: &VecDeque<Vec<u8>>| {
            recent
                .len()
                .checked_sub(p)
                .is_some_and(|i| recent[i] == record)
        };
        if let Some((p, n)) = self.run {
            if n < MAX_RUN && repeats(p, &self.recent) {
                self.run = Some((p, n + 1));
                self.remember(record);
                return;
            }
            write_run(p, n, out);
            self.run = None;
            self.streak = [0; MAX_PERIOD];
        }
        for p in 1..=MAX_PERIOD {
            self.streak[p - 1] = if record.len() <= MAX_RUN_RECORD && repeats(p, &self.recent) {
                self.streak[p - 1] + 1
            } else {
                0
            };
        }
        let mut copy = self.spare.pop().unwrap_or_default();
        copy.clear();
        copy.extend_from_slice(record);
        self.pending.push_back(copy);
        self.remember(record);
        // A streak never exceeds the pending records: they were all pushed since the last run.
        if let Some(p) = (1..=MAX_PERIOD).find(|&p| self.streak[p - 1] >= MIN_RUN) {
            while self.pending.len() as u64 > MIN_RUN {
                self.write_oldest(out);
            }
            self.spare.extend(self.pending.drain(..));
            self.run = Some((p, MIN_RUN));
        } else if self.pending.len() as u64 > MIN_RUN {
            self.write_oldest(out);
        }
    }

    fn write_oldest(&mut self, out: &mut Vec<u8>) {
        if let Some(r) = self.pending.pop_front() {
            out.extend_from_slice(&r);
            self.spare.push(r);
        }
    }

    fn remember(&mut self, record: &[u8]) {
        let mut copy = if self.recent.len() == MAX_PERIOD {
            self.recent.pop_front().unwrap_or_default()
        } else {
            self.spare.pop().unwrap_or_default()
        };
        copy.clear();
        copy.extend_from_slice(record);
        self.recent.push_back(copy);
    }

    fn finish(&mut self, out: &mut Vec<u8>) {
        if let Some((p, n)) = self.run.take() {
            write_run(p, n, out);
        }
        while !self.pending.is_empty() {
            self.write_oldest(out);
        }
    }
}

fn write_run(period: usize, n: u64, out: &mut Vec<u8>) {
    out.push(K_RUN + (period - 1) as u8);
    put_u64(out, n - MIN_RUN);
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

/// Decodes the model stream back into the protobuf bytes; errors name the record. Streams
/// without run records (written before them) decode the same way.
pub fn decode(stream: &[u8], text: &mut Vec<u8>) -> Result<u64, String> {
    decode_with(stream, text, &mut |_| Ok(()))
}

/// Bytes of protobuf [`decode_to`] gathers before handing them on.
const DECODE_BATCH: usize = 1 << 20;

/// [`decode`], writing the protobuf to `out` about [`DECODE_BATCH`] bytes at a time instead of
/// holding all of it. Errors of `out` come back as their message, after "writing: ".
pub fn decode_to(stream: &[u8], out: &mut dyn std::io::Write) -> Result<u64, String> {
    let mut text = Vec::with_capacity(DECODE_BATCH + 4096);
    let mut hand_on = |text: &mut Vec<u8>| -> Result<(), String> {
        out.write_all(text).map_err(|e| format!("writing: {e}"))?;
        text.clear();
        Ok(())
    };
    let records = decode_with(stream, &mut text, &mut |text| {
        if text.len() >= DECODE_BATCH {
            hand_on(text)?;
        }
        Ok(())
    })?;
    hand_on(&mut text)?;
    Ok(records)
}

/// [`decode`], calling `after_record` with the text after every record (it may take the bytes
/// out).
fn decode_with(
    stream: &[u8],
    text: &mut Vec<u8>,
    after_record: &mut dyn FnMut(&mut Vec<u8>) -> Result<(), String>,
) -> Result<u64, String> {
    let mut ids = IdState::new();
    let mut c = Cursor::new(stream, "model");
    let mut records = 0u64;
    // Where in `stream` the bytes of the last MAX_PERIOD records are, newest last (a record of
    // a run has the bytes of the one it repeats).
    let mut recent: VecDeque<(usize, usize)> = VecDeque::with_capacity(MAX_PERIOD + 1);
    let remember = |r: (usize, usize), recent: &mut VecDeque<(usize, usize)>| {
        if recent.len() == MAX_PERIOD {
            recent.pop_front();
        }
        recent.push_back(r);
    };
    while !c.is_empty() {
        let at = |m: String| format!("record {records}: {m}");
        let start = c.position();
        let kind = c.byte().map_err(at)?;
        if (K_RUN..K_RUN + MAX_PERIOD as u8).contains(&kind) {
            let period = usize::from(kind - K_RUN) + 1;
            let n = c.u64().map_err(at)?.saturating_add(MIN_RUN);
            if n > MAX_RUN {
                return Err(at(format!("a run of {n} records (at most {MAX_RUN})")));
            }
            let Some(i) = recent.len().checked_sub(period) else {
                return Err(at(format!(
                    "a run repeating the record {period} before, but {} records precede it",
                    recent.len()
                )));
            };
            // The record `period` back is, through the whole run, the one at the same place
            // in the cycle of the last `period` records.
            let cycle: Vec<(usize, usize)> = recent.iter().skip(i).copied().collect();
            for k in 0..n {
                let at = |m: String| format!("record {records} (in a run): {m}");
                let (s, e) = cycle[(k % period as u64) as usize];
                if e - s > MAX_RUN_RECORD {
                    return Err(at(format!(
                        "a run repeats a record of {} bytes (at most {MAX_RUN_RECORD})",
                        e - s
                    )));
                }
                let mut rc = Cursor::new(&stream[s..e], "model");
                let kind = rc.byte().map_err(at)?;
                decode_record(kind, &mut ids, &mut rc, text).map_err(at)?;
                remember((s, e), &mut recent);
                records += 1;
                after_record(text)?;
            }
            continue;
        }
        decode_record(kind, &mut ids, &mut c, text).map_err(at)?;
        remember((start, c.position()), &mut recent);
        records += 1;
        after_record(text)?;
    }
    Ok(records)
}

/// Decodes the record of kind `kind` (already read) from `c` and appends its protobuf bytes.
fn decode_record(
    kind: u8,
    ids: &mut IdState,
    c: &mut Cursor<'_>,
    text: &mut Vec<u8>,
) -> Result<(), String> {
    match kind {
        K_VERBATIM => {
            let n = c.u64()?;
            let n = usize::try_from(n).map_err(|_| "verbatim field too long".to_string())?;
            text.extend_from_slice(c.take(n)?);
        }
        K_MAX => {
            text.push(0x10);
            put_u64(text, c.u64()?);
        }
        k if (1..=4).contains(&(k & 7)) && k < 64 => {
            let line = decode_line(k, ids, c)?;
            line.write(text);
        }
        k => return Err(format!("unknown record kind {k}")),
    }
    Ok(())
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
        // The stream with run records decodes to the same text and record count.
        let mut runs = Vec::new();
        assert_eq!(encode_runs(text, &mut runs), n);
        back.clear();
        assert_eq!(decode(&runs, &mut back).unwrap(), n);
        assert_eq!(back, text);
        stream
    }

    /// How many run records `stream` holds.
    fn runs_in(stream: &[u8]) -> usize {
        // Kind bytes 66..=69 only appear as run records: ids and values are varints after a
        // kind, but a line's kind is below 64 and the values here are all below 66.
        stream
            .iter()
            .filter(|&&b| (K_RUN..K_RUN + MAX_PERIOD as u8).contains(&b))
            .count()
    }

    #[test]
    fn runs_of_repeated_records_become_run_records() {
        // Malloc and free of the same id, alternating, with a double free / double malloc every
        // so often (the shape of onoro-cc), then a period-3 stretch, then 2^16 + 20 identical
        // frees of ids that are not live (one period, longer than one run record holds).
        let mut t = Vec::new();
        let mut id = 0;
        for gap in [30u64, 12, 9, 45, 8, 100] {
            for _ in 0..gap {
                t.extend(line(1, &[(0, id), (1, 48)]));
                t.extend(line(2, &[(0, id)]));
            }
            t.extend(line(1, &[(0, id), (1, 48)]));
            t.extend(line(1, &[(0, id + 1), (1, 48)]));
            t.extend(line(2, &[(0, id)]));
            t.extend(line(2, &[(0, id + 1)]));
            id += 2;
        }
        for _ in 0..20 {
            t.extend(line(1, &[(0, id), (1, 16)]));
            t.extend(line(1, &[(0, id + 1), (1, 32)]));
            t.extend(line(2, &[(0, id + 1)]));
            id += 2;
        }
        for _ in 0..(MAX_RUN + 20) {
            t.extend(line(2, &[(0, 1 << 40)]));
        }
        round_trip(&t);
        let mut plain = Vec::new();
        encode(&t, &mut plain);
        let mut runs = Vec::new();
        encode_runs(&t, &mut runs);
        assert_eq!(runs_in(&plain), 0);
        // Six alternations, the period-3 stretch, and two for the long run.
        assert!(runs_in(&runs) >= 9, "{} run records", runs_in(&runs));
        assert!(
            runs.len() * 20 < plain.len(),
            "{} vs {}",
            runs.len(),
            plain.len()
        );
    }

    #[test]
    fn short_repeats_and_long_records_stay_records() {
        let mut t = Vec::new();
        for _ in 0..MIN_RUN {
            t.extend(line(2, &[(0, 7)]));
        }
        // A field longer than MAX_RUN_RECORD, repeated: kept verbatim each time, never a run.
        let long = [0x1a, 70].into_iter().chain([5u8; 70]).collect::<Vec<_>>();
        for _ in 0..30 {
            t.extend(&long);
        }
        round_trip(&t);
        let mut runs = Vec::new();
        encode_runs(&t, &mut runs);
        assert_eq!(runs_in(&runs[..MIN_RUN as usize * 2]), 0);
        let mut plain = Vec::new();
        encode(&t, &mut plain);
        assert_eq!(runs, plain);
    }

    #[test]
    fn damaged_run_records_are_errors() {
        let mut out = Vec::new();
        // A run before any record, one longer than MAX_RUN, one of period 2 after one record.
        assert!(decode(&[K_RUN, 0], &mut out).is_err());
        // One malloc (kind case 1 with fields 1 and 2, a fresh id, size 5), then the run.
        let mut s = vec![1 | 3 << 3, ID_FRESH, 5];
        s.push(K_RUN);
        put_u64(&mut s, MAX_RUN);
        assert!(decode(&s, &mut out).unwrap_err().contains("at most"));
        let mut s = vec![1 | 3 << 3, ID_FRESH, 5];
        s.extend([K_RUN + 1, 0]);
        assert!(decode(&s, &mut out)
            .unwrap_err()
            .contains("1 records precede"));
        // A run repeating a record longer than MAX_RUN_RECORD.
        let mut s = vec![K_VERBATIM, 70];
        s.extend([5u8; 70]);
        s.extend([K_RUN, 0]);
        assert!(decode(&s, &mut out).unwrap_err().contains("at most 64"));
        // Cut anywhere: an error or a shorter text, never a panic.
        let mut t = Vec::new();
        for _ in 0..40 {
            t.extend(line(2, &[(0, 3)]));
        }
        let mut runs = Vec::new();
        encode_runs(&t, &mut runs);
        for cut in 0..runs.len() {
            let _ = decode(&runs[..cut], &mut Vec::new());
        }
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
