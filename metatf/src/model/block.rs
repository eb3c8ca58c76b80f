//! A modelled block: measure every candidate predictor on the block's records, choose per
//! stream, then code the records with the choice; and the reverse.

use super::byte_stage::{self, ByteDecode, ByteEncode};
use super::choice::{read_choices, read_tag_context, write_choices, write_tag_context, Choice};
use super::choose::{candidates, Samples, MAX_LIST};
use super::coders::Models;
use super::engine::{Carried, Engine};
use super::flat::FlatBlock;
use super::live::MEASURE_LIVE_CAP;
use super::numbers::estimate;
use super::order::{read_orders, write_orders, Orders};
use super::packed_tables;
use super::predict::{Kind, Predictor, Spec, MEASURE_TABLE_BITS, TABLE_BITS};
use super::range::{Decoder, Encoder};
use super::report::Costs;
use super::streams::{string_key, Streams};
use super::tags::{TagAlphabet, TagContext, TagModel, MEASURE_CONTEXT_BITS};
use super::walk::{walk, Side};
use crate::universal::plan::Catalog;
use crate::varint::zigzag;

/// Samples kept per stream for the choice: a stream samples every value until it has this
/// many, then every second, fourth, ... value ([`Samples::halve`]), so its samples spread
/// over the whole block whatever its length and whatever share of the records the stream has.
const SAMPLES_PER_STREAM: u64 = 1 << 15;
/// Bytes the samples of all streams may take together (a sample is a byte per candidate):
/// DTDs with many fields sample each of them less often.
const MEASURE_SAMPLE_BYTES: u64 = 8 << 20;
/// Fewest samples kept per stream, whatever the DTD.
const MIN_SAMPLES_PER_STREAM: u64 = 1 << 10;

/// Samples kept per stream when `candidates` candidates are measured in all.
fn samples_per_stream(candidates: usize) -> u64 {
    (MEASURE_SAMPLE_BYTES / (candidates as u64).max(1))
        .clamp(MIN_SAMPLES_PER_STREAM, SAMPLES_PER_STREAM)
}
/// Most candidates measured per stream, `match` not counted: the time and memory of a
/// measurement grow with them (a DTD of many fields in one scope gives a stream hundreds).
const MAX_CANDIDATES: usize = 64;
/// Fields a decoder may produce per byte of coded block, beyond one per record: bounds the
/// work damaged input can cause. Every field costs at least one coded decision, and a decision
/// narrows the coder's range by at least 4095/4096, so a byte holds at most
/// 8 / log2(4096/4095) ≈ 22,713 decisions: the bound is above that, so no block a writer
/// makes is refused, however well its records repeat.
const FIELDS_PER_CODED_BYTE: u64 = 1 << 15;

/// Reads the words and bytes of a flat block in walk order.
pub(super) struct FlatReader<'a> {
    block: &'a FlatBlock,
    word: usize,
    byte: usize,
    pub(super) budget: u64,
    /// First word of the record being coded out of walking order.
    base: usize,
}

impl<'a> FlatReader<'a> {
    /// Reads `block` from its start, with no bound on the fields it yields.
    pub(super) fn new(block: &'a FlatBlock) -> Self {
        FlatReader {
            block,
            word: 0,
            byte: 0,
            budget: u64::MAX,
            base: 0,
        }
    }

    pub(super) fn word(&mut self) -> Result<u64, String> {
        let w = *self
            .block
            .words
            .get(self.word)
            .ok_or("flat block ends early")?;
        self.word += 1;
        Ok(w)
    }

    /// A record of `n` scalar words begins, to be read out of order.
    pub(super) fn open(&mut self, n: usize) -> Result<(), String> {
        if self.word.saturating_add(n) > self.block.words.len() {
            return Err("flat block ends early".to_string());
        }
        self.base = self.word;
        Ok(())
    }

    /// Word `slot` of the open record.
    pub(super) fn word_at(&self, slot: usize) -> Result<u64, String> {
        self.block
            .words
            .get(self.base + slot)
            .copied()
            .ok_or_else(|| "flat block ends early".to_string())
    }

    /// The open record's `n` words are read.
    pub(super) fn close(&mut self, n: usize) {
        self.word = self.base + n;
    }

    pub(super) fn bytes(&mut self, len: u64) -> Result<&[u8], String> {
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| self.byte.checked_add(l))
            .filter(|&e| e <= self.block.bytes.len())
            .ok_or("flat block bytes end early")?;
        let b = &self.block.bytes[self.byte..end];
        self.byte = end;
        Ok(b)
    }
}

/// What the writer does with the items of a flat block: measure the candidates on them, or
/// code them. [`Reading`] reads the items in walking (or coding) order and hands them over,
/// so both sides share the reading and differ only in what they do with a value.
trait Consumer {
    /// Record tag `t`, in scope number `scope`.
    fn tag(&mut self, catalog: &Catalog, scope: usize, t: u64) -> Result<(), String>;
    /// Value `v` of stream `s`.
    fn scalar(&mut self, s: usize, v: u64);
    /// Byte string `b` of the field whose name hashes to `field`, its key stream `key`.
    fn bytes(&mut self, field: u64, b: &[u8], key: Option<usize>);
    /// Whether stream `s` is a length coded with its string's end ([`Side::ended`]).
    fn ended(&self, _s: usize) -> bool {
        false
    }
    /// Byte string `b` coded with its end, its length the value of stream `s`; as
    /// [`Consumer::bytes`] otherwise. Only a consumer whose [`Consumer::ended`] accepts `s`
    /// is given one.
    fn ended_bytes(&mut self, _field: u64, _s: usize, _b: &[u8], _key: Option<usize>) {}
    /// A metadata record's field count (`i` is `None`) or its field `i`.
    fn meta(&mut self, i: Option<u64>, v: u64);
    /// The engine whose history counts the records.
    fn engine(&mut self) -> &mut Engine;
}

/// Records of a block that the writer first measures every candidate on, and meters its
/// proposals on ([`super::trials`]): a block of more records is sampled in [`SAMPLE_WINDOWS`]
/// windows of consecutive records spread evenly over it. Why: measuring and metering every
/// record took most of the writer's time (several passes over the block, each running every
/// candidate's state), while the choice settles on far fewer records; the final coding runs
/// over every record. Why this many: the writer's time falls with the sample while the
/// sizes barely move until the sample is too short to show a block's mixes of records; the
/// figures are in docs/PERFORMANCE.md.
const SAMPLE_RECORDS: u64 = 1 << 17;
/// Windows the sampled records are taken in: consecutive records, so that predictors that
/// follow a history (finite contexts, strides, recency lists) see it as the coder will, and
/// several of them, so that a block whose records change on the way is seen throughout.
const SAMPLE_WINDOWS: u64 = 16;

/// Records of a block of `records` that the writer measures and meters its proposals on.
pub(crate) fn sampled_records(records: u64) -> u64 {
    Window::sampled(records).taken_records()
}

/// Which records of a block a pass hands to its consumer ([`SAMPLE_RECORDS`]).
struct Window {
    /// Records of the block.
    records: u64,
    /// Records per window; `records` when every record is taken.
    len: u64,
    /// The record being walked.
    at: u64,
    /// Start of the current or next window.
    start: u64,
    /// Windows begun so far.
    begun: u64,
}

impl Window {
    /// Every record of a block of `records`.
    fn all(records: u64) -> Window {
        Window {
            records,
            len: records,
            at: 0,
            start: 0,
            begun: 1,
        }
    }

    /// The sampled records of a block of `records` (all of them in a small block).
    fn sampled(records: u64) -> Window {
        if records <= SAMPLE_RECORDS {
            return Window::all(records);
        }
        Window {
            records,
            len: SAMPLE_RECORDS / SAMPLE_WINDOWS,
            at: 0,
            start: 0,
            begun: 1,
        }
    }

    /// Whether every record is taken.
    fn is_whole(&self) -> bool {
        self.len >= self.records
    }

    /// Records taken in all.
    fn taken_records(&self) -> u64 {
        if self.is_whole() {
            self.records
        } else {
            self.len * SAMPLE_WINDOWS
        }
    }

    /// Whether the record being walked is handed over.
    fn taken(&self) -> bool {
        self.at >= self.start && self.at - self.start < self.len
    }

    /// The record being walked is done.
    fn next(&mut self) {
        self.at += 1;
        // Between windows `at` is below the next window's start.
        if self.at >= self.start && self.at - self.start >= self.len && self.begun < SAMPLE_WINDOWS
        {
            // Window i starts at record i × records / windows, after the end of window i − 1
            // since the block has more than SAMPLE_RECORDS records.
            self.start = self.begun * self.records / SAMPLE_WINDOWS;
            self.begun += 1;
        }
    }
}

/// A [`Side`] that reads a flat block and hands each item of the records `window` takes to a
/// [`Consumer`]; the other records are read past.
struct Reading<'a, C> {
    input: FlatReader<'a>,
    consumer: C,
    window: Window,
    /// Whether the record being walked is handed over.
    taken: bool,
    /// Lengths read ahead of their strings ([`Side::defer`]): stream and value.
    deferred: Vec<(usize, u64)>,
}

impl<'a, C> Reading<'a, C> {
    /// Reads `block` from its start into `consumer`, the records `window` takes.
    fn windowed(block: &'a FlatBlock, consumer: C, window: Window) -> Self {
        Reading {
            input: FlatReader::new(block),
            consumer,
            taken: window.taken(),
            window,
            deferred: Vec::new(),
        }
    }
}

impl<C: Consumer> Side for Reading<'_, C> {
    fn tag(&mut self, catalog: &Catalog, scope: usize) -> Result<u64, String> {
        let t = self.input.word()?;
        if self.taken {
            self.consumer.tag(catalog, scope, t)?;
        }
        Ok(t)
    }

    fn scalar(&mut self, s: usize) -> Result<u64, String> {
        let v = self.input.word()?;
        if self.taken {
            self.consumer.scalar(s, v);
        }
        Ok(v)
    }

    fn open(&mut self, n: usize) -> Result<(), String> {
        self.input.open(n)
    }

    fn scalar_at(&mut self, s: usize, slot: usize) -> Result<u64, String> {
        let v = self.input.word_at(slot)?;
        if self.taken {
            self.consumer.scalar(s, v);
        }
        Ok(v)
    }

    fn close(&mut self, n: usize) {
        self.input.close(n);
    }

    fn bytes(&mut self, field: u64, len: u64, key: Option<usize>) -> Result<(), String> {
        let b = self.input.bytes(len)?;
        if self.taken {
            self.consumer.bytes(field, b, key);
        }
        Ok(())
    }

    fn ended(&self, s: usize) -> bool {
        self.consumer.ended(s)
    }

    fn defer(&mut self, s: usize, slot: Option<usize>) -> Result<(), String> {
        let v = match slot {
            Some(slot) => self.input.word_at(slot)?,
            None => self.input.word()?,
        };
        self.deferred.push((s, v));
        Ok(())
    }

    fn ended_bytes(&mut self, field: u64, s: usize, key: Option<usize>) -> Result<u64, String> {
        let (_, len) = take_deferred(&mut self.deferred, s)?;
        let b = self.input.bytes(len)?;
        if self.taken {
            self.consumer.ended_bytes(field, s, b, key);
        }
        Ok(len)
    }

    fn meta_count(&mut self) -> Result<u64, String> {
        let n = self.input.word()?;
        if self.taken {
            self.consumer.meta(None, n);
        }
        Ok(n)
    }

    fn meta_value(&mut self, i: u64) -> Result<u64, String> {
        let v = self.input.word()?;
        if self.taken {
            self.consumer.meta(Some(i), v);
        }
        Ok(v)
    }

    fn end_record(&mut self) {
        if self.taken {
            self.consumer.engine().end_record();
        }
        self.window.next();
        self.taken = self.window.taken();
    }

    fn budget(&mut self) -> &mut u64 {
        &mut self.input.budget
    }
}

/// Takes the deferred length of stream `s` out of `deferred` ([`Side::defer`]).
fn take_deferred<T: Copy>(deferred: &mut Vec<(usize, T)>, s: usize) -> Result<(usize, T), String> {
    let i = deferred
        .iter()
        .position(|&(t, _)| t == s)
        .ok_or("a string coded with its end has no length")?;
    Ok(deferred.swap_remove(i))
}

/// Measures all candidates.
struct Measure {
    engine: Engine,
    /// Per stream: candidate predictor instances, whether each is a rank list, and samples.
    candidates: Vec<Vec<usize>>,
    rank: Vec<Vec<bool>>,
    samples: Vec<Samples>,
    seen: Vec<u64>,
    /// Per stream: the sampling period (a power of two).
    every: Vec<u64>,
    /// Samples a stream keeps before its period doubles.
    cap: usize,
    alphabet: TagAlphabet,
    tags: Vec<TagModel>,
    tag_costs: Vec<u64>,
    /// Per tag model: its context for the current record ([`TagModel::touch`]).
    tag_bases: Vec<usize>,
}

impl Consumer for Measure {
    fn tag(&mut self, catalog: &Catalog, scope: usize, t: u64) -> Result<(), String> {
        let plan = catalog
            .plan_in_scope(scope, t)
            .ok_or_else(|| format!("tag {t} names no record"))?;
        let symbol = self.alphabet.symbol(plan);
        self.tag_bases.clear();
        let h = &self.engine.history;
        self.tag_bases.extend(self.tags.iter().map(|m| m.touch(h)));
        for ((m, c), &base) in self
            .tags
            .iter_mut()
            .zip(&mut self.tag_costs)
            .zip(&self.tag_bases)
        {
            *c += m.measure_at(base, symbol);
        }
        Ok(())
    }

    /// Samples the candidates' costs for value `v` of stream `s`, then lets them observe it.
    fn scalar(&mut self, s: usize, v: u64) {
        self.seen[s] += 1;
        if self.seen[s].is_multiple_of(self.every[s]) && self.samples[s].len() >= self.cap {
            self.samples[s].halve();
            self.every[s] *= 2;
        }
        if self.seen[s].is_multiple_of(self.every[s]) {
            let sample = &mut self.samples[s];
            let at = sample.begin();
            for (c, &i) in self.candidates[s].iter().enumerate() {
                let p = &self.engine.predictors[i];
                let cost = if self.rank[s][c] {
                    match p.rank_of(&self.engine.history, v) {
                        Some(r) => {
                            sample.set_hit(at, c);
                            estimate(r)
                        }
                        None => u8::MAX,
                    }
                } else {
                    let g = p.predict(&self.engine.history);
                    if g == v {
                        sample.set_hit(at, c);
                    }
                    if c == 0 {
                        estimate(v) // the first candidate is `none`: the value itself
                    } else {
                        estimate(zigzag(v.wrapping_sub(g) as i64))
                    }
                };
                sample.costs.push(cost);
            }
        }
        self.engine.observe(s, v);
    }

    fn bytes(&mut self, _: u64, b: &[u8], key: Option<usize>) {
        if let Some(k) = key {
            self.engine.observe(k, string_key(b));
        }
    }

    fn meta(&mut self, _: Option<u64>, _: u64) {}

    fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }
}

/// Codes the records with the chosen predictors.
struct Encode {
    engine: Engine,
    models: Models,
    coder: Encoder,
    /// Bits per item class, when a report is wanted ([`Costs::wanted`]).
    costs: Option<Costs>,
    /// Whether tags and byte strings are coded: not in a trial.
    whole: bool,
    /// Per stream: whether it is coded (a skipped stream's values are only observed).
    coded: Vec<bool>,
    /// Per stream: whether it is a length coded with its string's end.
    ended: Vec<bool>,
}

impl Encode {
    /// Adds the bits coded since `before` to the class `pick` selects, if reporting.
    fn spent(&mut self, before: f64, pick: impl FnOnce(&mut Costs) -> &mut f64) {
        let now = self.coder.bits();
        if let Some(c) = &mut self.costs {
            *pick(c) += now - before;
        }
    }

    /// Adds the bits coded since `before` to the strings of `field`, if reporting.
    fn spent_string(&mut self, before: f64, field: u64) {
        let now = self.coder.bits();
        if let Some(c) = &mut self.costs {
            c.add_string(field, now - before);
        }
    }

    fn start(&self) -> f64 {
        if self.costs.is_some() {
            self.coder.bits()
        } else {
            0.0
        }
    }
}

impl Consumer for Encode {
    fn tag(&mut self, catalog: &Catalog, scope: usize, t: u64) -> Result<(), String> {
        if !self.whole {
            // A trial: only the streams' bits count, and they read the tags, not their bits.
            return self.models.pass_tag(catalog, scope, t);
        }
        let before = self.start();
        self.models
            .encode_tag(&mut self.coder, &self.engine, catalog, scope, t)?;
        self.spent(before, |c| &mut c.tags);
        Ok(())
    }

    /// Codes value `v` of stream `s`.
    fn scalar(&mut self, s: usize, v: u64) {
        if !self.coded[s] {
            self.engine.observe(s, v);
            return;
        }
        let before = self.start();
        self.models
            .encode_scalar(&mut self.coder, &mut self.engine, s, v);
        self.spent(before, |c| &mut c.streams[s]);
    }

    fn bytes(&mut self, field: u64, b: &[u8], key: Option<usize>) {
        let before = self.start();
        if self.whole {
            self.models
                .encode_string(&mut self.coder, (&self.engine, key), field, b, false);
        }
        if let Some(k) = key {
            self.engine.observe(k, string_key(b));
        }
        self.spent_string(before, field);
    }

    fn ended(&self, s: usize) -> bool {
        self.ended[s]
    }

    fn ended_bytes(&mut self, field: u64, s: usize, b: &[u8], key: Option<usize>) {
        let before = self.start();
        if self.whole {
            self.models
                .encode_string(&mut self.coder, (&self.engine, key), field, b, true);
        }
        self.engine.observe(s, b.len() as u64);
        if let Some(k) = key {
            self.engine.observe(k, string_key(b));
        }
        self.spent_string(before, field);
    }

    fn meta(&mut self, i: Option<u64>, v: u64) {
        let before = self.start();
        self.models.encode_meta(&mut self.coder, i, v);
        self.spent(before, |c| &mut c.meta);
    }

    fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }
}

impl Consumer for ByteEncode {
    fn tag(&mut self, catalog: &Catalog, scope: usize, t: u64) -> Result<(), String> {
        ByteEncode::tag(self, catalog, scope, t)
    }

    fn scalar(&mut self, s: usize, v: u64) {
        ByteEncode::scalar(self, s, v);
    }

    fn bytes(&mut self, _: u64, b: &[u8], key: Option<usize>) {
        ByteEncode::bytes(self, b, key);
    }

    fn meta(&mut self, _: Option<u64>, v: u64) {
        ByteEncode::meta(self, v);
    }

    fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }
}

/// Decodes records into a flat block.
struct Decode<'a> {
    output: FlatBlock,
    engine: Engine,
    models: Models,
    coder: Decoder<'a>,
    budget: u64,
    /// First word of the record being decoded out of walking order.
    base: usize,
    /// Per stream: whether it is a length coded with its string's end.
    ended: Vec<bool>,
    /// Lengths whose strings are still to come ([`Side::defer`]): stream and word index.
    deferred: Vec<(usize, usize)>,
}

impl Side for Decode<'_> {
    fn tag(&mut self, catalog: &Catalog, scope: usize) -> Result<u64, String> {
        let t = self
            .models
            .decode_tag(&mut self.coder, &self.engine, catalog, scope)?;
        self.output.words.push(t);
        Ok(t)
    }

    fn scalar(&mut self, s: usize) -> Result<u64, String> {
        let v = self
            .models
            .decode_scalar(&mut self.coder, &mut self.engine, s)?;
        self.output.words.push(v);
        Ok(v)
    }

    fn open(&mut self, n: usize) -> Result<(), String> {
        self.base = self.output.words.len();
        self.output.words.resize(self.base + n, 0);
        Ok(())
    }

    fn scalar_at(&mut self, s: usize, slot: usize) -> Result<u64, String> {
        let v = self
            .models
            .decode_scalar(&mut self.coder, &mut self.engine, s)?;
        let w = self
            .output
            .words
            .get_mut(self.base + slot)
            .ok_or("field outside its record")?;
        *w = v;
        Ok(v)
    }

    fn close(&mut self, _: usize) {}

    fn bytes(&mut self, field: u64, len: u64, key: Option<usize>) -> Result<(), String> {
        let start = self.output.bytes.len();
        self.models.decode_bytes(
            &mut self.coder,
            &self.engine,
            key,
            field,
            &mut self.output.bytes,
            len,
        )?;
        if let Some(k) = key {
            let b = self.output.bytes.get(start..).unwrap_or_default();
            self.engine.observe(k, string_key(b));
        }
        Ok(())
    }

    fn ended(&self, s: usize) -> bool {
        self.ended.get(s).copied().unwrap_or(false)
    }

    fn defer(&mut self, s: usize, slot: Option<usize>) -> Result<(), String> {
        let at = match slot {
            Some(slot) if self.base + slot < self.output.words.len() => self.base + slot,
            Some(_) => return Err("field outside its record".to_string()),
            None => {
                self.output.words.push(0);
                self.output.words.len() - 1
            }
        };
        self.deferred.push((s, at));
        Ok(())
    }

    fn ended_bytes(&mut self, field: u64, s: usize, key: Option<usize>) -> Result<u64, String> {
        let (_, at) = take_deferred(&mut self.deferred, s)?;
        let start = self.output.bytes.len();
        let len = self.models.decode_ended(
            &mut self.coder,
            &self.engine,
            key,
            field,
            self.budget,
            &mut self.output.bytes,
        )? as u64;
        self.output.words[at] = len;
        self.engine.observe(s, len);
        if let Some(k) = key {
            let b = self.output.bytes.get(start..).unwrap_or_default();
            self.engine.observe(k, string_key(b));
        }
        Ok(len)
    }

    fn meta_count(&mut self) -> Result<u64, String> {
        let n = self.models.decode_meta(&mut self.coder, None);
        self.output.words.push(n);
        Ok(n)
    }

    fn meta_value(&mut self, i: u64) -> Result<u64, String> {
        let v = self.models.decode_meta(&mut self.coder, Some(i));
        self.output.words.push(v);
        Ok(v)
    }

    fn end_record(&mut self) {
        self.engine.end_record();
        self.output.records += 1;
        if self.coder.overrun() > 16 {
            // Past the end of the coded bytes: the rest could only be made of zeros.
            self.budget = 0;
        }
    }

    fn budget(&mut self) -> &mut u64 {
        &mut self.budget
    }
}

/// What [`choose`] found: the proposals of choices and the tag context. The writer codes the
/// block's streams with each proposal ([`super::trials`]) and keeps, per stream, the one that
/// coded it smallest.
pub(crate) struct Chosen {
    /// The greedy choice by sampled costs first; then, if some stream has a keyed `reuse`
    /// candidate, that choice with the cheapest keyed `reuse` listed first; then the
    /// runners-up by sampled cost: the greedy choice taking the second best at its first,
    /// second or third listed predictor, the greedy choice without its primary, and the
    /// primary predictor alone. No proposal appears twice.
    pub(crate) proposals: Vec<Vec<Choice>>,
    pub(crate) tag_context: TagContext,
}

impl Chosen {
    /// The greedy choice by sampled costs.
    #[cfg(test)]
    pub(crate) fn choices(&self) -> &[Choice] {
        &self.proposals[0]
    }
}

/// Bytes the hashed tables of all measured candidates may take together.
const MEASURE_TABLE_BYTES: usize = 16 << 20;
/// Smallest table of a measured candidate.
const MEASURE_MIN_TABLE_BITS: u32 = 8;

/// Table bits while measuring `specs` on a block of `records` records: [`MEASURE_TABLE_BITS`],
/// fewer when the block has fewer values than a quarter of the slots (a table larger than what
/// it can fill measures nothing more), and halved until the tables of all candidates fit
/// [`MEASURE_TABLE_BYTES`], so that the memory of a measurement stays bounded whatever the DTD.
/// Only the choice depends on it (the coder's tables are sized by [`coding_table_bits`]), so
/// files stay readable whatever it is.
fn measure_table_bits(specs: &[Vec<Spec>], records: u64) -> u32 {
    let per_slot: usize = specs
        .iter()
        .enumerate()
        .flat_map(|(s, c)| c.iter().map(move |p| Predictor::slot_bytes(s, *p)))
        .sum();
    let fill = (64 - records.leading_zeros()) + 2;
    let mut bits = MEASURE_TABLE_BITS.min(fill).max(MEASURE_MIN_TABLE_BITS);
    while bits > MEASURE_MIN_TABLE_BITS && per_slot.saturating_mul(1 << bits) > MEASURE_TABLE_BYTES
    {
        bits -= 1;
    }
    bits
}

/// Bytes the recency lists of all measured rank candidates may take together, at
/// [`LIST_VALUE_BYTES`] a value.
const MEASURE_LIST_BYTES: usize = 24 << 20;
/// What a recency list takes per value it can hold: its hash map entry, and two sequence
/// slots of a value and a tree count each.
const LIST_VALUE_BYTES: usize = 64;
/// Fewest values a measured list holds.
const MEASURE_MIN_LIVE_CAP: usize = 1 << 8;

/// Values a measured rank candidate's list holds: [`MEASURE_LIVE_CAP`], halved (down to
/// [`MEASURE_MIN_LIVE_CAP`]) until the lists of all of `specs`' rank candidates fit
/// [`MEASURE_LIST_BYTES`]. Why: a DTD of many record shapes has hundreds of streams, each with
/// several rank candidates, and at full size their lists alone would exceed the writer's memory
/// bound. Only the
/// choice depends on it, so files stay readable whatever it is.
fn measure_live_cap(streams: &Streams, specs: &[Vec<Spec>]) -> usize {
    // A stream's `recent` candidates share one list (their keys only pick coding contexts).
    let lists = specs
        .iter()
        .enumerate()
        .flat_map(|(s, c)| {
            let peers = streams.peers(s);
            c.iter()
                .map(move |&p| {
                    let p = super::engine::state_of(s, p, &peers);
                    (
                        if p.kind == Kind::Recent {
                            p.arg as usize
                        } else {
                            s
                        },
                        p,
                    )
                })
                .collect::<Vec<_>>()
        })
        .filter(|(_, p)| p.kind.holds_values())
        .collect::<std::collections::HashSet<_>>()
        .len()
        .max(1);
    let mut cap = MEASURE_LIVE_CAP;
    while cap > MEASURE_MIN_LIVE_CAP && lists * cap * LIST_VALUE_BYTES > MEASURE_LIST_BYTES {
        cap /= 2;
    }
    cap
}

/// Bytes the hashed tables of the chosen predictors may take together while coding.
const CODING_TABLE_BYTES: usize = 16 << 20;
/// Smallest table of a chosen predictor.
const CODING_MIN_TABLE_BITS: u32 = 10;

/// Each (stream, predictor spec) pair of `choices` once, primary or listed: each pair has one
/// table and one list in the engine, however often it is named.
fn distinct_chosen(choices: &[Choice]) -> impl Iterator<Item = (usize, Spec)> + '_ {
    let mut seen = std::collections::HashSet::new();
    choices
        .iter()
        .enumerate()
        .flat_map(|(s, c)| {
            std::iter::once(&c.primary)
                .chain(&c.list)
                .map(move |p| (s, *p))
        })
        .filter(move |k| seen.insert(*k))
}

/// Table bits of the chosen predictors when coding: [`TABLE_BITS`], halved (down to
/// [`CODING_MIN_TABLE_BITS`]) while the tables of all chosen predictors together would take
/// more than [`CODING_TABLE_BYTES`]. The reader computes it from the choices it reads.
pub(crate) fn coding_table_bits(choices: &[Choice]) -> u32 {
    let per_slot: usize = distinct_chosen(choices)
        .map(|(s, p)| Predictor::slot_bytes(s, p))
        .sum();
    let mut bits = TABLE_BITS;
    while bits > CODING_MIN_TABLE_BITS && per_slot.saturating_mul(1 << bits) > CODING_TABLE_BYTES {
        bits -= 1;
    }
    bits
}

/// The engine that codes (or decodes) a block with `choices`: its tables sized by the whole
/// choice, as the reader sizes them; its lists share one bound (`LIVE_CAP` values).
fn coding_engine(streams: &Streams, choices: &[Choice]) -> Engine {
    Engine::new(streams, coding_table_bits(choices), false)
}

/// Bytes the measured tag models may take together (one per tag context candidate, two per
/// stream).
const MEASURE_TAG_BYTES: usize = 8 << 20;
/// Fewest context bits of a measured tag model.
const MEASURE_MIN_CONTEXT_BITS: u32 = 4;

/// Context bits of each of `candidates` measured tag models over an alphabet of
/// `alphabet_bits`: [`MEASURE_CONTEXT_BITS`] while they fit [`MEASURE_TAG_BYTES`], fewer for
/// DTDs with many fields and records. Only the choice depends on it.
fn measure_context_bits(candidates: usize, alphabet_bits: u32) -> u32 {
    let mut bits = MEASURE_CONTEXT_BITS;
    let slot = std::mem::size_of::<super::counter::Counter>();
    let bytes = |bits: u32| candidates.saturating_mul(slot << (bits + alphabet_bits));
    while bits > MEASURE_MIN_CONTEXT_BITS && bytes(bits) > MEASURE_TAG_BYTES {
        bits -= 1;
    }
    bits
}

/// Chooses predictors for `block` by measuring every candidate on it, except for the streams
/// whose predictors `fixed` gives (the DTD's `model` properties), which keep them; every
/// record in walking order.
#[cfg(test)]
pub(crate) fn choose(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    fixed: &[Option<Choice>],
) -> Result<Chosen, (u64, String)> {
    let orders = Orders::plain(catalog);
    let carried = Carried::default();
    choose_ordered(
        catalog, streams, block, section, declared, fixed, &orders, &carried,
    )
}

/// [`choose`], with the records' fields coded in `orders` and the lists `carried` from the
/// previous block. A block of more than
/// [`SAMPLE_RECORDS`] records is measured twice: every candidate and tag context on the
/// sampled records ([`Window::sampled`]), then on every record only the candidates that the
/// first measurement proposes or ranks among the best few of each stream
/// ([`Measured::kept_candidates`]) and its best tag contexts. Why: measuring every candidate
/// on every record took most of the writer's time, and a sample alone misjudges what needs a
/// long history (keyed tables fill slowly, a free names an allocation made long before, the
/// tag contexts), which the second measurement sees whole, for a fraction of the candidates.
#[allow(clippy::too_many_arguments)]
pub(crate) fn choose_ordered(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    fixed: &[Option<Choice>],
    orders: &Orders,
    carried: &Carried,
) -> Result<Chosen, (u64, String)> {
    let is_fixed = |s: usize| fixed.get(s).is_some_and(Option::is_some);
    let ending = super::ending::bears_out(catalog, streams, block, section, declared, orders);
    let all: Vec<Vec<Spec>> = (0..streams.len())
        .map(|s| {
            if is_fixed(s) {
                return Vec::new();
            }
            let mut c = candidates(streams, s, &ending);
            c.truncate(MAX_CANDIDATES);
            // `match` beside them, on top of the budget: the hit masks grow with the
            // candidates, so offering it to every stream takes no other candidate's place.
            c.push(Spec {
                kind: Kind::Match,
                arg: 0,
            });
            c
        })
        .collect();
    let tag_candidates = TagContext::candidates(streams.len());
    let measure = |specs, tags, window| {
        measure(
            catalog, streams, block, section, declared, orders, carried, specs, tags, window,
        )
    };
    let sampled = Window::sampled(block.records);
    if sampled.is_whole() {
        let m = measure(all, tag_candidates, sampled)?;
        return Ok(m.propose(streams, fixed));
    }
    let first = measure(all, tag_candidates, sampled)?;
    // Kept by the proposals made without `match` (which is kept anyway): the second
    // measurement then measures what it would without the offer, and `match` besides.
    let kept = first.kept_candidates(&first.propose_with(streams, fixed, false).proposals);
    let tags = first.best_tags(KEPT_TAG_CONTEXTS);
    let m = measure(kept, tags, Window::all(block.records))?;
    Ok(m.propose(streams, fixed))
}

/// Where `match` stands among a stream's candidates `specs`: measured beside the others but
/// never a primary, never ranked among them, and left out of the round of proposals made
/// without it ([`Measured::propose`]).
fn matches(specs: &[Spec]) -> impl Iterator<Item = usize> + '_ {
    specs
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind == Kind::Match)
        .map(|(i, _)| i)
}

/// Candidates per stream that the first of two measurements keeps for the second, by sampled
/// cost and by hits each, beside those its proposals name ([`Measured::kept_candidates`]).
const KEPT_BY_RANKING: usize = 10;

/// Tag contexts the first of two measurements keeps for the second: the best on a sample is
/// not always the best on the block, so more than one is kept; four keep the block's best
/// among them while the second measurement stays cheap.
const KEPT_TAG_CONTEXTS: usize = 4;

/// What measuring candidates on a block found.
struct Measured {
    /// Per stream: the candidates measured.
    specs: Vec<Vec<Spec>>,
    /// Per stream: whether each candidate is a rank list.
    rank: Vec<Vec<bool>>,
    samples: Vec<Samples>,
    /// The tag contexts measured, with the bits each took.
    tags: Vec<(TagContext, u64)>,
}

/// Measures the candidates `specs` and the tag contexts `tag_contexts` on the records of
/// `block` that `window` takes.
#[allow(clippy::too_many_arguments)]
fn measure(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    orders: &Orders,
    carried: &Carried,
    specs: Vec<Vec<Spec>>,
    tag_contexts: Vec<TagContext>,
    window: Window,
) -> Result<Measured, (u64, String)> {
    let mut engine = Engine::new(
        streams,
        measure_table_bits(&specs, window.taken_records()),
        true,
    );
    engine.cap_lists(measure_live_cap(streams, &specs));
    let mut cands = Vec::new();
    let mut rank = Vec::new();
    for (s, c) in specs.iter().enumerate() {
        cands.push(c.iter().map(|&p| engine.instance(s, p)).collect());
        rank.push(c.iter().map(|p| p.kind.is_rank()).collect());
    }
    engine.seed(carried);
    // `match` is measured on top of the budget: offering it leaves the other candidates'
    // samples, and so their choice, as they were.
    let counted = specs
        .iter()
        .flatten()
        .filter(|p| p.kind != Kind::Match)
        .count();
    let cap = samples_per_stream(counted) as usize;
    let alphabet = TagAlphabet::new(catalog);
    let context_bits = measure_context_bits(tag_contexts.len(), alphabet.bits);
    let mut m = Reading::windowed(
        block,
        Measure {
            engine,
            samples: specs
                .iter()
                .map(|c| {
                    let mut samples = Samples::new(c.len());
                    for i in matches(c) {
                        samples.list_only[i] = true;
                    }
                    samples
                })
                .collect(),
            candidates: cands,
            rank,
            seen: vec![0; streams.len()],
            every: vec![1; streams.len()],
            cap,
            tag_costs: vec![0; tag_contexts.len()],
            tag_bases: Vec::with_capacity(tag_contexts.len()),
            tags: tag_contexts
                .into_iter()
                .map(|c| TagModel::new(c, alphabet.bits, context_bits))
                .collect(),
            alphabet,
        },
        window,
    );
    walk(
        catalog,
        streams,
        &mut m,
        block.records,
        section,
        declared,
        orders,
    )?;
    let m = m.consumer;
    Ok(Measured {
        specs,
        rank: m.rank,
        samples: m.samples,
        tags: m.tags.iter().map(|t| t.context).zip(m.tag_costs).collect(),
    })
}

impl Measured {
    /// The `n` tag contexts that took the fewest bits, cheapest first.
    fn best_tags(&self, n: usize) -> Vec<TagContext> {
        let mut t = self.tags.clone();
        t.sort_by_key(|&(_, bits)| bits); // stable: the first candidate wins a tie
        t.into_iter().take(n).map(|(c, _)| c).collect()
    }

    /// Per stream, the candidates worth measuring again on the whole block: `none` (the first
    /// candidate, which the measurement needs), every one that `proposals` name, and the
    /// [`KEPT_BY_RANKING`] cheapest and most often hitting, in their first order.
    fn kept_candidates(&self, proposals: &[Vec<Choice>]) -> Vec<Vec<Spec>> {
        self.specs
            .iter()
            .enumerate()
            .map(|(s, specs)| {
                let samples = &self.samples[s];
                let mut keep = vec![false; specs.len()];
                if let Some(k) = keep.first_mut() {
                    *k = true;
                }
                for p in proposals {
                    for spec in std::iter::once(&p[s].primary).chain(&p[s].list) {
                        if let Some(i) = specs.iter().position(|x| x == spec) {
                            keep[i] = true;
                        }
                    }
                }
                // `match` is kept beside the rankings, not in them, so that offering it leaves
                // the other candidates kept as they were (its state is one per block).
                for c in matches(specs) {
                    keep[c] = true;
                }
                let ranked: Vec<usize> = (0..specs.len())
                    .filter(|&c| specs[c].kind != Kind::Match)
                    .collect();
                let mut by_cost = ranked.clone();
                by_cost.sort_by_key(|&c| samples.total(c));
                let mut by_hits = ranked;
                by_hits.sort_by_key(|&c| std::cmp::Reverse(samples.hits(c)));
                for &c in by_cost
                    .iter()
                    .take(KEPT_BY_RANKING)
                    .chain(by_hits.iter().take(KEPT_BY_RANKING))
                {
                    keep[c] = true;
                }
                specs
                    .iter()
                    .zip(keep)
                    .filter(|&(_, k)| k)
                    .map(|(&p, _)| p)
                    .collect()
            })
            .collect()
    }

    /// The proposals of choices from this measurement (see [`Chosen::proposals`]); the streams
    /// that `fixed` gives keep them.
    ///
    /// The proposals are made twice: first as if `match` were no candidate, then with it
    /// (identical ones once). Its sampled costs see neither how the hit indices' contexts and
    /// repeats code a guess that holds for runs nor what it displaces from a list or from a
    /// runner-up, so offering it must not take away a proposal the block had without it.
    fn propose(&self, streams: &Streams, fixed: &[Option<Choice>]) -> Chosen {
        let mut chosen = self.propose_with(streams, fixed, false);
        for p in self.propose_with(streams, fixed, true).proposals {
            if !chosen.proposals.contains(&p) {
                chosen.proposals.push(p);
            }
        }
        chosen
    }

    /// [`Measured::propose`]'s proposals, with `match` a candidate or not.
    fn propose_with(
        &self,
        streams: &Streams,
        fixed: &[Option<Choice>],
        with_match: bool,
    ) -> Chosen {
        let (specs, m) = (&self.specs, self);
        let n = specs.len();
        let best_tag = self.best_tags(1).first().copied().unwrap_or(TagContext {
            order: 1,
            stream: None,
        });
        // Per stream, a choice among its candidates outside `ban` with at most `max_list` listed
        // predictors; fixed streams keep the DTD's.
        let pick = |s: usize, ban: &[usize], max_list: usize, detour| match fixed.get(s) {
            Some(Some(c)) => c.clone(),
            _ => {
                let mut ban = ban.to_vec();
                if !with_match {
                    ban.extend(matches(&specs[s]));
                }
                let (primary, list) = m.samples[s].choose(&m.rank[s], &ban, max_list, detour);
                Choice {
                    primary: specs[s][primary],
                    list: list.iter().map(|&c| specs[s][c]).collect(),
                }
            }
        };
        let choices: Vec<Choice> = (0..n).map(|s| pick(s, &[], MAX_LIST, None)).collect();
        // Runners-up: the sampled costs are an estimate (fixed-cost residuals, on a sample), so
        // the writer codes these too and the exact coded size decides per stream. Each takes a
        // runner-up at one step of the greedy choice, bans its primary, or drops its list.
        let variant = |ban: &dyn Fn(&Choice) -> Vec<Spec>, max_list: usize, detour| {
            (0..n)
                .map(|s| {
                    let banned = ban(&choices[s]);
                    let ban: Vec<usize> = (0..specs[s].len())
                        .filter(|&i| banned.contains(&specs[s][i]))
                        .collect();
                    pick(s, &ban, max_list, detour)
                })
                .collect::<Vec<Choice>>()
        };
        let none = |_: &Choice| Vec::new();
        let runners_up = [
            variant(&none, MAX_LIST, Some(0)),
            variant(&none, MAX_LIST, Some(1)),
            variant(&none, MAX_LIST, Some(2)),
            variant(&|c| vec![c.primary], MAX_LIST, None),
            variant(&none, 0, None),
        ];
        // The alternative: every stream with a keyed `reuse` candidate puts the cheapest one
        // first (its ranks are coded by key, which the sampled costs do not see).
        let mut alternative = choices.clone();
        let mut any = false;
        for (s, c) in alternative.iter_mut().enumerate() {
            let keyed = (0..specs[s].len())
                .filter(|&i| specs[s][i].kind == Kind::Reuse && specs[s][i].arg as usize != s)
                .min_by_key(|&i| m.samples[s].total(i));
            if let Some(i) = keyed {
                let spec = specs[s][i];
                c.list.retain(|&x| x != spec);
                c.list.insert(0, spec);
                c.list.truncate(MAX_LIST);
                any = true;
            }
        }
        // Where the greedy choice lists a stream's `recent` list: its ranks keyed by the first
        // other field of the record, listed first (the sampled costs see neither the key
        // contexts nor, being a rank per value, how much dearer a rank among every value of
        // a name is than one among the live values); and the choice made without `recent`.
        let lists_recent = |c: &Choice| c.list.iter().any(|p| p.kind == Kind::Recent);
        let mut keyed_recent = choices.clone();
        for (s, c) in keyed_recent.iter_mut().enumerate() {
            let key = (0..streams.with_keys())
                .find(|&t| t != s && streams.info[t].plan == streams.info[s].plan);
            if let (true, Some(k)) = (lists_recent(c), key) {
                c.list.retain(|p| p.kind != Kind::Recent);
                c.list.insert(
                    0,
                    Spec {
                        kind: Kind::Recent,
                        arg: k as u32,
                    },
                );
            }
        }
        let without_recent = variant(
            &|c: &Choice| {
                c.list
                    .iter()
                    .copied()
                    .filter(|p| p.kind == Kind::Recent)
                    .collect()
            },
            MAX_LIST,
            None,
        );
        let alternatives = [
            any.then_some(alternative),
            Some(keyed_recent),
            Some(without_recent),
        ];
        let mut proposals = vec![choices];
        for p in alternatives.into_iter().flatten().chain(runners_up) {
            if !proposals.contains(&p) {
                proposals.push(p);
            }
        }
        Chosen {
            proposals,
            tag_context: best_tag,
        }
    }
}

/// What a block is coded with: its records and their streams, the models chosen for them, the
/// tags' context, the fields' order, and the section the records may point into. One value
/// serves every coding of a block (the trials, the coding with every string end, the coding
/// with some), so that they cannot be handed different parts of it.
pub(crate) struct Coding<'a> {
    pub(crate) catalog: &'a Catalog,
    pub(crate) streams: &'a Streams,
    pub(crate) block: &'a FlatBlock,
    pub(crate) choices: &'a [Choice],
    pub(crate) tag_context: TagContext,
    pub(crate) section: Option<u8>,
    pub(crate) declared: &'a dyn Fn(u8) -> bool,
    pub(crate) orders: &'a Orders,
}

/// A block as [`encode_ended`] coded it: its bytes, its costs when asked for, and the lists
/// to carry into the next block.
pub(crate) type Ended = (Vec<u8>, Option<Costs>, Carried);

/// Codes `block` with `choices`: the model table, then the range-coded records; prints where
/// the bytes went if the environment asks ([`Costs::wanted`]). Writers go through
/// [`super::trials`], which picks the choice; tests code a given one.
#[cfg(test)]
pub(crate) fn encode(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    choices: &[Choice],
    tag_context: TagContext,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
) -> Result<Vec<u8>, (u64, String)> {
    let costs = Costs::wanted(streams.len());
    let coding = Coding {
        catalog,
        streams,
        block,
        choices,
        tag_context,
        section,
        declared,
        orders: &Orders::plain(catalog),
    };
    let (bytes, costs, _) = encode_ended(&coding, &streams.all_ends(), costs, &Carried::default())?;
    if let Some(c) = &costs {
        c.print(catalog, streams, choices);
    }
    Ok(bytes)
}

/// Codes `coding`'s block, adding the bits coded per item class to `costs` when given; the
/// lists start from `carried`, and the lists to carry into the next block are returned rather
/// than written over `carried`, so that a writer coding a block twice seeds both codings
/// from the same lists without copying them. The lengths that `ended` names are coded with
/// their strings (docs/FORMAT.md §7, "Strings with their ends"), the others as scalars.
pub(crate) fn encode_ended(
    coding: &Coding<'_>,
    ended: &[bool],
    costs: Option<Costs>,
    carried: &Carried,
) -> Result<Ended, (u64, String)> {
    let e = code(coding, None, ended, costs, carried)?;
    let next = e.engine.carry();
    let Encode {
        engine,
        models,
        coder,
        mut costs,
        ..
    } = e;
    if let Some(c) = &mut costs {
        c.ends = models.end_stats();
    }
    // The tables are packed once the block's model state is gone: the mixer's tables (most of
    // them its refinement table) would otherwise add to the encoder's peak.
    drop((engine, models));
    let records = coder.finish();
    Ok((
        packed_tables::join(write_tables(coding), &records),
        costs,
        next,
    ))
}

/// A block as [`encode_bytes`] coded it: its bytes and the lists to carry into the next block.
pub(crate) type ByBytes = (Vec<u8>, Carried);

/// Codes `coding`'s block with the byte-stream stage ([`byte_stage`]), every length as a
/// scalar; the lists start from `carried`, and those to carry into the next block are
/// returned. `None` when the block's streams would decompress to more than a reader accepts
/// of a block that size (the writer then codes it with the range coder).
pub(crate) fn encode_bytes(
    coding: &Coding<'_>,
    carried: &Carried,
) -> Result<Option<ByBytes>, (u64, String)> {
    let (streams, block) = (coding.streams, coding.block);
    let mut engine = coding_engine(streams, coding.choices);
    let models = Models::new(
        coding.catalog,
        coding.choices,
        coding.tag_context,
        &mut engine,
    );
    engine.seed(carried);
    let consumer = ByteEncode {
        engine,
        models,
        out: Default::default(),
    };
    let mut e = Reading::windowed(block, consumer, Window::all(block.records));
    walk(
        coding.catalog,
        streams,
        &mut e,
        block.records,
        coding.section,
        coding.declared,
        coding.orders,
    )?;
    let ByteEncode { engine, out, .. } = e.consumer;
    let next = engine.carry();
    drop(engine);
    let tables = write_tables(coding);
    // The 0 byte stands where a range coder's first byte stands: it ends the tables.
    let mut records = vec![0u8];
    let raw = out.write(&mut records);
    let mut bytes = vec![byte_stage::MARK];
    bytes.extend(packed_tables::join(tables, &records));
    Ok(byte_stage::fits(raw, bytes.len()).then_some((bytes, next)))
}

/// The bits each stream that `coded` names takes when `block` is coded with `choices` and
/// `orders`, as the coder's probabilities say ([`Encoder::meter`]); the other streams get 0.
/// A stream's bits depend only on its own predictors and models, so they are the same
/// whatever else is coded: the other streams are left out, and so are the tags (whose history
/// the streams' models read is kept) and the byte strings, whose model reads only the strings
/// (and the string keys, which are observed all the same), never the choice.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stream_costs(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    choices: &[Choice],
    coded: &[bool],
    tag_context: TagContext,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    orders: &Orders,
    carried: &Carried,
) -> Result<Costs, (u64, String)> {
    let coding = Coding {
        catalog,
        streams,
        block,
        choices,
        tag_context,
        section,
        declared,
        orders,
    };
    let e = code(
        &coding,
        Some(coded),
        &[],
        Some(Costs::new(streams.len())),
        carried,
    )?;
    Ok(e.costs.unwrap_or_else(|| Costs::new(streams.len())))
}

/// Runs the coder over `coding`'s block; returns it with the coded bits. A `trial` names the
/// streams to cost: the coder is a meter, and the byte strings and the other streams are not
/// coded. The lengths that `ended` names are coded with their strings (a trial gives none, so
/// that it meters every length as a scalar).
fn code(
    coding: &Coding<'_>,
    trial: Option<&[bool]>,
    ended: &[bool],
    costs: Option<Costs>,
    carried: &Carried,
) -> Result<Encode, (u64, String)> {
    let (streams, block) = (coding.streams, coding.block);
    let mut engine = coding_engine(streams, coding.choices);
    let coded = |s: usize| trial.is_none_or(|t| t.get(s).copied().unwrap_or(false));
    let mut models = Models::new_for(
        coding.catalog,
        coding.choices,
        coding.tag_context,
        &mut engine,
        &coded,
    );
    engine.seed(carried);
    let mut coder = if trial.is_some() {
        Encoder::meter()
    } else {
        Encoder::new()
    };
    let ended: Vec<bool> = (0..streams.len())
        .map(|s| streams.endable(s) && ended.get(s).copied().unwrap_or(false))
        .collect();
    if trial.is_none() {
        models.encode_setup(&mut coder, &block.bytes, streams, &ended);
        if costs.is_some() {
            models.track_ends();
        }
    }
    // A trial meters the sampled records, as the candidates were measured on them.
    let window = if trial.is_some() {
        Window::sampled(block.records)
    } else {
        Window::all(block.records)
    };
    let mut e = Reading::windowed(
        block,
        Encode {
            engine,
            models,
            coder,
            costs,
            whole: trial.is_none(),
            coded: (0..streams.len()).map(coded).collect(),
            ended,
        },
        window,
    );
    walk(
        coding.catalog,
        streams,
        &mut e,
        block.records,
        coding.section,
        coding.declared,
        coding.orders,
    )?;
    Ok(e.consumer)
}

/// What [`decode`] gives.
#[cfg(test)]
pub(crate) type Decoded = Result<(FlatBlock, Option<u8>), (u64, String)>;

/// [`decode`] of a block with no state carried from an earlier one (a trace's first block).
#[cfg(test)]
pub(crate) fn decode_alone(
    c: &Catalog,
    s: &Streams,
    b: &[u8],
    n: u64,
    at: Option<u8>,
    d: &dyn Fn(u8) -> bool,
) -> Decoded {
    decode(c, s, b, n, at, d, &mut Carried::default())
}

/// Decodes `records` records from a modelled block whose lists start from `carried` (the
/// previous block's), which then holds the lists to carry into the next block.
pub(crate) fn decode(
    catalog: &Catalog,
    streams: &Streams,
    bytes: &[u8],
    records: u64,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    carried: &mut Carried,
) -> Result<(FlatBlock, Option<u8>), (u64, String)> {
    if let Some(body) = bytes.strip_prefix(&[byte_stage::MARK]) {
        return decode_bytes(catalog, streams, body, records, section, declared, carried);
    }
    let (at, choices, orders, tag_context) =
        read_tables(catalog, streams, bytes).map_err(|m| (0, m))?;
    let mut engine = coding_engine(streams, &choices);
    let mut models = Models::new(catalog, &choices, tag_context, &mut engine);
    engine.seed(carried);
    let coded = &bytes[at..];
    let mut coder = Decoder::new(coded);
    let ended = models
        .decode_setup(&mut coder, streams)
        .map_err(|m| (0, m))?;
    let mut d = Decode {
        output: FlatBlock::default(),
        engine,
        models,
        coder,
        budget: (coded.len() as u64 + 1)
            .saturating_mul(FIELDS_PER_CODED_BYTE)
            .saturating_add(records),
        base: 0,
        ended,
        deferred: Vec::new(),
    };
    let end = walk(
        catalog, streams, &mut d, records, section, declared, &orders,
    )?;
    *carried = d.engine.carry();
    Ok((d.output, end))
}

/// A block's tables (items 1–3 of docs/FORMAT.md §7, "Block layout", plain or packed) at the
/// start of `bytes`: where the records start, the model table, the order table and the tag
/// context. Both stages start with them.
fn read_tables(
    catalog: &Catalog,
    streams: &Streams,
    bytes: &[u8],
) -> Result<(usize, Vec<Choice>, Orders, TagContext), String> {
    let tables = packed_tables::split(bytes)?;
    let plain = &tables.plain;
    let mut at = 0;
    let tag_context = read_tag_context(catalog, streams, plain, &mut at)?;
    let choices = read_choices(catalog, streams, plain, &mut at)?;
    let orders = read_orders(catalog, plain, &mut at)?;
    Ok((tables.check_end(at)?, choices, orders, tag_context))
}

/// The tables [`read_tables`] reads, for `coding`, not yet packed.
fn write_tables(coding: &Coding<'_>) -> Vec<u8> {
    let mut tables = write_tag_context(coding.catalog, coding.streams, coding.tag_context);
    tables.extend(write_choices(
        coding.catalog,
        coding.streams,
        coding.choices,
    ));
    tables.extend(write_orders(coding.catalog, coding.orders));
    tables
}

/// [`decode`] of a block coded by the byte-stream stage; `body` is the block after its
/// [`byte_stage::MARK`].
fn decode_bytes(
    catalog: &Catalog,
    streams: &Streams,
    body: &[u8],
    records: u64,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    carried: &mut Carried,
) -> Result<(FlatBlock, Option<u8>), (u64, String)> {
    let (at, choices, orders, tag_context) =
        read_tables(catalog, streams, body).map_err(|m| (0, m))?;
    let coded = match body.get(at..) {
        Some([0, rest @ ..]) => rest,
        _ => return Err((0, "the byte-stream stage's 0 byte is missing".to_string())),
    };
    let mut engine = coding_engine(streams, &choices);
    let models = Models::new(catalog, &choices, tag_context, &mut engine);
    engine.seed(carried);
    let mut d =
        ByteDecode::new(engine, models, coded, body.len() + 1, records).map_err(|m| (0, m))?;
    let end = walk(
        catalog, streams, &mut d, records, section, declared, &orders,
    )?;
    d.check_end().map_err(|m| (records, m))?;
    let (output, engine) = d.finish();
    *carried = engine.carry();
    Ok((output, end))
}

#[cfg(test)]
mod window_tests {
    use super::{Window, SAMPLE_RECORDS, SAMPLE_WINDOWS};

    /// The records `window` takes, walked to its end.
    fn taken(mut window: Window, records: u64) -> Vec<u64> {
        let mut out = Vec::new();
        for r in 0..records {
            if window.taken() {
                out.push(r);
            }
            window.next();
        }
        out
    }

    #[test]
    fn a_small_block_is_taken_whole() {
        let w = Window::sampled(SAMPLE_RECORDS);
        assert!(w.is_whole());
        assert_eq!(taken(w, SAMPLE_RECORDS).len() as u64, SAMPLE_RECORDS);
    }

    #[test]
    fn a_large_block_is_sampled_in_evenly_spread_windows() {
        for records in [SAMPLE_RECORDS + 1, 3 * SAMPLE_RECORDS + 7, 1 << 20] {
            let w = Window::sampled(records);
            assert!(!w.is_whole());
            assert_eq!(w.taken_records(), SAMPLE_RECORDS);
            let t = taken(w, records);
            assert_eq!(t.len() as u64, SAMPLE_RECORDS, "{records} records");
            let len = SAMPLE_RECORDS / SAMPLE_WINDOWS;
            for (i, window) in t.chunks(len as usize).enumerate() {
                let start = i as u64 * records / SAMPLE_WINDOWS;
                let expected: Vec<u64> = (start..start + len).collect();
                assert_eq!(window, &expected[..], "window {i} of {records} records");
            }
        }
    }
}
