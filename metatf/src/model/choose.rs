//! Automatic choice: which predictors each stream gets in a block, by measured cost.
//!
//! Candidates come from the DTD's structure only, most specific first (a stream keeps the first
//! [`super::block`]'s limit of them): the stream's own history (none, delta, stride, fcm and dfcm
//! of orders 1–2, move-to-front), every other field of the same record (sum with it, keyed by
//! it, including the string keys of its byte strings), fields of other records with the same
//! name (their last value, and rank among the values they created: an object reference), the
//! values other records ended (reuse, unkeyed and keyed by each field of the record, and the
//! top of the values so far stepped by each number field of the record), and last
//! every field of the other records of the scope (keyed by it, keyed stride), and then keyed
//! recent differences by each of those fields.

use super::ending::Ending;
use super::predict::{Kind, Spec};
use super::streams::Streams;

/// Longest list of predictors a stream codes hit indices for.
pub(crate) const MAX_LIST: usize = 4;

/// The candidate predictors of stream `s` (a coded stream); `ending` tells which declared
/// ending relations the block bears out and which streams it holds values of.
pub(crate) fn candidates(streams: &Streams, s: usize, ending: &Ending) -> Vec<Spec> {
    let me = &streams.info[s];
    let own = |kind, arg| Spec { kind, arg };
    let mut c = vec![
        own(Kind::Zero, 0),
        own(Kind::Last, s as u32),
        own(Kind::Stride, 0),
        own(Kind::Fcm, 1),
        own(Kind::Fcm, 2),
        own(Kind::Dfcm, 1),
        own(Kind::Dfcm, 2),
        own(Kind::Mtf, 0),
    ];
    // One recency list of a name's values, for a stream that neither has enders nor ends
    // another's values in the block: what it names is not an allocation or a free, which are
    // ranked among the live values (`live`, `reuse`), where a list of every value ever named
    // ranks them dearer. That a stream ends its peers' values the block must bear out: a
    // record with a subset of another's fields need not end what the other names (a method
    // entry's receiver beside an exception's). A stream with enders keeps the declared rule:
    // a creator's values are new when created, and offered `recent` the size fields of
    // records ended only by records that never occur would code them worse.
    let peers = streams.peers(s);
    let ended = !streams.enders(s).is_empty()
        || (ending.bears(s) && peers.iter().any(|&t| streams.enders(t).contains(&s)));
    if !peers.is_empty() && !ended {
        c.push(own(Kind::Recent, s as u32));
    }
    let others = || {
        streams
            .info
            .iter()
            .enumerate()
            .filter(move |&(t, o)| t != s && o.scope == me.scope)
            .map(|(t, o)| (t, t as u32, o, streams.is_string_key(t)))
    };
    for (_, t32, other, key) in others() {
        if other.plan == me.plan {
            if !key {
                c.push(own(Kind::Sum, t32));
            }
            c.push(own(Kind::Key, t32));
        }
    }
    for (t, t32, other, key) in others() {
        if other.plan != me.plan && other.name == me.name && !key {
            c.push(own(Kind::Last, t32));
            c.push(own(Kind::Live, t32));
            c.push(own(Kind::LiveNext, t32));
            // A record with a subset of the other's fields may close what the other opens
            // (an exit, an entry): the innermost value still open. Not for a field of records
            // the block does not hold, whose stack stays empty.
            if ending.present(t) && streams.enders(t).contains(&s) {
                c.push(own(Kind::Stack, t32));
            }
        }
    }
    // Values other records end and this record creates again: unkeyed, and keyed by each
    // other field of the record.
    if !streams.enders(s).is_empty() {
        c.push(own(Kind::Reuse, s as u32));
        for (_, t32, other, _) in others() {
            if other.plan == me.plan {
                c.push(own(Kind::Reuse, t32));
            }
        }
        // The top of the values so far, stepped by what followed the top under another
        // number field's value (a size): a bump allocator's next block. Only for values that
        // other records end, as objects' addresses are: elsewhere these candidates would
        // crowd out the keys by other records' fields below the cut.
        for (_, t32, other, key) in others() {
            if other.plan == me.plan && !key {
                c.push(own(Kind::Top, t32));
            }
        }
    }
    for (_, t32, other, key) in others() {
        if other.plan != me.plan {
            c.push(own(Kind::Key, t32));
            if !key {
                c.push(own(Kind::KeyStride, t32));
            }
        }
    }
    // Last, so that where a DTD has more candidates than are measured, these go first.
    for (_, t32, other, key) in others() {
        if other.plan != me.plan && !key {
            c.push(own(Kind::KeyDelta, t32));
        }
    }
    c
}

/// Per-stream measurements: for sampled values, which candidates hit and what each costs.
pub(crate) struct Samples {
    pub(crate) candidates: usize,
    /// Words of a sample's hit mask: one bit per candidate, so that a stream's candidates are
    /// not bounded by the width of one integer (`match` is measured beside however many
    /// candidates the DTD gives a stream, displacing none).
    words: usize,
    /// Per sample, `words` words: bit `c % 64` of word `c / 64` says whether candidate `c` hit.
    masks: Vec<u64>,
    pub(crate) costs: Vec<u8>,
    /// Per candidate: whether it may only be listed, never the primary: `match`, whose
    /// guess from a record that merely lines up with this one costs little on the sampled
    /// estimate and much as the residual of every miss.
    pub(crate) list_only: Vec<bool>,
}

impl Samples {
    pub(crate) fn new(candidates: usize) -> Samples {
        Samples {
            candidates,
            words: candidates.div_ceil(64).max(1),
            masks: Vec::new(),
            costs: Vec::new(),
            list_only: vec![false; candidates],
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.masks.len() / self.words
    }

    /// Starts a sample that no candidate hits yet; returns its number.
    pub(crate) fn begin(&mut self) -> usize {
        let i = self.len();
        self.masks.resize(self.masks.len() + self.words, 0);
        i
    }

    /// Candidate `c` hits sample `i`.
    #[inline]
    pub(crate) fn set_hit(&mut self, i: usize, c: usize) {
        self.masks[i * self.words + c / 64] |= 1 << (c % 64);
    }

    /// Whether candidate `c` hits sample `i`.
    #[inline]
    fn hit(&self, i: usize, c: usize) -> bool {
        self.masks[i * self.words + c / 64] >> (c % 64) & 1 == 1
    }

    /// Drops every other sample (keeping the second, fourth, ...): the samples that a sampling
    /// period twice as long would have taken, so that a stream's samples stay spread over all
    /// of its values however many there are.
    pub(crate) fn halve(&mut self) {
        let (n, w) = (self.candidates, self.words);
        let kept = self.len() / 2;
        for i in 0..kept {
            let from = 2 * i + 1;
            self.masks.copy_within(from * w..(from + 1) * w, i * w);
            self.costs.copy_within(from * n..(from + 1) * n, i * n);
        }
        self.masks.truncate(kept * w);
        self.costs.truncate(kept * n);
    }

    /// Total sampled cost of candidate `c`.
    pub(crate) fn total(&self, c: usize) -> u64 {
        (0..self.len()).map(|i| u64::from(self.cost(i, c))).sum()
    }

    /// Samples that candidate `c` hits.
    pub(crate) fn hits(&self, c: usize) -> usize {
        (0..self.len()).filter(|&i| self.hit(i, c)).count()
    }

    fn cost(&self, i: usize, c: usize) -> u32 {
        u32::from(self.costs[i * self.candidates + c])
    }

    /// What a list of predictors leaves to the next pick: the samples none of them hits
    /// ([`Partial`]).
    fn partial(&self, list: &[usize], is_rank: &[bool]) -> Partial {
        let mut counts = [0u32; MAX_LIST + 1];
        let mut payload = 0u64;
        let mut missed = Vec::new();
        for i in 0..self.len() {
            match list.iter().position(|&c| self.hit(i, c)) {
                Some(k) => {
                    counts[k] += 1;
                    if is_rank[list[k]] {
                        payload += u64::from(self.cost(i, list[k]));
                    }
                }
                None => missed.push(i as u32),
            }
        }
        Partial {
            len: list.len(),
            counts,
            payload,
            missed,
        }
    }

    /// Estimated bits for coding the samples with `done`'s list, then candidate `next` if
    /// given, and `primary` for the rest.
    fn estimate(
        &self,
        done: &Partial,
        next: Option<usize>,
        primary: usize,
        is_rank: &[bool],
    ) -> f64 {
        let mut counts = done.counts;
        let mut payload = done.payload;
        let mut hits = 0u32;
        for &i in &done.missed {
            let i = i as usize;
            match next {
                Some(c) if self.hit(i, c) => {
                    hits += 1;
                    if is_rank[c] {
                        payload += u64::from(self.cost(i, c));
                    }
                }
                _ => payload += u64::from(self.cost(i, primary)),
            }
        }
        let misses = done.missed.len() as u32 - hits;
        match next {
            Some(_) => {
                counts[done.len] = hits;
                counts[done.len + 1] = misses;
            }
            None => counts[done.len] = misses,
        }
        let n = self.len() as f64;
        let symbols: f64 = counts
            .iter()
            .filter(|&&k| k > 0)
            .map(|&k| -(k as f64) * (k as f64 / n).log2())
            .sum();
        symbols + payload as f64
    }

    /// The cheapest value predictor outside `ban` for the samples that `done`'s list misses.
    fn best_primary(&self, done: &Partial, is_rank: &[bool], ban: &[usize]) -> usize {
        let mut totals = vec![0u64; self.candidates];
        for &i in &done.missed {
            let row = i as usize * self.candidates;
            let costs = &self.costs[row..row + self.candidates];
            for (t, &c) in totals.iter_mut().zip(costs) {
                *t += u64::from(c);
            }
        }
        (0..self.candidates)
            .filter(|&c| !is_rank[c] && !self.list_only[c] && !ban.contains(&c))
            .min_by_key(|&c| totals[c])
            .unwrap_or(0)
    }

    /// Greedy choice among the candidates outside `ban`: the primary predictor, then up to
    /// `max_list` (at most [`MAX_LIST`]) predictors whose hit indices save the most, except
    /// that the `detour`-th pick (from 0) takes the runner-up. Returns (primary, list) as
    /// candidate indices.
    pub(crate) fn choose(
        &self,
        is_rank: &[bool],
        ban: &[usize],
        max_list: usize,
        detour: Option<usize>,
    ) -> (usize, Vec<usize>) {
        if self.len() == 0 {
            return (0, Vec::new());
        }
        let mut list: Vec<usize> = Vec::new();
        let mut done = self.partial(&list, is_rank);
        let mut primary = self.best_primary(&done, is_rank, ban);
        let mut best = self.estimate(&done, None, primary, is_rank);
        while list.len() < max_list.min(MAX_LIST) {
            let mut pick = None;
            let mut runner_up: Option<(usize, f64)> = None;
            for c in 0..self.candidates {
                if list.contains(&c) || ban.contains(&c) {
                    continue;
                }
                let e = self.estimate(&done, Some(c), primary, is_rank);
                if e < best - 8.0 && pick.is_none_or(|(_, b)| e < b) {
                    runner_up = pick;
                    pick = Some((c, e));
                } else if e < best - 8.0 && runner_up.is_none_or(|(_, b)| e < b) {
                    runner_up = Some((c, e));
                }
            }
            if detour == Some(list.len()) && runner_up.is_some() {
                pick = runner_up;
            }
            match pick {
                Some((c, e)) => {
                    list.push(c);
                    best = e;
                }
                None => break,
            }
            done = done.extended(self, list[list.len() - 1], is_rank);
            let p = self.best_primary(&done, is_rank, ban);
            let e = self.estimate(&done, None, p, is_rank);
            if e < best {
                primary = p;
                best = e;
            }
        }
        (primary, list)
    }
}

/// The samples a list of predictors hits, summed up for the greedy choice: each pick then
/// scans only the samples the list misses (their number falls fast as the list grows), and
/// the estimates are those of scanning every sample with the whole list.
struct Partial {
    /// Predictors in the list.
    len: usize,
    /// Per list position: samples whose first hit it is.
    counts: [u32; MAX_LIST + 1],
    /// Rank costs of the samples the list hits.
    payload: u64,
    /// The samples no predictor of the list hits.
    missed: Vec<u32>,
}

impl Partial {
    /// The same for the list with candidate `c` appended.
    fn extended(self, samples: &Samples, c: usize, is_rank: &[bool]) -> Partial {
        let mut counts = self.counts;
        let mut payload = self.payload;
        let mut missed = self.missed;
        let before = missed.len();
        missed.retain(|&i| {
            let hit = samples.hit(i as usize, c);
            if hit && is_rank[c] {
                payload += u64::from(samples.cost(i as usize, c));
            }
            !hit
        });
        counts[self.len] = (before - missed.len()) as u32;
        Partial {
            len: self.len + 1,
            counts,
            payload,
            missed,
        }
    }
}
