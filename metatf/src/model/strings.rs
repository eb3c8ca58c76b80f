//! Byte strings of a modelled block (`vfield`s, and lines kept verbatim as `comment` records),
//! docs/FORMAT.md §7.5.
//!
//! Why more than an order-1 byte model: in a text trace read through inferred line patterns,
//! the byte strings (paths, symbol names, whole unmatched lines) hold most of the information,
//! and they repeat — whole, as the same field's earlier value, or in parts, as a path prefix
//! or a line seen a thousand lines before. So a string is coded in two steps:
//!
//! 1. a **dictionary**: the field's recent distinct strings of the same length (the length is
//!    already coded, in its own field) are candidates, most recent first, and a string equal
//!    to one of them is coded as its rank. First of all comes the *successor*: the string that
//!    followed the field's latest string the last time that one occurred, as a text
//!    compressor's match model predicts the next byte from the last occurrence of the current
//!    context, one string at a time. Traces that repeat a run of lines (a listing taken again,
//!    a loop of system calls) then code each repeated string as rank 0;
//! 2. any other string byte by byte, each bit predicted by two **logistic mixes** (one chosen
//!    by the match state, one by the previous byte, averaged) of hashed contexts (orders 0–5
//!    within the string, the current word, the byte at the same position of the field's
//!    previous string) and a **match model** (the byte
//!    that followed the last occurrence of the preceding bytes, anywhere in the block's
//!    strings, or at the start of a string the field's previous string), as in lpaq, then
//!    refined by an order-1 SSE stage.
//!
//! Strings are identified by field name, so fields of the same name in different records (the
//! same role in two line shapes) share a dictionary and contexts. All arithmetic is integer,
//! so writer and reader agree on every machine. Memory is bounded by what the block codes:
//! the context tables grow with the bytes coded bit by bit up to 2^[`MAX_TABLE_BITS`] slots
//! per context ([`Slots`]), the match model remembers the last 2^[`RING_BITS`] bytes, and
//! dictionaries keep strings of at most [`KEEP_MAX`] bytes.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::counter::FRESH;
use super::numbers::SmallModel;
use super::range::{Decoder, Encoder};
use super::streams::string_key;
use super::string_ends::{EndContext, EndModel};
use super::string_slots::{self, BucketAt, Slots};
pub(crate) use super::string_slots::{table_cap, MAX_TABLE_BITS, MIN_TABLE_BITS};
use crate::container::context_mix::{squash, Tables};
use crate::hash::FastMap;

/// Distinct strings a field's dictionary keeps, most recent first. Why 256, not 32: with
/// successors (below) a longer memory pays, since a string kept is also a context for the one
/// after it, and traces repeat more distinct strings than 32.
const KEPT: usize = 256;
/// Bytes of the strings a field keeps, at most: the bound the dictionary had with 32 strings
/// of up to [`KEEP_MAX`] bytes, so that memory per field does not grow with [`KEPT`].
const KEPT_BYTES: usize = 32 * KEEP_MAX;
/// Most candidates of one length (rank symbols 0..CANDIDATES; [`NEW`] for a new string).
const CANDIDATES: usize = 15;
/// The dictionary symbol of a string that is none of the candidates.
const NEW: u32 = 15;
/// Dictionary symbol models per field and kind of string (see [`Field`]'s `rank`).
const RANK_MODELS: usize = 4;
/// Longest string a dictionary keeps (and the column context looks at).
pub(crate) const KEEP_MAX: usize = 1024;
/// Hashed contexts of a bit. Why these eight: each of the first seven makes the text traces
/// larger when left out, while orders 6 and 7 and a word-pair context add lookups and no
/// gain, so they are not kept. The eighth, the current word (letters, digits and `_` since
/// the last other byte) after the byte before it, predicts the words that recur in log and
/// call text, for an eighth more lookups.
const CONTEXTS: usize = 8;
/// Mixer inputs: the contexts, the match model, a bias.
const INPUTS: usize = CONTEXTS + 2;
/// Weight sets of the first mixer: by match state (4), then by the bits of the byte so far.
const WEIGHT_SETS: usize = 4 * 256;
/// Weight sets of the second mixer: by whether the match model predicts this bit (2), then by
/// the string's previous byte. Why a second mixer: the weights a context deserves depend on
/// where in a word or number the byte is, which the previous byte tells, so the two mixers'
/// outputs are averaged (a third, chosen by the column byte, adds nothing the two miss).
const WEIGHT_SETS_2: usize = 2 * 256;
/// Bytes that must agree before the match model predicts from an earlier occurrence.
const MATCH_MIN: usize = 6;
/// Longest agreement checked when a match candidate is found.
const MATCH_CHECK: usize = 48;
/// Bytes of strings the match model remembers (4 MiB: more than the strings of most blocks,
/// and a bound on the memory of those with more).
pub(crate) const RING_BITS: u32 = 22;
/// Slots of the match model's table of last occurrences, at most. Why 2^19, not 2^20: even on
/// megabytes of strings the larger table finds almost no match the smaller one misses, and
/// the memory it would take pays for the longer dictionaries'.
const LAST_SEEN_BITS: u32 = 19;
/// Mixer learning rate (the error times this, over 2^16). Why 48: with two mixers sharing
/// the work, each must settle within the few thousand strings of a short trace; a faster
/// rate gains no more and makes the weights noisier.
const LEARNING_RATE: i32 = 48;
/// Slowest adaptation of a context slot: 1/`RATE_FLOOR` of the way per bit.
const RATE_FLOOR: u32 = 12;
/// A refinement bin moves 1/2^`APM_RATE` of the way to each bit.
const APM_RATE: i32 = 5;
/// Initial mixer weight (¼ in 16-bit fixed point).
const INITIAL_WEIGHT: i32 = 1 << 14;

/// Adaptation rates of the context slots: a slot seen n times moves 1/(n + 1.5) of the way
/// to each bit, down to 1/12 of the way. Why not §6.1's floor of 1/256: strings of a trace
/// drift (paths, names and arguments change with the phase of the program), so a slot must
/// keep following them rather than settle.
pub(crate) fn rates() -> &'static [u32; 256] {
    static R: OnceLock<[u32; 256]> = OnceLock::new();
    R.get_or_init(|| {
        let mut rate = [0u32; 256];
        for (n, r) in rate.iter_mut().enumerate() {
            *r = (65536 * 2 / (2 * n as u32 + 3)).max(65536 / RATE_FLOOR);
        }
        rate
    })
}

pub(crate) fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(Tables::new)
}

/// FNV-1a then a multiplicative finish: the hash of a field name.
pub(crate) fn field_id(name: &str) -> u64 {
    let h = name.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    });
    h.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[inline(always)]
pub(crate) fn mix(a: u64, b: u64) -> u64 {
    (a ^ b.wrapping_mul(0xD6E8_FEB8_6659_FD93))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
}

/// Moves a slot (22-bit probability of a 1 << 10 | count) toward `bit`.
#[inline(always)]
pub(crate) fn adapt(slot: u32, bit: u32, rate: &[u32; 256]) -> u32 {
    let n = slot & 1023;
    let p = i64::from(slot >> 10);
    let target = if bit == 1 { (1i64 << 22) - 1 } else { 0 };
    let p = p + (((target - p) * i64::from(rate[n as usize & 255])) >> 16);
    ((p as u32) << 10) | (n + 1).min(255)
}

/// A mixer's output: the weighted sum of the inputs, stretched domain, clamped.
#[inline(always)]
fn dot(w: &[i32; INPUTS], inputs: &[i32; INPUTS]) -> i32 {
    let dot: i64 = w
        .iter()
        .zip(inputs)
        .map(|(&w, &x)| i64::from(w) * i64::from(x))
        .sum();
    (dot >> 16).clamp(-2047, 2047) as i32
}

/// Moves a mixer's weights toward `bit`, given its output `st` ([`dot`]).
#[inline(always)]
fn learn(w: &mut [i32; INPUTS], inputs: &[i32; INPUTS], bit: u32, st: i32) {
    let err = ((bit as i32) << 12) - squash(st);
    for (w, &x) in w.iter_mut().zip(inputs) {
        *w += (x * err * LEARNING_RATE + (1 << 15)) >> 16;
    }
}

/// Either side of the range coder: the encoder codes the given bit, the decoder returns the
/// bit it reads. One byte routine serves both, so they cannot disagree.
pub(crate) trait BitIo {
    /// Codes or reads a bit whose probability of being 1 is `p1` of 4096.
    fn bit(&mut self, p1: u32, bit: u32) -> u32;
}

impl BitIo for Encoder {
    #[inline]
    fn bit(&mut self, p1: u32, bit: u32) -> u32 {
        self.bit_p(p1, bit == 1);
        bit
    }
}

impl BitIo for Decoder<'_> {
    #[inline]
    fn bit(&mut self, p1: u32, _: u32) -> u32 {
        u32::from(self.bit_p(p1))
    }
}

/// A string a field's dictionary keeps.
struct Kept {
    bytes: Vec<u8>,
    /// Its string key (`string_key`), which the record match names a string by.
    key: u64,
    /// Where the string that followed this one in the field (the last time this one was the
    /// field's latest) starts in the match model's history, and its length.
    next: Option<(u64, usize)>,
}

/// What a field remembers.
struct Field {
    /// Recent distinct strings, most recent first, and their bytes in all.
    recent: Vec<Kept>,
    kept_bytes: usize,
    /// Whether the field's latest string is `recent[0]` (not so after one too long to keep).
    latest_kept: bool,
    /// Dictionary symbol models: one candidate; several; several, the first a successor;
    /// the first the record match's string.
    rank: [SmallModel; RANK_MODELS],
    /// The same for strings coded with their ends, whose candidates are of any length.
    rank_any: [SmallModel; RANK_MODELS],
    /// The writer's models of what the symbols of `rank` would have been for the strings coded
    /// with their ends, metered only ([`EndStats`]).
    rank_shadow: [SmallModel; RANK_MODELS],
    /// The anchor of the field's last string in the ring (see `finish`), and its length.
    last_at: u64,
    last_len: usize,
}

impl Field {
    fn new() -> Field {
        Field {
            recent: Vec::new(),
            kept_bytes: 0,
            latest_kept: false,
            rank: std::array::from_fn(|_| SmallModel::new(4)),
            rank_any: std::array::from_fn(|_| SmallModel::new(4)),
            rank_shadow: std::array::from_fn(|_| SmallModel::new(4)),
            last_at: 0,
            last_len: 0,
        }
    }

    /// Where the string that followed the field's latest string last time lies, if known.
    fn successor(&self) -> Option<(u64, usize)> {
        self.recent.first().filter(|_| self.latest_kept)?.next
    }

    /// Indices in `recent` of the candidates for a string of `len` bytes (of any length when
    /// `len` is `None`).
    fn candidates(&self, len: Option<usize>, out: &mut Vec<usize>) {
        out.clear();
        out.extend(
            self.recent
                .iter()
                .enumerate()
                .filter(|(_, s)| len.is_none_or(|n| s.bytes.len() == n))
                .map(|(i, _)| i)
                .take(CANDIDATES),
        );
    }

    /// `s`, starting at `start` in the history, was coded: it becomes the successor of the
    /// field's latest string, and moves to the front (or enters, if short enough).
    fn remember(&mut self, s: &[u8], start: u64) {
        if self.latest_kept {
            if let Some(latest) = self.recent.first_mut() {
                latest.next = Some((start, s.len()));
            }
        }
        let found = self.recent.iter().position(|k| k.bytes == s);
        self.latest_kept = true;
        match found {
            Some(i) => {
                let v = self.recent.remove(i);
                self.recent.insert(0, v);
            }
            None if s.len() <= KEEP_MAX => {
                let bytes = s.to_vec();
                let key = string_key(s);
                self.recent.insert(
                    0,
                    Kept {
                        bytes,
                        key,
                        next: None,
                    },
                );
                self.kept_bytes += s.len();
                while self.recent.len() > KEPT || self.kept_bytes > KEPT_BYTES {
                    let gone = self.recent.pop().expect("more than the new string");
                    self.kept_bytes -= gone.bytes.len();
                }
            }
            None => self.latest_kept = false,
        }
    }
}

/// Bins of the final refinement per context.
const APM_BINS: usize = 33;
/// Contexts of the final refinement: the previous byte of the string and the partial byte.
const APM_CONTEXTS: usize = 256 * 256;

/// A fresh refinement table: every bin says what its input says.
fn apm_table() -> Vec<u16> {
    let mut row = [0u16; APM_BINS];
    for (j, r) in row.iter_mut().enumerate() {
        let x = (j as i32 - 16) * 128;
        *r = (squash(x.clamp(-2047, 2047)) * 16) as u16;
    }
    row.repeat(APM_CONTEXTS)
}

/// Bits a field's strings coded with their ends spent, and what coding their lengths instead
/// would have spared, as the writer's choice reads them ([`super::ends_choice`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct EndStats {
    /// The end bits of the strings coded byte by byte that a dictionary of strings of their
    /// length would not have found.
    pub(crate) ends: f64,
    /// The dictionary symbols over candidates of any length.
    pub(crate) rank_any: f64,
    /// The strings coded byte by byte (ends included) that a dictionary of strings of their
    /// length would have found.
    pub(crate) missed: f64,
    /// The dictionary symbols over candidates of the string's length, metered.
    pub(crate) rank_same: f64,
}

/// The byte-string model of a block.
pub(crate) struct StringModel {
    /// `CONTEXTS` tables of slots, growing with the bytes coded.
    slots: Slots,
    fields: FastMap<u64, Field>,
    weights: Vec<[i32; INPUTS]>,
    weights_2: Vec<[i32; INPUTS]>,
    /// The current string: field hash, bytes coded so far, the last 8 of them (last lowest),
    /// the hash of the current word, and the field's previous string (the column context).
    field: u64,
    at: usize,
    hist: u64,
    word: u64,
    column: Vec<u8>,
    base: [u64; CONTEXTS],
    bucket: [BucketAt; CONTEXTS],
    inputs: [i32; INPUTS],
    /// The match model: the last bytes of strings, positions of hashed contexts, the
    /// predicted position and how long the match has held, whether it is the field's previous
    /// string aligned to this one, and the probability that its bit is right per state.
    ring: Vec<u8>,
    pos: u64,
    /// Positions modulo 2^32 (0: none).
    last_seen: Vec<u32>,
    match_ptr: u64,
    match_len: usize,
    aligned: bool,
    hit: [u32; 32],
    /// The final refinement (SSE): per order-1 context and partial byte, 33 probabilities
    /// (16-bit) at evenly spaced stretched inputs, interpolated.
    apm: Vec<u16>,
    expected: Option<u32>,
    candidates: Vec<usize>,
    /// The successor ([`Field::successor`]) of the current string, when it has the length
    /// coded: candidate 0.
    succ_bytes: Vec<u8>,
    has_succ: bool,
    /// The string key of the string the record match names for the next string
    /// ([`StringModel::set_matched`]), and whether candidate 0 is that string.
    matched: Option<u64>,
    from_match: bool,
    /// One bit per position of the match model's history: whether a string starts there
    /// (so the string before it ended there), and whether the next byte pushed starts one.
    starts: Vec<u64>,
    next_start: bool,
    /// The end bits of strings coded with their ends, made when the first is coded.
    ends: Option<Box<EndModel>>,
    /// When the writer asks ([`StringModel::track_ends`]): a meter and each field's
    /// [`EndStats`].
    stats: Option<(Encoder, FastMap<u64, EndStats>)>,
}

impl StringModel {
    /// A fresh model whose context tables may grow to 2^`bits` slots each.
    pub(crate) fn new(bits: u32) -> StringModel {
        let bits = bits.clamp(MIN_TABLE_BITS, MAX_TABLE_BITS);
        StringModel {
            slots: Slots::new(CONTEXTS, bits),
            fields: HashMap::default(),
            weights: vec![[INITIAL_WEIGHT; INPUTS]; WEIGHT_SETS],
            weights_2: vec![[INITIAL_WEIGHT; INPUTS]; WEIGHT_SETS_2],
            field: 0,
            at: 0,
            hist: 0,
            word: 0,
            column: Vec::new(),
            base: [0; CONTEXTS],
            bucket: [0; CONTEXTS],
            inputs: [0; INPUTS],
            ring: Vec::new(),
            pos: 0,
            last_seen: vec![0; 1 << LAST_SEEN_BITS.min(bits + 4)],
            match_ptr: 0,
            match_len: 0,
            aligned: false,
            hit: [FRESH; 32],
            apm: apm_table(),
            expected: None,
            candidates: Vec::new(),
            succ_bytes: Vec::new(),
            has_succ: false,
            matched: None,
            from_match: false,
            starts: vec![0; 1 << (RING_BITS - 6)],
            next_start: true,
            ends: None,
            stats: None,
        }
    }

    /// Keeps each field's [`EndStats`] from now on.
    pub(crate) fn track_ends(&mut self) {
        self.stats = Some((Encoder::meter(), HashMap::default()));
    }

    /// Each field's [`EndStats`], if tracked.
    pub(crate) fn end_stats(&self) -> Vec<(u64, EndStats)> {
        self.stats
            .as_ref()
            .map(|(_, m)| m.iter().map(|(&f, &s)| (f, s)).collect())
            .unwrap_or_default()
    }

    /// Meters the symbol that `rank` would have coded for `s` (the writer's choice of ends).
    fn meter_same_length(&mut self, field: u64, s: &[u8]) -> bool {
        let found = self.lookup(field, Some(s.len()), |c| c == s);
        let symbol = found.map_or(NEW, |r| r as u32);
        if let (Some(which), Some((meter, stats))) = (self.rank_model(), &mut self.stats) {
            let f = self.fields.get_mut(&field).expect("looked up");
            let before = meter.bits();
            f.rank_shadow[which].encode(meter, symbol);
            stats.entry(field).or_default().rank_same += meter.bits() - before;
        }
        found.is_some()
    }

    /// Codes string `s` of field `field` (a [`field_id`]); its length is known to the reader.
    pub(crate) fn encode(&mut self, e: &mut Encoder, field: u64, s: &[u8]) {
        if s.is_empty() {
            self.matched = None;
            return;
        }
        let found = self.lookup(field, Some(s.len()), |c| c == s);
        let symbol = found.map_or(NEW, |r| r as u32);
        if let Some(which) = self.rank_model() {
            let f = self.fields.get_mut(&field).expect("looked up");
            f.rank[which].encode(e, symbol);
        }
        if found.is_none() {
            self.start(field);
            for &b in s {
                self.byte(e, u32::from(b));
            }
        }
        self.finish(field, s, found.is_none());
    }

    /// Decodes a string of `len` bytes of field `field` onto `out`.
    pub(crate) fn decode(
        &mut self,
        d: &mut Decoder<'_>,
        field: u64,
        len: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if len == 0 {
            self.matched = None;
            return Ok(());
        }
        self.lookup(field, Some(len), |_| false);
        let from = out.len();
        let found = self.decode_rank(d, field, false, out)?;
        if found.is_none() {
            self.start(field);
            for _ in 0..len {
                out.push(self.byte(d, 0) as u8);
            }
        }
        let s = out[from..].to_vec();
        self.finish(field, &s, found.is_none());
        Ok(())
    }

    /// Reads the dictionary symbol of a string of `field` whose candidates [`Self::lookup`]
    /// found (`any`: of any length), and the candidate's bytes onto `out` when it names one.
    fn decode_rank(
        &mut self,
        d: &mut Decoder<'_>,
        field: u64,
        any: bool,
        out: &mut Vec<u8>,
    ) -> Result<Option<usize>, String> {
        let Some(which) = self.rank_model() else {
            return Ok(None);
        };
        let f = self.fields.get_mut(&field).expect("looked up");
        let symbol = if any { &mut f.rank_any } else { &mut f.rank }[which].decode(d);
        if symbol == NEW {
            return Ok(None);
        }
        let r = symbol as usize;
        let known = self.candidates.len() + usize::from(self.has_succ);
        if r >= known {
            return Err(format!("string rank {r} of {known} known strings"));
        }
        match (self.has_succ, r) {
            (true, 0) => out.extend_from_slice(&self.succ_bytes),
            (true, r) => out.extend_from_slice(&f.recent[self.candidates[r - 1]].bytes),
            (false, r) => out.extend_from_slice(&f.recent[self.candidates[r]].bytes),
        }
        Ok(Some(r))
    }

    /// Codes string `s` of field `field` with its end: its length is not known to the reader
    /// (docs/FORMAT.md §7, "Strings with their ends").
    pub(crate) fn encode_ended(&mut self, e: &mut Encoder, field: u64, s: &[u8]) {
        let tracked = self.stats.is_some();
        let same = tracked && self.meter_same_length(field, s);
        let before = if tracked { e.bits() } else { 0.0 };
        let found = self.lookup(field, None, |c| c == s);
        let symbol = found.map_or(NEW, |r| r as u32);
        if let Some(which) = self.rank_model() {
            let f = self.fields.get_mut(&field).expect("looked up");
            f.rank_any[which].encode(e, symbol);
        }
        let ranked = if tracked { e.bits() } else { 0.0 };
        let ends_before = self.stats.as_ref().map_or(0.0, |(m, _)| m.bits());
        if found.is_none() {
            self.start(field);
            for &b in s {
                self.end_bit(e, false);
                self.byte(e, u32::from(b));
            }
            self.end_bit(e, true);
        }
        if let Some((meter, stats)) = &mut self.stats {
            let st = stats.entry(field).or_default();
            st.rank_any += ranked - before;
            if same && found.is_none() {
                st.missed += e.bits() - ranked;
            } else {
                st.ends += meter.bits() - ends_before;
            }
        }
        self.finish(field, s, found.is_none());
    }

    /// Decodes a string of field `field` coded with its end onto `out`; refuses one longer
    /// than `limit` bytes or running past the coded bytes. Returns its length.
    pub(crate) fn decode_ended(
        &mut self,
        d: &mut Decoder<'_>,
        field: u64,
        limit: u64,
        out: &mut Vec<u8>,
    ) -> Result<usize, String> {
        self.lookup(field, None, |_| false);
        let from = out.len();
        let found = self.decode_rank(d, field, true, out)?;
        if found.is_some() && (out.len() - from) as u64 > limit {
            return Err("a string runs past the end of its block".to_string());
        }
        if found.is_none() {
            self.start(field);
            while !self.end_bit(d, false) {
                if (out.len() - from) as u64 >= limit || d.overrun() > 16 {
                    return Err("a string runs past the end of its block".to_string());
                }
                out.push(self.byte(d, 0) as u8);
            }
        }
        let s = out[from..].to_vec();
        self.finish(field, &s, found.is_none());
        Ok(s.len())
    }

    /// Codes (or reads) whether the string being coded bytewise ends here.
    fn end_bit<C: BitIo>(&mut self, c: &mut C, end: bool) -> bool {
        let ring = 1u64 << RING_BITS;
        let m = self.match_ptr;
        let follows = (self.match_len > 0 || self.aligned) && m < self.pos && self.pos - m <= ring;
        let matched = if follows {
            let i = (m & (ring - 1)) as usize;
            let ended = self.starts[i >> 6] >> (i & 63) & 1;
            1 + ended as u32 + if self.aligned { 2 } else { 0 }
        } else {
            0
        };
        let x = EndContext {
            field: self.field,
            hist: self.hist,
            at: self.at,
            word: self.word,
            column: self.column.get(self.at).map_or(256, |&b| u32::from(b)),
            column_ends: self.column.len() == self.at,
            matched,
            match_len: self.match_len.min(15) as u32,
        };
        let m = self.ends.get_or_insert_with(|| Box::new(EndModel::new()));
        let bit = m.code(c, &x, end);
        if let Some((meter, _)) = &mut self.stats {
            meter.bit_p(m.last_p, bit);
        }
        bit
    }

    /// How many strings field `field` keeps, and their bytes in all.
    #[cfg(test)]
    pub(crate) fn kept(&self, field: u64) -> (usize, usize) {
        self.fields
            .get(&field)
            .map_or((0, 0), |f| (f.recent.len(), f.kept_bytes))
    }

    /// Finds the candidates of field `field` for a string of `len` bytes (into
    /// `self.candidates`) and the rank of the first that `is` accepts.
    fn lookup(
        &mut self,
        field: u64,
        len: Option<usize>,
        is: impl Fn(&[u8]) -> bool,
    ) -> Option<usize> {
        let f = self.fields.entry(field).or_insert_with(Field::new);
        f.candidates(len, &mut self.candidates);
        self.has_succ = false;
        self.from_match = false;
        self.succ_bytes.clear();
        // The record match's string, when the field keeps it (and it has the length): it
        // takes the successor's place, which it is when the records repeat an earlier run.
        let matched = self.matched.and_then(|key| {
            f.recent
                .iter()
                .find(|k| k.key == key && len.is_none_or(|l| l == k.bytes.len()))
        });
        if let Some(k) = matched {
            self.succ_bytes.extend_from_slice(&k.bytes);
            self.has_succ = true;
            self.from_match = true;
            let sb = &self.succ_bytes;
            self.candidates.retain(|&i| f.recent[i].bytes != *sb);
            self.candidates.truncate(CANDIDATES - 1);
        } else if let Some((at, n)) = f.successor() {
            // Candidate 0 when its bytes are still in the history and its length is `len`.
            if len.is_none_or(|l| l == n) && self.pos - at <= 1 << RING_BITS {
                let mask = (1u64 << RING_BITS) - 1;
                let ring = &self.ring;
                self.succ_bytes
                    .extend((at..at + n as u64).map(|p| ring[(p & mask) as usize]));
                self.has_succ = true;
                let sb = &self.succ_bytes;
                self.candidates.retain(|&i| f.recent[i].bytes != *sb);
                self.candidates.truncate(CANDIDATES - 1);
            }
        }
        if self.has_succ && is(&self.succ_bytes) {
            return Some(0);
        }
        let off = usize::from(self.has_succ);
        self.candidates
            .iter()
            .position(|&i| is(&f.recent[i].bytes))
            .map(|r| r + off)
    }

    /// The string key of the string in the record that the record match names, for the next
    /// string coded (its field's string there); `None` when the block has no record match or
    /// it names no such string.
    pub(crate) fn set_matched(&mut self, key: Option<u64>) {
        self.matched = key;
    }

    /// Which rank model codes the dictionary symbol, if any candidate exists.
    fn rank_model(&self) -> Option<usize> {
        match self.candidates.len() + usize::from(self.has_succ) {
            0 => None,
            _ if self.from_match => Some(3),
            1 => Some(0),
            _ if self.has_succ => Some(2),
            _ => Some(1),
        }
    }

    /// Sets up the contexts for a string of `field` coded byte by byte.
    fn start(&mut self, field: u64) {
        let f = &self.fields[&field];
        self.column.clear();
        if self.has_succ {
            self.column.extend_from_slice(&self.succ_bytes);
        } else {
            let prev = self
                .candidates
                .first()
                .map(|&i| &f.recent[i].bytes)
                .or(f.recent.first().map(|k| &k.bytes));
            if let Some(p) = prev {
                self.column.extend_from_slice(p);
            }
        }
        self.field = field;
        self.at = 0;
        self.hist = 0;
        self.word = 0;
        // The match model starts on the field's previous string, aligned to this one.
        let ring = 1u64 << RING_BITS;
        if f.last_len > 0 && self.pos - f.last_at <= ring && self.match_len == 0 {
            self.match_ptr = f.last_at;
            self.aligned = true;
        } else if f.last_len > 0 && self.pos - f.last_at <= ring {
            // A longer match already runs; the aligned string is a fallback.
            self.aligned = false;
        }
    }

    /// The string was coded (or found in the dictionary): it feeds the match model and the
    /// field's memory.
    fn finish(&mut self, field: u64, s: &[u8], bytewise: bool) {
        // The record match named a string for this one only.
        self.matched = None;
        let anchor = self.pos;
        if !bytewise {
            for &b in s {
                self.push(b);
            }
        }
        self.next_start = true;
        let start = self.pos - s.len() as u64;
        let f = self.fields.get_mut(&field).expect("looked up");
        f.remember(s, start);
        // The anchor of docs/FORMAT.md: the start of a string found in the dictionary, the end
        // of one coded byte by byte (where the aligned match then follows the bytes after it).
        // Aligning both at their start codes no smaller, and this anchor is the one the
        // specification names.
        f.last_at = anchor;
        f.last_len = s.len();
    }

    /// The byte the match model predicts, if any.
    fn predicted(&self) -> Option<u8> {
        if (self.match_len == 0 && !self.aligned) || self.match_ptr >= self.pos {
            return None;
        }
        if self.pos - self.match_ptr > 1 << RING_BITS {
            return None;
        }
        self.ring_at(self.match_ptr)
    }

    fn ring_at(&self, p: u64) -> Option<u8> {
        self.ring
            .get((p & ((1 << RING_BITS) - 1)) as usize)
            .copied()
    }

    fn match_state(&self) -> usize {
        let len = self.match_len.min(15);
        len + if self.aligned { 16 } else { 0 }
    }

    /// Codes (or reads) one byte; `byte` is ignored by the decoder.
    fn byte<C: BitIo>(&mut self, c: &mut C, byte: u32) -> u32 {
        let t = tables();
        let f = self.field;
        let h = self.hist;
        let col = self.column.get(self.at).map_or(256, |&b| u64::from(b));
        self.base = [
            mix(f, 1),
            mix(f ^ 2, h & 0xFF),
            mix(3, h & 0xFFFF),
            mix(f ^ 4, h & 0xFF_FFFF),
            mix(5, h & 0xFF_FFFF_FFFF),
            mix(
                f ^ 6,
                (col << 16) | (h & 0xFF) << 8 | (self.at.min(255) as u64),
            ),
            mix(8, h & 0xFFFF_FFFF),
            mix(9, self.word ^ (h & 0xFF) << 56),
        ];
        let predicted = self.predicted();
        let state = self.match_state();
        let select_match = match (predicted, self.match_len) {
            (None, _) => 0,
            (Some(_), 0) => 1,
            (Some(_), 1..=15) => 2,
            _ => 3,
        };
        let rate = rates();
        let mut c0 = 1u32;
        for k in (0..8).rev() {
            // Each half-byte's bucket, from the bits before it; then the node of the bits of
            // this half-byte so far, after a leading 1.
            let done = (7 - k) & 3;
            if done == 0 {
                for (i, (&base, bucket)) in self.base.iter().zip(&mut self.bucket).enumerate() {
                    *bucket = self.slots.bucket(i, mix(base, u64::from(c0)));
                }
            }
            let node = (1 << done) | (c0 as usize & ((1 << done) - 1));
            for (input, &bucket) in self.inputs.iter_mut().zip(&self.bucket) {
                *input = i32::from(t.stretch[(self.slots.get(bucket, node) >> 4) as usize]);
            }

            // The match model: its predicted bit, if the byte so far agrees with it.
            self.expected = None;
            self.inputs[CONTEXTS] = 0;
            if let Some(p) = predicted {
                let done = 7 - k;
                if (u32::from(p) | 256) >> (8 - done) == c0 {
                    let e = (u32::from(p) >> k) & 1;
                    self.expected = Some(e);
                    let s = i32::from(t.stretch[(self.hit[state] >> 20) as usize]);
                    self.inputs[CONTEXTS] = if e == 1 { s } else { -s };
                }
            }
            self.inputs[CONTEXTS + 1] = 256;
            let set = if self.expected.is_some() {
                select_match
            } else {
                0
            } * 256
                + c0 as usize;
            let set_2 = usize::from(self.expected.is_some()) * 256 + (h & 0xFF) as usize;
            let w = &mut self.weights[set];
            let w_2 = &mut self.weights_2[set_2];
            let st_1 = dot(w, &self.inputs);
            let st_2 = dot(w_2, &self.inputs);
            let st = (st_1 + st_2) >> 1;
            let p1 = squash(st);
            // The refinement: interpolate between the two bins around the mixer's output.
            let row = (((h & 0xFF) as usize) << 8 | c0 as usize) * APM_BINS;
            let pos = (st + 2048) * 32;
            let (lo, wt) = ((pos >> 12) as usize, pos & 4095);
            let a = i32::from(self.apm[row + lo]);
            let b = i32::from(self.apm[row + lo + 1]);
            let refined = (a * (4096 - wt) + b * wt) >> 16;
            let pf = ((p1 + 3 * refined) >> 2).clamp(1, 4095);
            let bit = c.bit(pf as u32, (byte >> k) & 1);
            let target = if bit == 1 { 65535 } else { 0 };
            let near = if wt < 2048 { lo } else { lo + 1 };
            let v = &mut self.apm[row + near];
            *v = (i32::from(*v) + ((target - i32::from(*v)) >> APM_RATE)) as u16;
            // Learn: each mixer toward the bit (by its own output), then every context and
            // the match state.
            learn(w, &self.inputs, bit, st_1);
            learn(w_2, &self.inputs, bit, st_2);
            for &bucket in &self.bucket {
                let v = string_slots::adapt(self.slots.get(bucket, node), bit, rate);
                self.slots.set(bucket, node, v);
            }
            if let Some(e) = self.expected {
                let s = &mut self.hit[state];
                *s = adapt(*s, u32::from(e == bit), &t.rate);
            }
            c0 = (c0 << 1) | bit;
        }
        let b = (c0 & 0xFF) as u8;
        self.hist = (self.hist << 8) | u64::from(b);
        self.word = if b.is_ascii_alphanumeric() || b == b'_' {
            mix(self.word, u64::from(b))
        } else {
            0
        };
        self.at += 1;
        self.slots.byte_coded();
        self.push(b);
        u32::from(b)
    }

    /// Appends a byte to the match model's memory and follows or looks up a match.
    fn push(&mut self, b: u8) {
        let predicted = self.predicted();
        let mask = (1u64 << RING_BITS) - 1;
        let i = (self.pos & mask) as usize;
        if i < self.ring.len() {
            self.ring[i] = b;
        } else {
            self.ring.push(b);
        }
        let (word, bit) = (i >> 6, i & 63);
        self.starts[word] = self.starts[word] & !(1 << bit) | u64::from(self.next_start) << bit;
        self.next_start = false;
        self.pos += 1;
        match predicted {
            Some(p) if p == b => {
                self.match_len += 1;
                self.match_ptr += 1;
            }
            Some(_) if self.aligned => {
                // The field's previous string stays aligned after a differing byte.
                self.match_len = 0;
                self.match_ptr += 1;
            }
            _ => {
                self.match_len = 0;
                self.aligned = false;
            }
        }
        if self.pos < MATCH_MIN as u64 {
            return;
        }
        let h = (self.pos - MATCH_MIN as u64..self.pos).fold(0u64, |h, p| {
            mix(h, u64::from(self.ring[(p & mask) as usize]))
        });
        let slot = (h >> (64 - self.last_seen.len().trailing_zeros())) as usize;
        if self.match_len < MATCH_MIN {
            // The position stored modulo 2^32, as a distance back (within the ring).
            let seen = self.last_seen[slot];
            let back = u64::from((self.pos as u32).wrapping_sub(seen));
            if seen != 0 && back < self.pos && back < mask {
                let cand = self.pos - back;
                let mut len = 0;
                while len < MATCH_CHECK
                    && (len as u64) < cand
                    && self.ring[((cand - 1 - len as u64) & mask) as usize]
                        == self.ring[((self.pos - 1 - len as u64) & mask) as usize]
                {
                    len += 1;
                }
                if len >= MATCH_MIN && len > self.match_len {
                    self.match_len = len;
                    self.match_ptr = cand;
                    self.aligned = false;
                }
            }
        }
        self.last_seen[slot] = self.pos as u32;
    }
}
