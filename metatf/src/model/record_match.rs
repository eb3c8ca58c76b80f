//! The record match (docs/FORMAT.md §7, `match`): a text compressor's match model lifted from
//! bytes to records. Traces repeat whole runs of records — a snapshot of the same table taken
//! again, a loop's sequence of calls, a directory listing's columns — where the previous value
//! of each field, or its value under one key, says little, but the record that followed the
//! last occurrence of the current record says nearly everything. The engine keeps one such
//! state per block; the `match` predictor of every stream reads its guess from it.
//!
//! Its state depends only on the values coded (every scalar value and string key, in any order
//! within a record), never on which predictors were chosen, as every predictor's does.

/// Records whose hashes and values the state holds (the oldest is forgotten first).
const RECORDS: usize = 1 << 12;
/// Values (stream, value) it holds over those records.
const VALUES: usize = 1 << 15;
/// Slots of the table from a record's hash to where it last occurred.
const TABLE_BITS: u32 = 12;
/// Most records compared backwards when a new match is found: its length, which decides
/// nothing but whether it held, is capped.
const MAX_AGREEMENT: u64 = 16;

#[inline]
fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}

/// The record-level match state of a block.
pub(crate) struct RecordMatch {
    /// Per record (number modulo [`RECORDS`]): its hash, the number of its first value and how
    /// many values it has.
    hashes: Vec<u64>,
    starts: Vec<u64>,
    counts: Vec<u32>,
    /// Per value (number modulo [`VALUES`]): its stream and value.
    streams: Vec<u32>,
    values: Vec<u64>,
    /// Values taken so far in the block.
    taken: u64,
    /// The number of the current record's first value, and its hash so far.
    start: u64,
    hash: u64,
    /// Per hash slot: 1 + the number of the last record with a hash of that slot (0: none).
    table: Vec<u32>,
    /// 1 + the number of the record the current record is predicted to repeat (0: none).
    matched: u64,
    /// How many records in a row the match has predicted exactly.
    length: u64,
    /// Per stream: its value in the matched record, valid when `stamp` = 1 + the current
    /// record's number.
    guess: Vec<u64>,
    stamp: Vec<u64>,
}

impl RecordMatch {
    /// An empty state for `streams` streams (string keys included).
    pub(crate) fn new(streams: usize) -> RecordMatch {
        RecordMatch {
            hashes: vec![0; RECORDS],
            starts: vec![0; RECORDS],
            counts: vec![0; RECORDS],
            streams: vec![0; VALUES],
            values: vec![0; VALUES],
            taken: 0,
            start: 0,
            hash: 0,
            table: vec![0; 1 << TABLE_BITS],
            matched: 0,
            length: 0,
            guess: vec![0; streams],
            stamp: vec![0; streams],
        }
    }

    /// The guess for stream `s` in record `record`: its value in the matched record, 0 when
    /// there is none or that record has no value of `s`.
    #[inline]
    pub(crate) fn guess(&self, s: usize, record: u64) -> u64 {
        self.matched(s, record).unwrap_or(0)
    }

    /// The value of stream `s` in the matched record, if the current record (number
    /// `record`) has one with a value of `s`.
    #[inline]
    pub(crate) fn matched(&self, s: usize, record: u64) -> Option<u64> {
        (self.stamp[s] == record + 1).then(|| self.guess[s])
    }

    /// Whether a match is running and held on the last record.
    pub(crate) fn holding(&self) -> bool {
        self.length > 0
    }

    /// Stream `s` took value `v` in the current record.
    #[inline]
    pub(crate) fn observe(&mut self, s: usize, v: u64) {
        let i = (self.taken % VALUES as u64) as usize;
        self.streams[i] = s as u32;
        self.values[i] = v;
        self.taken += 1;
        // A sum, so that a record's hash does not depend on the order its fields are coded in;
        // of terms that the shifts make nonlinear, or records whose small values have the same
        // sum would share a hash.
        let z = mix(mix(0, s as u64 + 1), v);
        let z = (z ^ (z >> 32)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        self.hash = self.hash.wrapping_add(z ^ (z >> 32));
    }

    /// Record number `record` (from 0 in the block) is complete: follows or finds the match
    /// and sets the guesses for the next record.
    pub(crate) fn end_record(&mut self, record: u64) {
        let r = mix(self.hash, self.taken - self.start);
        let at = (record % RECORDS as u64) as usize;
        self.hashes[at] = r;
        self.starts[at] = self.start;
        self.counts[at] = u32::try_from(self.taken - self.start).unwrap_or(u32::MAX);
        self.start = self.taken;
        self.hash = 0;
        let held = |m: u64| record - m < RECORDS as u64;
        // Follow: the record after the matched one is the next guess, whether or not this
        // one agreed (fields that change from one repetition to the next, a time, leave the
        // rest of the run in step).
        if self.matched != 0 {
            let m = self.matched - 1;
            if held(m) && self.hashes[(m % RECORDS as u64) as usize] == r {
                self.length += 1;
            } else {
                self.length = 0;
            }
            self.matched = if held(m + 1) { m + 2 } else { 0 };
        }
        let slot = (r.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - TABLE_BITS)) as usize;
        if self.length == 0 {
            // Find: the last earlier record with this hash, if it is still held; the record
            // after it is the next guess.
            let j = u64::from(self.table[slot]);
            if j != 0 && held(j - 1) && self.hashes[((j - 1) % RECORDS as u64) as usize] == r {
                let j = j - 1;
                let mut l = 1;
                while l < MAX_AGREEMENT
                    && l <= j
                    && held(j - l)
                    && self.hashes[((j - l) % RECORDS as u64) as usize]
                        == self.hashes[((record - l) % RECORDS as u64) as usize]
                {
                    l += 1;
                }
                self.matched = j + 2;
                self.length = l;
            }
        }
        self.table[slot] = u32::try_from(record + 1).unwrap_or(0);
        if self.matched == 0 {
            return;
        }
        let m = self.matched - 1;
        let at = (m % RECORDS as u64) as usize;
        let (first, count) = (self.starts[at], u64::from(self.counts[at]));
        if self.taken - first > VALUES as u64 {
            // Its values are no longer held.
            return;
        }
        for i in first..first + count {
            let i = (i % VALUES as u64) as usize;
            let s = self.streams[i] as usize;
            self.guess[s] = self.values[i];
            self.stamp[s] = record + 2;
        }
    }
}
