//! Predictors: the model interpretations of a field. Each one turns the history of the record
//! stream into either a guess of the field's next value (a *value* predictor) or a recency list
//! in which the value is looked up by rank (a *rank* predictor). Every predictor's state depends
//! only on the values coded so far, never on which predictors were chosen, so the writer can
//! measure all candidates in one pass and the reader keeps only the chosen ones.

use super::deltas::RecentDeltas;
use std::rc::Rc;

use super::live::{LiveList, Pool};
use super::record_match::RecordMatch;
use super::stack::OpenStack;
use crate::varint::{unzigzag, zigzag};

/// Entries of a hashed table (fcm, dfcm, key, key-stride) when coding.
pub(crate) const TABLE_BITS: u32 = 16;
/// Entries of a hashed table while measuring candidates (fewer, to bound memory).
pub(crate) const MEASURE_TABLE_BITS: u32 = 14;
/// Longest history an fcm/dfcm context covers.
pub(crate) const MAX_ORDER: u32 = 3;
/// Record distances above this are the same key.
const MAX_DISTANCE: u64 = 7;
/// Most values a `reuse` list of one key holds when coding; one more drops the oldest.
pub(crate) const REUSE_KEY_CAP: usize = 64;
/// The same while measuring candidates.
const MEASURE_REUSE_KEY_CAP: usize = 16;
/// Most differences a `keydelta` list holds (measuring and coding alike); one more drops the
/// oldest.
pub(crate) const KEY_DELTA_CAP: usize = 64;

/// What a predictor is; codes as in docs/FORMAT.md ("Model engine").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// Always 0: the value itself is the residual.
    Zero,
    /// The last value of stream `arg` (the own stream: delta).
    Last,
    /// Last value plus the last difference of the own stream.
    Stride,
    /// Last value of the own stream plus the last value of stream `arg`.
    Sum,
    /// The value that followed the same last `arg` values of the own stream.
    Fcm,
    /// Last value plus the difference that followed the same last `arg` differences.
    Dfcm,
    /// The own stream's value the last time stream `arg` had its current value (and distance).
    Key,
    /// As `Key`, plus the difference seen the last two times under that key.
    KeyStride,
    /// Rank among live values created by stream `arg`; a hit ends the value.
    Live,
    /// Rank in the move-to-front list of the own stream's values.
    Mtf,
    /// As `Live`, but the symbol is the value's position among the live values (oldest
    /// first) relative to where the last ended value stood, as a zigzag signed offset.
    LiveNext,
    /// Rank among the values that ended (were named by a same-named field of another record):
    /// first among those created with the current value of key stream `arg`, then among all
    /// (`arg` = the own stream: among all only).
    Reuse,
    /// As `Key`, plus the last nonzero difference between a value and the `Key` guess under
    /// any key: a shift that many keys undergo together (a stack that moved since a key's last
    /// visit moves the addresses of every later key alike).
    KeyShift,
    /// Rank of the difference between the value and the `Key` guess among the recent distinct
    /// nonzero such differences under any key (newest first): the shifts that several groups
    /// of keys undergo in turn (a stack at a few depths) — rank 0 is `KeyShift`'s guess.
    KeyDelta,
    /// The largest value of the own stream so far plus the step that followed the last
    /// largest value created with the same value of stream `arg`: a bump allocator carving
    /// each new block from the end of the highest one, the step being the size of that block
    /// as its allocator rounds it.
    Top,
    /// Rank in one move-to-front list of the values of the own stream and of every field of
    /// the same name in the other records of the scope: one recency list of the objects that
    /// any record names (a method's receiver, a witnessed object, a new object), where `Mtf`
    /// knows only the own field's references. With `arg` another stream of the record (a
    /// key), its ranks are coded in the context of that stream's value, as keyed `Reuse`
    /// ranks are: which recent object a record names depends on what else it names (a
    /// method's receiver on the method).
    Recent,
    /// The innermost value of stream `arg` (a field of the own field's name in another
    /// record: an entry) that no value of the own stream (an exit) has closed yet: a call
    /// stack ([`super::stack::OpenStack`]).
    Stack,
    /// The own stream's value in the record that followed the last occurrence of the
    /// previous record ([`super::record_match::RecordMatch`]): a run of records that repeats
    /// an earlier run.
    Match,
}

/// The code of [`Kind::Stack`] (16 is [`Kind::Match`]'s).
const STACK_CODE: u8 = 17;

impl Kind {
    pub(crate) const ALL: [Kind; 17] = [
        Kind::Zero,
        Kind::Last,
        Kind::Stride,
        Kind::Sum,
        Kind::Fcm,
        Kind::Dfcm,
        Kind::Key,
        Kind::KeyStride,
        Kind::Live,
        Kind::Mtf,
        Kind::LiveNext,
        Kind::Reuse,
        Kind::KeyShift,
        Kind::KeyDelta,
        Kind::Top,
        Kind::Recent,
        Kind::Match,
    ];

    pub(crate) fn code(self) -> u8 {
        if self == Kind::Stack {
            return STACK_CODE;
        }
        Kind::ALL.iter().position(|&k| k == self).unwrap_or(0) as u8
    }

    pub(crate) fn from_code(c: u64) -> Option<Kind> {
        if c == u64::from(STACK_CODE) {
            return Some(Kind::Stack);
        }
        Kind::ALL.get(usize::try_from(c).ok()?).copied()
    }

    pub(crate) fn is_rank(self) -> bool {
        matches!(
            self,
            Kind::Live | Kind::Mtf | Kind::LiveNext | Kind::Reuse | Kind::KeyDelta | Kind::Recent
        )
    }

    /// Whether the recency list of this rank kind holds up to the engine's list cap (the
    /// values of a stream) rather than a small fixed number of differences.
    pub(crate) fn holds_values(self) -> bool {
        self.is_rank() && self != Kind::KeyDelta
    }

    /// Whether `arg` names a stream (otherwise it is an order or unused).
    pub(crate) fn arg_is_stream(self) -> bool {
        matches!(
            self,
            Kind::Last
                | Kind::Sum
                | Kind::Key
                | Kind::KeyStride
                | Kind::Live
                | Kind::LiveNext
                | Kind::Reuse
                | Kind::KeyShift
                | Kind::KeyDelta
                | Kind::Top
                | Kind::Recent
                | Kind::Stack
        )
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Zero => "none",
            Kind::Last => "last",
            Kind::Stride => "stride",
            Kind::Sum => "sum",
            Kind::Fcm => "fcm",
            Kind::Dfcm => "dfcm",
            Kind::Key => "key",
            Kind::KeyStride => "keystride",
            Kind::Live => "live",
            Kind::Mtf => "mtf",
            Kind::LiveNext => "livenext",
            Kind::Reuse => "reuse",
            Kind::KeyShift => "keyshift",
            Kind::KeyDelta => "keydelta",
            Kind::Top => "top",
            Kind::Recent => "recent",
            Kind::Stack => "stack",
            Kind::Match => "match",
        }
    }
}

/// A predictor for stream `own`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Spec {
    pub(crate) kind: Kind,
    /// Stream index or order, see [`Kind`].
    pub(crate) arg: u32,
}

/// What every predictor may read: the last two values of every stream and when it last had one,
/// and the keyed tables.
pub(crate) struct History {
    pub(crate) last: Vec<u64>,
    pub(crate) prev: Vec<u64>,
    pub(crate) at: Vec<u64>,
    /// Number of the record being coded, from 0 in the block.
    pub(crate) record: u64,
    /// The keyed tables ([`KeyTable`]), one per (own stream, key stream) that a keyed
    /// predictor reads.
    pub(crate) keyed: Vec<KeyTable>,
    /// Recency lists shared by predictors whose lists would hold the same values (see
    /// `Engine::share_lists`); the engine updates them after the predictors observe.
    pub(crate) lists: Vec<LiveList>,
    /// The record match, kept only when a `match` predictor reads it.
    pub(crate) matcher: Option<Box<RecordMatch>>,
}

/// The own stream's last value under each slot of a key (the key stream's value and record
/// distance, [`key_slot`]): what `Key` predicts and `KeyStride`, `KeyShift` and `KeyDelta`
/// start from. Every one of them stores each value of the own stream under the same slot, so
/// one table serves them all; the engine writes it after they have observed a value, and
/// while measuring, when every keyed candidate of a pair of streams runs, that is one cache
/// miss a value instead of four.
pub(crate) struct KeyTable {
    /// The key stream.
    pub(crate) key: usize,
    pub(crate) values: Vec<u64>,
}

impl History {
    pub(crate) fn new(streams: usize) -> History {
        History {
            last: vec![0; streams],
            prev: vec![0; streams],
            at: vec![0; streams],
            record: 0,
            keyed: Vec::new(),
            lists: Vec::new(),
            matcher: None,
        }
    }

    pub(crate) fn update(&mut self, s: usize, v: u64) {
        self.prev[s] = self.last[s];
        self.last[s] = v;
        self.at[s] = self.record;
    }
}

#[inline]
fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}

#[inline]
fn slot(h: u64, bits: u32) -> usize {
    (h.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> (64 - bits)) as usize
}

/// The slot of a keyed table of 2^`bits` entries for the key stream `key`'s current value
/// and its distance in records.
#[inline]
pub(crate) fn key_slot(h: &History, key: usize, bits: u32) -> usize {
    let distance = (h.record - h.at[key]).min(MAX_DISTANCE);
    slot(mix(mix(0, h.last[key]), distance), bits)
}

/// One predictor with its state.
pub(crate) struct Predictor {
    pub(crate) spec: Spec,
    pub(crate) own: usize,
    table: Vec<u64>,
    /// `Key`, `KeyStride`, `KeyShift`, `KeyDelta`: the index of their keyed table in the
    /// history ([`KeyTable`]).
    key_table: usize,
    deltas: Vec<u64>,
    /// Last `arg` values (fcm) or differences (dfcm), newest first.
    recent: [u64; MAX_ORDER as usize],
    live: Option<Box<LiveList>>,
    /// In place of `live`: its list in the history's shared lists.
    pub(crate) shared: Option<usize>,
    /// `Stack`: the open values.
    stack: Option<Box<OpenStack>>,
    /// `KeyDelta`: the recent differences from the keyed guess.
    recent_deltas: Option<Box<RecentDeltas>>,
    /// `KeyShift`: the last nonzero difference from the keyed guess.
    shift: u64,
    /// `LiveNext`: position the last ended value had.
    last_position: u64,
    /// `Top`: the largest own value so far, and the key stream's value when it was coded.
    top: u64,
    top_key: u64,
    table_bits: u32,
    /// `Reuse` with a key: per slot of a value, (value, key it was created with).
    created: Vec<(u64, u64)>,
    /// `Reuse` with a key: per slot of a key, the ended values created with it (newest last).
    by_key: Vec<Vec<u64>>,
    key_cap: usize,
}

impl Predictor {
    /// A predictor whose tables have 2^`table_bits` slots and whose recency list (of a rank
    /// kind) holds at most `live_cap` values, in `pool` if given; `measuring`: its key lists
    /// are held to the measurement cap.
    /// A keyed kind reads keyed table `key_table` of the history.
    pub(crate) fn new(
        own: usize,
        spec: Spec,
        table_bits: u32,
        measuring: bool,
        live_cap: usize,
        pool: Option<Rc<Pool>>,
        key_table: usize,
    ) -> Predictor {
        Predictor {
            spec,
            own,
            table: if matches!(spec.kind, Kind::Fcm | Kind::Dfcm | Kind::Top) {
                vec![0; 1 << table_bits]
            } else {
                Vec::new()
            },
            key_table,
            deltas: if spec.kind == Kind::KeyStride {
                vec![0; 1 << table_bits]
            } else {
                Vec::new()
            },
            recent: [0; MAX_ORDER as usize],
            live: spec
                .kind
                .holds_values()
                .then(|| Box::new(LiveList::pooled(live_cap, pool))),
            shared: None,
            stack: (spec.kind == Kind::Stack).then(Box::default),
            recent_deltas: (spec.kind == Kind::KeyDelta).then(Box::default),
            shift: 0,
            last_position: 0,
            top: 0,
            top_key: 0,
            table_bits,
            created: if spec.kind == Kind::Reuse && spec.arg as usize != own {
                vec![(0, 0); 1 << table_bits]
            } else {
                Vec::new()
            },
            by_key: if spec.kind == Kind::Reuse && spec.arg as usize != own {
                vec![Vec::new(); 1 << table_bits]
            } else {
                Vec::new()
            },
            key_cap: if measuring {
                MEASURE_REUSE_KEY_CAP
            } else {
                REUSE_KEY_CAP
            },
        }
    }

    /// The values of its recency list, oldest first, if it keeps a list of values: the state
    /// it carries into the next block.
    pub(crate) fn carried(&self) -> Option<Vec<u64>> {
        self.live.as_ref().map(|l| l.oldest_first())
    }

    /// Starts its list from `values` (oldest first), as if they had been inserted in that
    /// order into a list holding at most `cap` values (the oldest dropped beyond it).
    pub(crate) fn seed(&mut self, values: &[u64], cap: usize) {
        if let Some(l) = &mut self.live {
            let mut fresh = l.empty_like(cap);
            for &v in &values[values.len().saturating_sub(cap)..] {
                fresh.insert(v);
            }
            **l = fresh;
        }
    }

    /// Most values its list holds (0 without a list).
    pub(crate) fn list_cap(&self) -> usize {
        self.live.as_ref().map_or(0, |l| l.cap())
    }

    /// Bytes per table slot the predictor `spec` of stream `own` allocates (its tables have
    /// 2^table_bits slots): what bounds the engine's memory.
    pub(crate) fn slot_bytes(own: usize, spec: Spec) -> usize {
        match spec.kind {
            Kind::Fcm | Kind::Dfcm | Kind::Key | Kind::KeyShift | Kind::KeyDelta | Kind::Top => 8,
            Kind::KeyStride => 16,
            // `created` and `by_key`, plus the values a key list holds.
            Kind::Reuse if spec.arg as usize != own => 16 + 24 + 8,
            _ => 0,
        }
    }

    /// Its recency list, own or shared.
    #[inline]
    fn list<'a>(&'a self, h: &'a History) -> Option<&'a LiveList> {
        match self.shared {
            Some(i) => Some(&h.lists[i]),
            None => self.live.as_deref(),
        }
    }

    /// Gives up its own list, to read list `i` of the history's shared lists instead.
    pub(crate) fn share(&mut self, i: usize) -> Option<LiveList> {
        self.shared = Some(i);
        self.live.take().map(|l| *l)
    }

    /// Whether it has anything to update for a value of its own stream (`own`) or of a stream
    /// it watches: with a shared list, only `livenext` (the position of an ended value) and a
    /// keyed `reuse` (its key lists).
    pub(crate) fn observes(&self, own: bool) -> bool {
        self.shared.is_none()
            || match self.spec.kind {
                Kind::LiveNext => own,
                Kind::Reuse => self.keyed(),
                // `live`: the list was all it kept.
                _ => false,
            }
    }

    /// `Reuse`: whether values of the own stream are listed by a key.
    fn keyed(&self) -> bool {
        !self.by_key.is_empty()
    }

    /// `Reuse`: where ranks among all ended values start. A constant (the key lists' cap, not
    /// the current key list's length) so that the same rank among all ended values is the
    /// same symbol whatever the key.
    fn ended_offset(&self) -> u64 {
        if self.keyed() {
            REUSE_KEY_CAP as u64
        } else {
            0
        }
    }

    /// `Reuse`: the list of ended values created with the key stream's current value.
    fn key_list(&self, h: &History) -> &[u64] {
        if !self.keyed() {
            return &[];
        }
        &self.by_key[slot(mix(0, h.last[self.spec.arg as usize]), self.table_bits)]
    }

    /// The stream, other than the own one, whose values this predictor also follows
    /// (`Reuse` follows the streams the engine names instead).
    pub(crate) fn watches(&self) -> Option<usize> {
        matches!(self.spec.kind, Kind::Live | Kind::LiveNext | Kind::Stack)
            .then_some(self.spec.arg as usize)
    }

    fn history_slot(&self) -> usize {
        let mut h = 0;
        for &v in &self.recent[..self.spec.arg as usize] {
            h = mix(h, v);
        }
        slot(h, self.table_bits)
    }

    /// `Top`: the slot of the step that follows the largest value, by the key it came with.
    fn top_slot(&self) -> usize {
        slot(mix(0, self.top_key), self.table_bits)
    }

    fn key_slot(&self, h: &History) -> usize {
        key_slot(h, self.spec.arg as usize, self.table_bits)
    }

    /// A keyed kind: the own stream's last value under the key's current slot, and the slot.
    #[inline]
    fn under_key(&self, h: &History) -> (u64, usize) {
        let i = self.key_slot(h);
        (h.keyed[self.key_table].values[i], i)
    }

    /// Whether `kind` reads a keyed table ([`KeyTable`]).
    pub(crate) fn is_keyed(kind: Kind) -> bool {
        matches!(
            kind,
            Kind::Key | Kind::KeyStride | Kind::KeyShift | Kind::KeyDelta
        )
    }

    /// The guess of a value predictor.
    #[inline]
    pub(crate) fn predict(&self, h: &History) -> u64 {
        let last = h.last[self.own];
        match self.spec.kind {
            Kind::Zero
            | Kind::Live
            | Kind::Mtf
            | Kind::LiveNext
            | Kind::Reuse
            | Kind::KeyDelta
            | Kind::Recent => 0,
            Kind::Last => h.last[self.spec.arg as usize],
            Kind::Stride => last.wrapping_add(last.wrapping_sub(h.prev[self.own])),
            Kind::Sum => last.wrapping_add(h.last[self.spec.arg as usize]),
            Kind::Fcm => self.table[self.history_slot()],
            Kind::Dfcm => last.wrapping_add(self.table[self.history_slot()]),
            Kind::Key => self.under_key(h).0,
            Kind::KeyShift => self.under_key(h).0.wrapping_add(self.shift),
            Kind::Top => self.top.wrapping_add(self.table[self.top_slot()]),
            Kind::Stack => self.stack.as_ref().map_or(0, |s| s.top()),
            Kind::Match => h
                .matcher
                .as_ref()
                .map_or(0, |m| m.guess(self.own, h.record)),
            Kind::KeyStride => {
                let (last, i) = self.under_key(h);
                last.wrapping_add(self.deltas[i])
            }
        }
    }

    /// Rank of `v` in a rank predictor's list.
    #[inline]
    pub(crate) fn rank_of(&self, h: &History, v: u64) -> Option<u64> {
        if let Some(d) = &self.recent_deltas {
            let guess = self.under_key(h).0;
            return d.rank_of(v.wrapping_sub(guess));
        }
        let live = self.list(h)?;
        if self.spec.kind == Kind::Reuse {
            let keyed = self.key_list(h);
            if let Some(i) = keyed.iter().rposition(|&x| x == v) {
                return Some((keyed.len() - 1 - i) as u64);
            }
            return live.rank_of(v).map(|r| self.ended_offset() + r);
        }
        if self.spec.kind == Kind::LiveNext {
            let p = live.position_of(v)?;
            return Some(zigzag(p.wrapping_sub(self.last_position) as i64));
        }
        live.rank_of(v)
    }

    /// The value at `rank` in a rank predictor's list.
    pub(crate) fn at_rank(&self, h: &History, rank: u64) -> Option<u64> {
        if let Some(d) = &self.recent_deltas {
            let guess = self.under_key(h).0;
            return d.at_rank(rank).map(|d| guess.wrapping_add(d));
        }
        let live = self.list(h)?;
        if self.spec.kind == Kind::Reuse {
            let offset = self.ended_offset();
            if rank < offset {
                let keyed = self.key_list(h);
                let r = usize::try_from(rank).ok()?;
                return keyed.len().checked_sub(r + 1).map(|i| keyed[i]);
            }
            return live.at_rank(rank - offset);
        }
        if self.spec.kind == Kind::LiveNext {
            return live.at_position(self.last_position.wrapping_add(unzigzag(rank) as u64));
        }
        live.at_rank(rank)
    }

    /// The own stream took value `v` (history not yet updated; a keyed table still holds the
    /// value before `v`: the engine writes it after every predictor has observed).
    pub(crate) fn observe_own(&mut self, h: &History, v: u64) {
        match self.spec.kind {
            Kind::Fcm => {
                let i = self.history_slot();
                self.table[i] = v;
                self.push_recent(v);
            }
            Kind::Dfcm => {
                let d = v.wrapping_sub(h.last[self.own]);
                let i = self.history_slot();
                self.table[i] = d;
                self.push_recent(d);
            }
            Kind::KeyStride => {
                let (last, i) = self.under_key(h);
                self.deltas[i] = v.wrapping_sub(last);
            }
            Kind::KeyShift => {
                let d = v.wrapping_sub(self.under_key(h).0);
                if d != 0 {
                    self.shift = d;
                }
            }
            Kind::KeyDelta => {
                let d = v.wrapping_sub(self.under_key(h).0);
                if d != 0 {
                    if let Some(l) = &mut self.recent_deltas {
                        l.insert(d);
                    }
                }
            }
            Kind::Top => {
                // Only a new largest value teaches a step: what follows a reused (lower) value
                // says nothing about the end of the highest block.
                if v > self.top {
                    let i = self.top_slot();
                    self.table[i] = v.wrapping_sub(self.top);
                    self.top = v;
                    self.top_key = h.last[self.spec.arg as usize];
                }
            }
            Kind::Live => {
                if let Some(l) = &mut self.live {
                    l.remove(v);
                }
            }
            Kind::LiveNext => {
                if let Some(l) = &mut self.live {
                    if let Some(p) = l.position_of(v) {
                        self.last_position = p;
                        l.remove(v);
                    }
                } else if let Some(p) = self.list(h).and_then(|l| l.position_of(v)) {
                    self.last_position = p;
                }
            }
            Kind::Mtf | Kind::Recent => {
                if let Some(l) = &mut self.live {
                    l.insert(v);
                }
            }
            Kind::Reuse => {
                if let Some(l) = &mut self.live {
                    l.remove(v);
                }
                if self.keyed() {
                    let key = h.last[self.spec.arg as usize];
                    let list = &mut self.by_key[slot(mix(0, key), self.table_bits)];
                    if let Some(i) = list.iter().position(|&x| x == v) {
                        list.remove(i);
                    }
                    self.created[slot(v, self.table_bits)] = (v, key);
                }
            }
            Kind::Stack => {
                if let Some(st) = &mut self.stack {
                    st.close(v);
                }
            }
            Kind::Zero | Kind::Last | Kind::Stride | Kind::Sum | Kind::Key | Kind::Match => {}
        }
    }

    /// The watched stream took value `v` (for `Stack`: `v` opened; for `Reuse`: `v` ended; for
    /// `Recent`: a field of
    /// the own field's name named `v`).
    pub(crate) fn observe_watched(&mut self, v: u64) {
        if let Some(st) = &mut self.stack {
            st.open(v);
        }
        if let Some(l) = &mut self.live {
            l.insert(v);
        }
        if self.keyed() {
            let i = slot(v, self.table_bits);
            let (created, key) = self.created[i];
            if created == v {
                self.created[i] = (0, 0);
                let list = &mut self.by_key[slot(mix(0, key), self.table_bits)];
                if let Some(j) = list.iter().position(|&x| x == v) {
                    list.remove(j);
                }
                list.push(v);
                if list.len() > self.key_cap {
                    list.remove(0);
                }
            }
        }
    }

    fn push_recent(&mut self, v: u64) {
        self.recent.copy_within(0..MAX_ORDER as usize - 1, 1);
        self.recent[0] = v;
    }
}
