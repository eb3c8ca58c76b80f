//! The adaptive models of a modelled block and how each item is coded with them: the tag
//! (predicted from the previous records), a scalar (the index of the first predictor that
//! hits, then a rank or a residual), a byte string ([`StringModel`]) and a metadata record.
//! Encoding and decoding are written side by side so that they stay mirror images.

use super::choice::Choice;
use super::counter::{self, Counter, FRESH};
use super::engine::Engine;
use super::keyed::KeyedRanks;
use super::numbers::{NumberModel, SmallModel};
use super::predict::{Kind, Spec};
use super::range::{Decoder, Encoder};
use super::repeats::{self, Repeats};
use super::streams::Streams;
use super::strings::{StringModel, MAX_TABLE_BITS, MIN_TABLE_BITS};
use super::tags::{TagAlphabet, TagContext, TagModel, TAG_CONTEXT_BITS};
use crate::universal::plan::Catalog;
use crate::varint::{unzigzag, zigzag};

/// The models of one stream.
struct StreamModels {
    primary: usize,
    list: Vec<usize>,
    kinds: Vec<Kind>,
    /// Hit-index models, a 3-bit tree of [`INDEX_NODES`] counters per context: by the previous
    /// two indices of the stream, the last two record indices and whether two guesses agree
    /// ([`Models::agree`]).
    index: Vec<Counter>,
    /// Rank or residual models by hit index (the last one: residual of a miss).
    numbers: Vec<NumberModel>,
    primary_zero: bool,
    prev: usize,
    /// Context of the next rank or residual: the last one, capped.
    last_payload: usize,
    /// Per list entry: for a keyed `reuse`, its key stream and rank models.
    keyed: Vec<Option<(usize, Box<KeyedRanks>)>>,
    /// The stream's coded symbols, offered again where they repeat.
    repeats: Repeats,
}

/// Rank and residual models per hit index: by the last payload of the stream (0 to 14, more).
const PAYLOAD_CONTEXTS: usize = 16;
/// The first setup symbol of a block whose strings may carry their ends; the table caps take
/// 0–8, so a block written before keeps its meaning.
const SETUP_ENDS: u32 = 15;
/// Hit-index models also by the last two record indices (each capped at 3).
const INDEX_TAG_CONTEXTS: usize = 16;
/// Counters of one hit-index tree (3 bits: nodes 1 to 7).
const INDEX_NODES: usize = 8;
/// Hit-index contexts: previous two indices, record indices and agreement; then, after a
/// refused repeat, previous two indices and agreement alone (a refusal is rarer, and a stream
/// of a wide DTD would otherwise carry twice the counters for it).
const INDEX_CONTEXTS: usize = 64 * INDEX_TAG_CONTEXTS * 2 + 64 * 2;

/// Codes hit index `hit` (below 8) with the tree at `base`.
#[inline]
fn encode_index(e: &mut Encoder, probs: &mut [Counter], base: usize, hit: u32) {
    let mut node = 1usize;
    for i in (0..3).rev() {
        let bit = (hit >> i) & 1 == 1;
        counter::encode(e, &mut probs[base + node], bit);
        node = (node << 1) | usize::from(bit);
    }
}

/// Reads what [`encode_index`] wrote.
#[inline]
fn decode_index(d: &mut Decoder<'_>, probs: &mut [Counter], base: usize) -> usize {
    let mut node = 1usize;
    for _ in 0..3 {
        let bit = counter::decode(d, &mut probs[base + node]);
        node = (node << 1) | usize::from(bit);
    }
    node - INDEX_NODES
}

impl StreamModels {
    /// Models of a stream that is not coded: empty, allocating nothing.
    fn unused() -> StreamModels {
        StreamModels {
            primary: 0,
            list: Vec::new(),
            kinds: Vec::new(),
            index: Vec::new(),
            numbers: Vec::new(),
            primary_zero: true,
            prev: 0,
            last_payload: 0,
            keyed: Vec::new(),
            repeats: Repeats::default(),
        }
    }

    fn payload(&mut self, hit: usize) -> &mut NumberModel {
        &mut self.numbers[hit * PAYLOAD_CONTEXTS + self.last_payload]
    }

    fn saw_payload(&mut self, v: u64) {
        self.last_payload = v.min(PAYLOAD_CONTEXTS as u64 - 1) as usize;
    }
}

/// Every adaptive model of a block.
pub(crate) struct Models {
    streams: Vec<StreamModels>,
    alphabet: TagAlphabet,
    tags: TagModel,
    /// Byte strings, made by [`Models::encode_setup`] or [`Models::decode_setup`].
    strings: Option<StringModel>,
    /// The string model's table bits beyond [`MIN_TABLE_BITS`], and the flags of the lengths
    /// coded with their strings.
    setup: SmallModel,
    setup_ends: SmallModel,
    meta: Vec<NumberModel>,
    /// Streams whose repeat model has been given its tables (their first value was coded).
    repeat_streams: usize,
}

impl Models {
    /// Models for `choices`, creating the chosen predictors in `engine`.
    pub(crate) fn new(
        catalog: &Catalog,
        choices: &[Choice],
        tag_context: TagContext,
        engine: &mut Engine,
    ) -> Models {
        Models::new_for(catalog, choices, tag_context, engine, &|_| true)
    }

    /// [`Models::new`] for coding only the streams `coded` accepts: the others get neither
    /// models nor predictors, and must not be coded.
    pub(crate) fn new_for(
        catalog: &Catalog,
        choices: &[Choice],
        tag_context: TagContext,
        engine: &mut Engine,
        coded: &dyn Fn(usize) -> bool,
    ) -> Models {
        let alphabet = TagAlphabet::new(catalog);
        let streams = choices
            .iter()
            .enumerate()
            .map(|(s, c)| {
                if !coded(s) {
                    return StreamModels::unused();
                }
                let primary = engine.instance(s, c.primary);
                let list: Vec<usize> = c.list.iter().map(|&p| engine.instance(s, p)).collect();
                let kinds = c.list.iter().map(|p: &Spec| p.kind).collect();
                let keyed = c
                    .list
                    .iter()
                    .map(|p| {
                        (matches!(p.kind, Kind::Reuse | Kind::Recent) && p.arg as usize != s)
                            .then(|| (p.arg as usize, Box::new(KeyedRanks::new())))
                    })
                    .collect();
                StreamModels {
                    primary,
                    kinds,
                    index: vec![FRESH; INDEX_CONTEXTS * INDEX_NODES],
                    numbers: vec![NumberModel::default(); (list.len() + 1) * PAYLOAD_CONTEXTS],
                    keyed,
                    last_payload: 0,
                    list,
                    primary_zero: c.primary.kind == Kind::Zero,
                    prev: 0,
                    repeats: Repeats::default(),
                }
            })
            .collect();
        Models {
            streams,
            tags: TagModel::new(tag_context, alphabet.bits, TAG_CONTEXT_BITS),
            alphabet,
            strings: None,
            setup: SmallModel::new(4),
            setup_ends: SmallModel::new(1),
            meta: vec![NumberModel::default(); 9],
            repeat_streams: 0,
        }
    }

    pub(crate) fn encode_tag(
        &mut self,
        e: &mut Encoder,
        engine: &Engine,
        catalog: &Catalog,
        scope: usize,
        tag: u64,
    ) -> Result<(), String> {
        let symbol = self.tag_symbol(catalog, scope, tag)?;
        self.tags.encode(e, &engine.history, symbol);
        Ok(())
    }

    /// The index of the record that `tag` names in scope `scope` ([`TagAlphabet`]).
    pub(crate) fn tag_symbol(
        &self,
        catalog: &Catalog,
        scope: usize,
        tag: u64,
    ) -> Result<u32, String> {
        let plan = catalog
            .plan_in_scope(scope, tag)
            .ok_or_else(|| format!("tag {tag} names no record"))?;
        Ok(self.alphabet.symbol(plan))
    }

    /// The tag of the record at index `symbol` of scope `scope`: the reverse of
    /// [`Models::tag_symbol`].
    pub(crate) fn tag_of(
        &self,
        catalog: &Catalog,
        scope: usize,
        symbol: u32,
    ) -> Result<u64, String> {
        let plan = self
            .alphabet
            .plan(scope, symbol)
            .ok_or_else(|| format!("record index {symbol} names no record"))?;
        Ok(catalog.plans()[plan].tag)
    }

    /// Records `tag` as [`Models::encode_tag`] would, without coding it.
    pub(crate) fn pass_tag(
        &mut self,
        catalog: &Catalog,
        scope: usize,
        tag: u64,
    ) -> Result<(), String> {
        let symbol = self.tag_symbol(catalog, scope, tag)?;
        self.tags.pass(symbol);
        Ok(())
    }

    pub(crate) fn decode_tag(
        &mut self,
        d: &mut Decoder<'_>,
        engine: &Engine,
        catalog: &Catalog,
        scope: usize,
    ) -> Result<u64, String> {
        let symbol = self.tags.decode(d, &engine.history);
        self.tag_of(catalog, scope, symbol)
    }

    /// The guesses of the first listed predictor and of the second (with one listed, the
    /// primary), when both are value predictors; whether they agree sets the hit index's
    /// context. Two predictors that agree are likelier to be right, and where they part (a
    /// branch, a stride that stops) the hit index is most uncertain. A list with a rank
    /// predictor first or second never agrees. The coder reuses these guesses rather than
    /// asking the predictors again (a hashed table read each).
    #[inline]
    fn guesses(m: &StreamModels, engine: &Engine) -> Option<(u64, u64)> {
        let &first = m.list.first()?;
        let (second, second_kind) = match m.list.get(1) {
            Some(&i) => (i, m.kinds[1]),
            None => (m.primary, Kind::Zero),
        };
        if m.kinds[0].is_rank() || second_kind.is_rank() {
            return None;
        }
        let h = &engine.history;
        Some((
            engine.predictors[first].predict(h),
            engine.predictors[second].predict(h),
        ))
    }

    /// Where the tree of the next hit index of stream `m` starts in its `index` counters,
    /// given its [`Models::guesses`].
    /// `refused`: a repeat offered the value and its bit said no, which makes the symbol it
    /// offered unlikely and the others likelier than where no repeat runs.
    #[inline]
    fn index_context(
        m: &StreamModels,
        guesses: Option<(u64, u64)>,
        recent: usize,
        refused: bool,
    ) -> usize {
        let agree = usize::from(guesses.is_some_and(|(a, b)| a == b));
        let ctx = if refused {
            64 * INDEX_TAG_CONTEXTS * 2 + m.prev * 2 + agree
        } else {
            (m.prev * INDEX_TAG_CONTEXTS + recent) * 2 + agree
        };
        ctx * INDEX_NODES
    }

    /// The guess of the `k`-th listed value predictor of `m` (`m.list.len()`: the primary),
    /// taken from `guesses` where they hold it (with one listed, the second guess is the
    /// primary's).
    #[inline]
    fn guess(m: &StreamModels, engine: &Engine, guesses: Option<(u64, u64)>, k: usize) -> u64 {
        match (guesses, k) {
            (Some((g, _)), 0) => g,
            (Some((_, g)), 1) => g,
            _ => {
                let i = m.list.get(k).copied().unwrap_or(m.primary);
                engine.predictors[i].predict(&engine.history)
            }
        }
    }

    /// Value `v` of stream `m` as its hit index (the first listed predictor that hits, else
    /// the list's length) and the number coded after it: a rank, a residual against the
    /// primary's guess, or none.
    fn symbol(
        m: &StreamModels,
        engine: &Engine,
        guesses: Option<(u64, u64)>,
        v: u64,
    ) -> (usize, Option<u64>) {
        let mut hit = m.list.len();
        let mut rank = 0;
        for (k, &i) in m.list.iter().enumerate() {
            if m.kinds[k].is_rank() {
                let p = &engine.predictors[i];
                if let Some(r) = p.rank_of(&engine.history, v) {
                    hit = k;
                    rank = r;
                    break;
                }
            } else if Self::guess(m, engine, guesses, k) == v {
                hit = k;
                break;
            }
        }
        // The number coded after the hit index: a rank, a residual, or none (0).
        let payload = if hit < m.list.len() {
            if m.kinds[hit].is_rank() {
                Some(rank)
            } else {
                None
            }
        } else if m.primary_zero {
            Some(v)
        } else {
            let p = Self::guess(m, engine, guesses, hit);
            Some(zigzag(v.wrapping_sub(p) as i64))
        };
        (hit, payload)
    }

    /// Value `v` of stream `s` as [`Models::symbol`] gives it, for a stage that stores the
    /// symbols as they are (`super::byte_stage`).
    pub(crate) fn plain_symbol(&self, engine: &Engine, s: usize, v: u64) -> (usize, Option<u64>) {
        let m = &self.streams[s];
        Self::symbol(m, engine, Self::guesses(m, engine), v)
    }

    /// The value of stream `s` whose hit index is `hit`, reading the number after it with
    /// `payload` where the index has one: the reverse of [`Models::plain_symbol`].
    pub(crate) fn plain_value(
        &self,
        engine: &Engine,
        s: usize,
        hit: usize,
        payload: impl FnOnce() -> Result<u64, String>,
    ) -> Result<u64, String> {
        let m = &self.streams[s];
        if hit > m.list.len() {
            return Err(format!("predictor index {hit} of {}", m.list.len()));
        }
        let ranked = hit == m.list.len() || m.kinds[hit].is_rank();
        let p = if ranked { payload()? } else { 0 };
        Self::value_of(m, engine, Self::guesses(m, engine), hit, p)
    }

    pub(crate) fn encode_scalar(&mut self, e: &mut Encoder, engine: &mut Engine, s: usize, v: u64) {
        let m = &mut self.streams[s];
        let guesses = Self::guesses(m, engine);
        let (hit, payload) = Self::symbol(m, engine, guesses, v);
        let symbol = repeats::symbol(hit, payload.unwrap_or(0));
        let offered = m.repeats.offer();
        let repeated = match offered {
            Some(o) => {
                let holds = o == symbol;
                m.repeats.encode(e, holds);
                holds
            }
            None => false,
        };
        if repeated {
            // The hit index and number are known: their models neither code nor learn them
            // (learning them measured larger files: the models then expect the repeats and
            // serve worse where a repeat fails).
            m.prev = (m.prev * 8 + hit) & 63;
            if let Some(r) = payload {
                m.saw_payload(r);
            }
        } else {
            let ctx = Self::index_context(m, guesses, self.tags.recent(), offered.is_some());
            Self::code_symbol(e, m, engine, ctx, hit, payload);
        }
        m.repeats.push(symbol, &mut self.repeat_streams);
        engine.observe(s, v);
    }

    /// Codes hit index `hit` (its tree at `ctx`) and the number after it, if any, into `out`,
    /// and moves the stream's contexts on.
    fn code_symbol(
        out: &mut Encoder,
        m: &mut StreamModels,
        engine: &Engine,
        ctx: usize,
        hit: usize,
        payload: Option<u64>,
    ) {
        encode_index(out, &mut m.index, ctx, hit as u32);
        m.prev = (m.prev * 8 + hit) & 63;
        if let Some(r) = payload {
            match m.keyed.get_mut(hit) {
                Some(Some((k, ranks))) => ranks.encode(out, engine.history.last[*k], r),
                _ => m.payload(hit).encode(out, r),
            }
            m.saw_payload(r);
        }
    }

    pub(crate) fn decode_scalar(
        &mut self,
        d: &mut Decoder<'_>,
        engine: &mut Engine,
        s: usize,
    ) -> Result<u64, String> {
        let m = &mut self.streams[s];
        let guesses = Self::guesses(m, engine);
        let offered = m.repeats.offer();
        let (hit, payload) = match offered.filter(|_| m.repeats.decode(d)) {
            Some(o) => {
                let (hit, p) = repeats::split(o);
                let ranked = hit == m.list.len() || m.kinds.get(hit).is_some_and(|k| k.is_rank());
                (hit, ranked.then_some(p))
            }
            None => {
                let ctx = Self::index_context(m, guesses, self.tags.recent(), offered.is_some());
                let hit = decode_index(d, &mut m.index, ctx);
                let payload = if hit < m.list.len() {
                    m.kinds[hit].is_rank().then(|| match &mut m.keyed[hit] {
                        Some((k, ranks)) => ranks.decode(d, engine.history.last[*k]),
                        None => m.payload(hit).decode(d),
                    })
                } else if hit == m.list.len() {
                    Some(m.payload(hit).decode(d))
                } else {
                    None
                };
                (hit, payload)
            }
        };
        if hit > m.list.len() {
            return Err(format!("predictor index {hit} of {}", m.list.len()));
        }
        m.prev = (m.prev * 8 + hit) & 63;
        let v = Self::value_of(m, engine, guesses, hit, payload.unwrap_or(0))?;
        if let Some(p) = payload {
            m.saw_payload(p);
        }
        m.repeats.push(
            repeats::symbol(hit, payload.unwrap_or(0)),
            &mut self.repeat_streams,
        );
        engine.observe(s, v);
        Ok(v)
    }

    /// The value of stream `m` whose hit index is `hit` and whose number coded after it is
    /// `p` (0 when none): a rank's value, a residual added to the primary's guess, or the hit
    /// predictor's guess.
    fn value_of(
        m: &StreamModels,
        engine: &Engine,
        guesses: Option<(u64, u64)>,
        hit: usize,
        p: u64,
    ) -> Result<u64, String> {
        if hit == m.list.len() {
            Ok(if m.primary_zero {
                p
            } else {
                Self::guess(m, engine, guesses, hit).wrapping_add(unzigzag(p) as u64)
            })
        } else if m.kinds[hit].is_rank() {
            engine.predictors[m.list[hit]]
                .at_rank(&engine.history, p)
                .ok_or_else(|| format!("rank {p} beyond the list"))
        } else {
            Ok(Self::guess(m, engine, guesses, hit))
        }
    }

    /// Codes the block's first items: the table cap of the byte-string model, for a block
    /// whose strings, back to back, are `strings`, and which lengths `ended` names among the
    /// streams' endable ones ([`Streams::endable`]): with none, the cap alone, as a block
    /// coded before strings could carry their ends; else [`SETUP_ENDS`], the cap, and a flag
    /// per endable stream.
    pub(crate) fn encode_setup(
        &mut self,
        e: &mut Encoder,
        strings: &[u8],
        streams: &Streams,
        ended: &[bool],
    ) {
        let bits = super::strings::table_cap(strings);
        let endable = |s: &usize| streams.endable(*s);
        if (0..streams.len()).filter(endable).any(|s| ended[s]) {
            self.setup.encode(e, SETUP_ENDS);
            self.setup.encode(e, bits - MIN_TABLE_BITS);
            for s in (0..streams.len()).filter(endable) {
                self.setup_ends.encode(e, u32::from(ended[s]));
            }
        } else {
            self.setup.encode(e, bits - MIN_TABLE_BITS);
        }
        self.strings = Some(StringModel::new(bits));
    }

    /// Reads what [`Models::encode_setup`] wrote; gives the lengths coded with their strings.
    pub(crate) fn decode_setup(
        &mut self,
        d: &mut Decoder<'_>,
        streams: &Streams,
    ) -> Result<Vec<bool>, String> {
        let mut ended = vec![false; streams.len()];
        let mut symbol = self.setup.decode(d);
        if symbol == SETUP_ENDS {
            symbol = self.setup.decode(d);
            for (s, e) in ended.iter_mut().enumerate() {
                if streams.endable(s) {
                    *e = self.setup_ends.decode(d) == 1;
                }
            }
        }
        let bits = symbol + MIN_TABLE_BITS;
        if bits > MAX_TABLE_BITS {
            return Err(format!("string table bits {bits} out of range"));
        }
        self.strings = Some(StringModel::new(bits));
        Ok(ended)
    }

    fn strings(&mut self) -> &mut StringModel {
        // A block codes its setup before any record, so this is the default only for callers
        // that code no strings.
        self.strings
            .get_or_insert_with(|| StringModel::new(MIN_TABLE_BITS))
    }

    /// The string coder for a string whose key is stream `key`, told the string key of the
    /// string that the record match names for it ([`StringModel::set_matched`]): every entry
    /// point below sets it, so no string is coded with a stale or missing one.
    fn strings_matched(&mut self, engine: &Engine, key: Option<usize>) -> &mut StringModel {
        let s = self.strings();
        s.set_matched(key.and_then(|k| engine.matched(k)));
        s
    }

    /// Codes a string of `field`, its key stream `key`: with its end when `ended`, else as a
    /// string whose length the reader knows.
    pub(crate) fn encode_string(
        &mut self,
        e: &mut Encoder,
        (engine, key): (&Engine, Option<usize>),
        field: u64,
        bytes: &[u8],
        ended: bool,
    ) {
        let s = self.strings_matched(engine, key);
        if ended {
            s.encode_ended(e, field, bytes);
        } else {
            s.encode(e, field, bytes);
        }
    }

    /// Keeps what the writer's choice of ends reads ([`StringModel::track_ends`]).
    pub(crate) fn track_ends(&mut self) {
        self.strings().track_ends();
    }

    /// What [`Models::track_ends`] kept.
    pub(crate) fn end_stats(&self) -> Vec<(u64, super::strings::EndStats)> {
        self.strings
            .as_ref()
            .map(StringModel::end_stats)
            .unwrap_or_default()
    }

    /// Decodes a string coded with its end, of at most `limit` bytes; gives its length.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn decode_ended(
        &mut self,
        d: &mut Decoder<'_>,
        engine: &Engine,
        key: Option<usize>,
        field: u64,
        limit: u64,
        out: &mut Vec<u8>,
    ) -> Result<usize, String> {
        self.strings_matched(engine, key)
            .decode_ended(d, field, limit, out)
    }

    /// Decodes a string of `len` bytes of `field` onto `out`; its key is stream `key`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn decode_bytes(
        &mut self,
        d: &mut Decoder<'_>,
        engine: &Engine,
        key: Option<usize>,
        field: u64,
        out: &mut Vec<u8>,
        len: u64,
    ) -> Result<(), String> {
        let len = usize::try_from(len).map_err(|_| format!("string of {len} bytes"))?;
        self.strings_matched(engine, key).decode(d, field, len, out)
    }

    /// Metadata field `i`, or with `i == None` the field count.
    pub(crate) fn encode_meta(&mut self, e: &mut Encoder, i: Option<u64>, v: u64) {
        self.meta[i.map_or(8, |i| i.min(7) as usize)].encode(e, v);
    }

    pub(crate) fn decode_meta(&mut self, d: &mut Decoder<'_>, i: Option<u64>) -> u64 {
        self.meta[i.map_or(8, |i| i.min(7) as usize)].decode(d)
    }
}
