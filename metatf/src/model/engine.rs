//! The state shared by a block's predictors: the stream history, the predictor instances
//! (one per distinct (stream, predictor)), and who follows which stream.

use std::collections::HashMap;
use std::rc::Rc;

use crate::hash::FastMap;

use super::live::{Pool, LIVE_CAP, MEASURE_LIVE_CAP};
use super::predict::{key_slot, History, KeyTable, Kind, Predictor, Spec};
use super::record_match::RecordMatch;
use super::reorder::Kept;
use super::streams::Streams;

/// Most values a `recent` list holds; one more drops its oldest.
pub(crate) const RECENT_CAP: usize = 1 << 17;

/// The object state that survives a block (docs/FORMAT.md §7 "State carried between blocks"):
/// per (stream, predictor) of the block's model table that keeps a list of values, the list
/// after the block's last record, oldest first. Live objects created in one block are freed
/// in a later one; a list that started empty in every block coded those frees as residuals.
#[derive(Default, Clone)]
pub(crate) struct Carried {
    lists: FastMap<(usize, Spec), Vec<u64>>,
    /// The writer's: the choice the block was coded with, which the next may reuse.
    pub(crate) choice: Option<Kept>,
}

pub(crate) struct Engine {
    pub(crate) history: History,
    pub(crate) predictors: Vec<Predictor>,
    /// Per stream: (predictor, whether the stream is the predictor's own).
    followers: Vec<Vec<(usize, bool)>>,
    index: HashMap<(usize, Spec), usize>,
    /// The keyed table of each (own stream, key stream) in `history.keyed`.
    key_tables: HashMap<(usize, usize), usize>,
    /// Per stream: the keyed tables that store its values.
    keyed_by: Vec<Vec<usize>>,
    /// Per stream: the shared lists (`history.lists`) its values update, each with whether
    /// the list's predictors own the stream (the value ends a listed one) or watch it (the
    /// value enters the list), in the order their followers' updates ran.
    shared_by: Vec<Vec<(usize, bool)>>,
    table_bits: u32,
    /// Whether the engine measures candidates (smaller lists) rather than codes.
    measuring: bool,
    /// Most values the list of a rank predictor created from now on holds.
    live_cap: usize,
    /// Per stream: the streams that end its values for `reuse` ([`Streams::enders`]).
    enders: Vec<Vec<usize>>,
    /// Per stream: the fields of its name in the other records of its scope, whose values
    /// enter its `recent` list ([`Streams::peers`]).
    peers: Vec<Vec<usize>>,
    /// When coding: the bound on the values all lists hold together.
    pool: Option<Rc<Pool>>,
}

/// Whether predictors of `kind` predict from the history alone (their `observe_own` does
/// nothing and they watch no other stream; `Key` reads its keyed table, which the engine
/// writes).
fn reads_only_history(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Zero | Kind::Last | Kind::Stride | Kind::Sum | Kind::Key | Kind::Match
    )
}

/// The predictor whose state `spec` of stream `own` reads, `peers` being `own`'s
/// ([`Streams::peers`]): a `recent` list is the same whatever the key its ranks are coded
/// under (the key is the coder's context), and the same for every field of the name (each
/// value of any of them enters it), so all of them are one predictor of the first of those
/// fields, with one list to carry into the next block.
pub(crate) fn state_of(own: usize, spec: Spec, peers: &[usize]) -> Spec {
    if spec.kind == Kind::Recent {
        let first = peers.iter().copied().fold(own, usize::min);
        Spec {
            kind: Kind::Recent,
            arg: first as u32,
        }
    } else {
        spec
    }
}

impl Engine {
    /// An engine for `streams` streams whose hashed tables have 2^`table_bits` entries, for
    /// measuring candidates or for coding.
    pub(crate) fn new(streams: &Streams, table_bits: u32, measuring: bool) -> Engine {
        let n = streams.with_keys();
        let enders = (0..n).map(|s| streams.enders(s)).collect();
        let peers = (0..n).map(|s| streams.peers(s)).collect();
        Engine {
            history: History::new(n),
            predictors: Vec::new(),
            followers: vec![Vec::new(); n],
            index: HashMap::new(),
            key_tables: HashMap::new(),
            keyed_by: vec![Vec::new(); n],
            shared_by: vec![Vec::new(); n],
            table_bits,
            measuring,
            live_cap: if measuring {
                MEASURE_LIVE_CAP
            } else {
                LIVE_CAP
            },
            enders,
            peers,
            pool: (!measuring).then(|| Pool::new(LIVE_CAP)),
        }
    }

    /// Holds the lists of the rank predictors created from now on to `cap` values (a power
    /// of two), so that measuring many of them stays within a memory bound.
    pub(crate) fn cap_lists(&mut self, cap: usize) {
        self.live_cap = cap;
    }

    /// The predictor `spec` of stream `own`, created on first use.
    pub(crate) fn instance(&mut self, own: usize, spec: Spec) -> usize {
        let spec = state_of(own, spec, &self.peers[own]);
        // A `recent` list belongs to the first field of its name.
        let own = if spec.kind == Kind::Recent {
            spec.arg as usize
        } else {
            own
        };
        if let Some(&i) = self.index.get(&(own, spec)) {
            return i;
        }
        let pool = self.pool.clone();
        // A `recent` list only grows (nothing ends a value in it): held below the shared cap,
        // it cannot crowd out the lists of live objects when the values of a name outnumber
        // them (every address a trace ever names).
        let cap = if spec.kind == Kind::Recent {
            self.live_cap.min(RECENT_CAP)
        } else {
            self.live_cap
        };
        let key_table = if Predictor::is_keyed(spec.kind) {
            self.key_table(own, spec.arg as usize)
        } else {
            0
        };
        let p = Predictor::new(
            own,
            spec,
            self.table_bits,
            self.measuring,
            cap,
            pool,
            key_table,
        );
        if spec.kind == Kind::Match && self.history.matcher.is_none() {
            self.history.matcher = Some(Box::new(RecordMatch::new(self.followers.len())));
        }
        let i = self.predictors.len();
        // Predictors read only the history, which changes after all of them have observed a
        // value, so the order of followers does not matter. Those that read nothing but the
        // history keep no state of their own and need not follow their stream.
        if !reads_only_history(spec.kind) {
            self.followers[own].push((i, true));
        }
        if let Some(w) = p.watches() {
            self.followers[w].push((i, false));
        }
        let watched = match spec.kind {
            Kind::Reuse => &self.enders[own],
            Kind::Recent => &self.peers[own],
            _ => &Vec::new(),
        };
        for &w in watched {
            self.followers[w].push((i, false));
        }
        self.predictors.push(p);
        self.index.insert((own, spec), i);
        i
    }

    /// The keyed table of stream `own`'s values under stream `key`'s, created on first use.
    fn key_table(&mut self, own: usize, key: usize) -> usize {
        if let Some(&t) = self.key_tables.get(&(own, key)) {
            return t;
        }
        let t = self.history.keyed.len();
        self.history.keyed.push(KeyTable {
            key,
            values: vec![0; 1 << self.table_bits],
        });
        self.keyed_by[own].push(t);
        self.key_tables.insert((own, key), t);
        t
    }

    /// Starts the lists of the predictors created so far from the lists `carried` holds for the
    /// same (stream, predictor). A measuring engine gives such a list the room it had when
    /// coding (up to [`LIVE_CAP`]), not its small measuring cap, so the candidate is measured
    /// as it will code.
    pub(crate) fn seed(&mut self, carried: &Carried) {
        for p in &mut self.predictors {
            let Some(values) = carried.lists.get(&(p.own, p.spec)) else {
                continue;
            };
            let mut cap = p.list_cap();
            if self.measuring {
                cap = cap.max(values.len().next_power_of_two().min(LIVE_CAP));
            }
            p.seed(values, cap);
        }
        if self.pool.is_none() {
            self.share_lists();
        }
    }

    /// Makes the predictors whose lists hold the same values share one list: `live` and
    /// `livenext` of a stream watching the same stream (both list the values it created that
    /// the own stream has not ended yet), and every `reuse` of a stream (each lists the values
    /// its enders ended that the own stream has not created again). A measuring engine has
    /// several of each per stream and every value would otherwise enter each list alike.
    /// Only lists of the same capacity starting from the same values, and only without a
    /// pool: a pool's full lists drop their oldest values depending on the others' order.
    fn share_lists(&mut self) {
        let mut groups: HashMap<(usize, Kind, u32), Vec<usize>> = HashMap::new();
        for (i, p) in self.predictors.iter().enumerate() {
            if p.shared.is_some() {
                continue;
            }
            let group = match p.spec.kind {
                Kind::Live | Kind::LiveNext if p.spec.arg as usize != p.own => {
                    (p.own, Kind::Live, p.spec.arg)
                }
                Kind::Reuse => (p.own, Kind::Reuse, 0),
                _ => continue,
            };
            groups.entry(group).or_default().push(i);
        }
        let mut groups: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
        // In creation order, so that the shared lists are numbered the same in every run.
        groups.sort_unstable();
        for group in groups {
            let first = &self.predictors[group[0]];
            let (values, cap) = (first.carried(), first.list_cap());
            let alike = group[1..].iter().all(|&i| {
                let p = &self.predictors[i];
                p.list_cap() == cap && p.carried() == values
            });
            if !alike {
                continue;
            }
            let l = self.history.lists.len();
            for (x, followers) in self.followers.iter().enumerate() {
                for &(i, own) in followers {
                    if i == group[0] {
                        self.shared_by[x].push((l, own));
                    }
                }
            }
            let mut list = None;
            for &i in &group {
                list = list.or(self.predictors[i].share(l));
            }
            if let Some(list) = list {
                self.history.lists.push(list);
            }
        }
        // A sharing predictor's own update of its list is the engine's now: most of them have
        // nothing left to do for a value, and need not be called for it.
        let predictors = &self.predictors;
        for followers in &mut self.followers {
            followers.retain(|&(i, own)| predictors[i].observes(own));
        }
    }

    /// The lists this engine's predictors hold now, to carry into the next block.
    pub(crate) fn carry(&self) -> Carried {
        let lists = self
            .predictors
            .iter()
            .filter_map(|p| Some(((p.own, p.spec), p.carried()?)))
            .collect();
        Carried {
            lists,
            choice: None,
        }
    }

    /// Stream `s` took value `v`: every follower updates, then the keyed tables and the
    /// history.
    #[inline]
    pub(crate) fn observe(&mut self, s: usize, v: u64) {
        for &(i, own) in &self.followers[s] {
            let p = &mut self.predictors[i];
            if own {
                p.observe_own(&self.history, v);
            } else {
                p.observe_watched(v);
            }
        }
        for &(l, own) in &self.shared_by[s] {
            let list = &mut self.history.lists[l];
            if own {
                list.remove(v);
            } else {
                list.insert(v);
            }
        }
        for &t in &self.keyed_by[s] {
            let i = key_slot(&self.history, self.history.keyed[t].key, self.table_bits);
            self.history.keyed[t].values[i] = v;
        }
        if let Some(m) = &mut self.history.matcher {
            m.observe(s, v);
        }
        self.history.update(s, v);
    }

    /// The value of stream `s` in the record the record match names for the current record,
    /// when the block keeps a record match (some stream's predictors name `match`) and the
    /// match held on the previous record: a byte string's first candidate, which a match
    /// that merely follows an old alignment would take from the field's successor.
    pub(crate) fn matched(&self, s: usize) -> Option<u64> {
        let m = self.history.matcher.as_ref()?;
        m.holding().then(|| m.matched(s, self.history.record))?
    }

    /// The record being coded is complete: the next one begins.
    pub(crate) fn end_record(&mut self) {
        if let Some(m) = &mut self.history.matcher {
            m.end_record(self.history.record);
        }
        self.history.record += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::live::LIVE_CAP;
    use super::super::predict::{Kind, Spec};
    use super::super::recent_tests::Fixture;
    use super::{Carried, Engine};

    /// A measuring engine's shared lists and keyed tables give every predictor the same
    /// guesses and ranks, value after value, as an engine holding that predictor alone.
    #[test]
    fn shared_state_predicts_as_separate_state() {
        let f = Fixture::with_dtd(
            "tag.width = 1;
             size.width = 4; size.interpretation = none;
             ptr.width = 8;  ptr.interpretation = none;
             section heap 1 {
                 alloc : (tag, size, ptr) { tag.value = 4; }
                 free  : (tag, ptr)       { tag.value = 5; }
             }",
        );
        let (size, ptr, freed) = (f.stream(4, "size"), f.stream(4, "ptr"), f.stream(5, "ptr"));
        let spec = |kind, arg: usize| Spec {
            kind,
            arg: arg as u32,
        };
        let specs = [
            (freed, spec(Kind::Live, ptr)),
            (freed, spec(Kind::LiveNext, ptr)),
            (ptr, spec(Kind::Reuse, ptr)),
            (ptr, spec(Kind::Reuse, size)),
            (ptr, spec(Kind::Key, size)),
            (ptr, spec(Kind::KeyStride, size)),
            (ptr, spec(Kind::KeyShift, size)),
            (ptr, spec(Kind::KeyDelta, size)),
        ];
        let mut shared = Engine::new(&f.streams, 10, true);
        shared.cap_lists(LIVE_CAP);
        let mut alone: Vec<Engine> = Vec::new();
        let mut pairs = Vec::new();
        for &(own, s) in &specs {
            let mut e = Engine::new(&f.streams, 10, true);
            e.cap_lists(LIVE_CAP);
            pairs.push((own, shared.instance(own, s), e.instance(own, s)));
            e.seed(&Carried::default());
            assert!(e.history.lists.is_empty(), "alone, nothing to share");
            alone.push(e);
        }
        shared.seed(&Carried::default());
        assert_eq!(
            shared.history.lists.len(),
            2,
            "live and livenext; the reuses"
        );
        assert_eq!(shared.history.keyed.len(), 1);
        // Allocations of a few sizes, each block freed a while later, the freed addresses
        // taken again.
        let mut x = 12345u64;
        let mut live: Vec<u64> = Vec::new();
        let mut free_addresses: Vec<u64> = Vec::new();
        let mut next = 0x1000u64;
        for _ in 0..4000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let record: Vec<(usize, u64)> = if live.len() > 40 || (x >> 60) < 6 && !live.is_empty()
            {
                let v = live.remove((x >> 33) as usize % live.len());
                free_addresses.push(v);
                vec![(freed, v)]
            } else {
                let sz = 16 << ((x >> 40) % 4);
                let p = if (x >> 50).is_multiple_of(3) && !free_addresses.is_empty() {
                    free_addresses.remove((x >> 20) as usize % free_addresses.len())
                } else {
                    next += sz;
                    next
                };
                live.push(p);
                vec![(size, sz), (ptr, p)]
            };
            for e in std::iter::once(&mut shared).chain(&mut alone) {
                e.history.record += 1;
            }
            for (s, v) in record {
                for (&(own, a, b), e) in pairs.iter().zip(&alone) {
                    if own != s {
                        continue;
                    }
                    let (pa, pb) = (&shared.predictors[a], &e.predictors[b]);
                    assert_eq!(pa.predict(&shared.history), pb.predict(&e.history));
                    assert_eq!(
                        pa.rank_of(&shared.history, v),
                        pb.rank_of(&e.history, v),
                        "{:?}",
                        pa.spec
                    );
                }
                for e in std::iter::once(&mut shared).chain(&mut alone) {
                    e.observe(s, v);
                }
            }
        }
    }
}
