//! A decoder's older objects: a list in the order they entered, read by rank from the newest.
//!
//! A reference to an object past the move-to-front array names its rank among the older
//! objects counted from the newest, and most such ranks are small. The shared live set the
//! encoder uses ([`crate::shared::live_set::LiveSet`], through [`super::live::LiveSet`])
//! keeps a table from id to place, updated twice per reference, which a decoder that reads by
//! rank does not need; and its rank-only form cannot find an object by id at all, which a
//! decoder must do, rarely, for an id allocated again. Here one bit per place says whether its
//! object is still in the list, with a count per word of bits and per run of [`RUN`] places,
//! so that a rank from the newest end is found by counting backwards from there: runs, at
//! most eight words, then the bit within the word (the live set's [`select_from_top`]). An
//! object is found by id by a bounded search, and by a table only when searches grow long.

use crate::shared::live_set::select_from_top;
use metatf::hash::FastMap;

/// Places per count in [`RankList::runs`] (eight words of bits).
const RUN: usize = 512;

/// Places [`RankList::remove`] may search, in all, per place made, before it keeps a table
/// from id to place instead (a crafted file asking for old objects again and again would
/// otherwise cost a search of the whole list each time).
const SEARCH_PER_PLACE: usize = 16;

/// Places always allowed before the list is compacted.
const COMPACT_SLACK: usize = 4 * RUN;

/// Ids in the order they entered, with removal by rank from the newest.
#[derive(Default)]
pub struct RankList {
    /// The id at each place, oldest first.
    ids: Vec<u64>,
    /// One bit per place (bit `p % 64` of word `p / 64`): set while its id is in the list.
    bits: Vec<u64>,
    /// How many bits are set in each word of `bits`.
    word_counts: Vec<u8>,
    /// How many bits are set in each run of [`RUN`] places.
    runs: Vec<u32>,
    /// How many ids are in the list.
    len: usize,
    /// The place of each id in the list, once searches have cost too much.
    index: Option<FastMap<u64, usize>>,
    /// Places searched by [`RankList::remove`] since the list was cleared.
    searched: usize,
    /// Places made since the list was cleared.
    made: usize,
}

impl RankList {
    /// Number of ids in the list.
    pub fn len(&self) -> u64 {
        self.len as u64
    }

    /// Forgets every id, keeping the memory.
    pub fn clear(&mut self) {
        self.ids.clear();
        self.bits.clear();
        self.word_counts.clear();
        self.runs.clear();
        self.len = 0;
        self.index = None;
        self.searched = 0;
        self.made = 0;
    }

    /// Puts `obj` at the newest end.
    ///
    /// Inlined, with all that is rarely done (a compaction, a new word of bits, a vector's
    /// growth, the table) out of line in [`RankList::push_slow`]: with it inline, the caller
    /// (every object put in front of a decoder's list once it is full) saved and restored six
    /// registers for calls it seldom made.
    #[inline(always)]
    pub fn push(&mut self, obj: u64) {
        let p = self.ids.len();
        let compact = p >= 2 * self.len + COMPACT_SLACK;
        if compact || p.is_multiple_of(64) || p == self.ids.capacity() || self.index.is_some() {
            self.push_slow(obj);
            return;
        }
        // (Room checked above: no growth path.)
        if p < self.ids.capacity() {
            self.ids.push(obj);
        }
        self.mark(p);
    }

    /// [`RankList::push`] when something rare must be done first or after.
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, obj: u64) {
        if self.ids.len() >= 2 * self.len + COMPACT_SLACK {
            self.compact();
        }
        let p = self.ids.len();
        self.ids.push(obj);
        if p.is_multiple_of(64) {
            self.bits.push(0);
            self.word_counts.push(0);
        }
        if p.is_multiple_of(RUN) {
            self.runs.push(0);
        }
        self.mark(p);
        if let Some(index) = &mut self.index {
            index.insert(obj, p);
        }
    }

    /// Counts the id just put at `place` as in the list.
    #[inline(always)]
    fn mark(&mut self, place: usize) {
        self.bits[place / 64] |= 1 << (place % 64);
        self.word_counts[place / 64] += 1;
        self.runs[place / RUN] += 1;
        self.len += 1;
        self.made += 1;
    }

    /// Whether the id at `place` is in the list.
    fn holds(&self, place: usize) -> bool {
        self.bits[place / 64] & (1 << (place % 64)) != 0
    }

    /// Removes the id at `place`, which is in the list.
    ///
    /// Inlined into its callers, with the table (rarely built) updated out of line: inlined
    /// whole, the table's code would make this a call for every old object a decoder takes back.
    #[inline]
    fn remove_at(&mut self, place: usize) -> u64 {
        self.bits[place / 64] &= !(1 << (place % 64));
        self.word_counts[place / 64] -= 1;
        self.runs[place / RUN] -= 1;
        self.len -= 1;
        let obj = self.ids[place];
        if self.index.is_some() {
            self.unindex(obj, place);
        }
        obj
    }

    /// Drops `obj` at `place` from the table from id to place, if the table names it there.
    #[cold]
    #[inline(never)]
    fn unindex(&mut self, obj: u64, place: usize) {
        if let Some(index) = &mut self.index {
            if index.get(&obj) == Some(&place) {
                index.remove(&obj);
            }
        }
    }

    /// Removes and returns the id of rank `rank` counted from the newest (0 = the newest).
    pub fn take_from_newest(&mut self, rank: u64) -> Option<u64> {
        let mut left = usize::try_from(rank).ok().filter(|&r| r < self.len)?;
        // Whole runs, newest first; then the words of the run that holds it; then its bytes.
        let mut run = self.runs.len();
        loop {
            run = run.checked_sub(1)?;
            let c = self.runs[run] as usize;
            if left < c {
                break;
            }
            left -= c;
        }
        let first = run * (RUN / 64);
        let mut word = (first + RUN / 64).min(self.bits.len());
        loop {
            word = word.checked_sub(1).filter(|&w| w >= first)?;
            let c = usize::from(self.word_counts[word]);
            if left < c {
                break;
            }
            left -= c;
        }
        // The word's count is its number of set bits, so `left` is below it.
        let count = usize::from(self.word_counts[word]);
        let place = word * 64 + select_from_top(self.bits[word], count, left) as usize;
        Some(self.remove_at(place))
    }

    /// How many ids in the list are newer than the one at `place`.
    fn newer_than(&self, place: usize) -> u64 {
        let word = place / 64;
        let above = match place % 64 {
            63 => 0,
            bit => (self.bits[word] >> (bit + 1)).count_ones() as usize,
        };
        let run_end = ((place / RUN + 1) * (RUN / 64)).min(self.bits.len());
        let words: usize = self.word_counts[word + 1..run_end]
            .iter()
            .map(|&c| usize::from(c))
            .sum();
        let runs: u64 = self.runs[place / RUN + 1..]
            .iter()
            .map(|&c| u64::from(c))
            .sum();
        (above + words) as u64 + runs
    }

    /// Removes `obj` if it is in the list and returns its rank from the newest. A search from
    /// the newest end: a decoder asks this only of an allocated object it has seen before (an
    /// id used again, rare); past [`SEARCH_PER_PLACE`] places per place made, a table.
    pub fn remove(&mut self, obj: u64) -> Option<u64> {
        if self.index.is_none() && self.searched > SEARCH_PER_PLACE * self.made {
            self.build_index();
        }
        let place = match &self.index {
            Some(index) => *index.get(&obj)?,
            None => {
                let found = (0..self.ids.len())
                    .rev()
                    .find(|&p| self.ids[p] == obj && self.holds(p));
                self.searched += self.ids.len() - found.unwrap_or(0);
                found?
            }
        };
        let rank = self.newer_than(place);
        self.remove_at(place);
        Some(rank)
    }

    /// Builds the table from id to place (the newest place of an id, as a search finds).
    #[cold]
    fn build_index(&mut self) {
        let mut index = FastMap::default();
        for (p, &obj) in self.ids.iter().enumerate() {
            if self.holds(p) {
                index.insert(obj, p);
            }
        }
        self.index = Some(index);
    }

    /// Moves the ids still in the list, in order, to the first places.
    fn compact(&mut self) {
        let mut kept = 0usize;
        for p in 0..self.ids.len() {
            if self.holds(p) {
                self.ids[kept] = self.ids[p];
                kept += 1;
            }
        }
        self.ids.truncate(kept);
        self.bits.clear();
        self.bits.resize(kept.div_ceil(64), u64::MAX);
        self.word_counts.clear();
        self.word_counts.resize(kept.div_ceil(64), 64);
        if !kept.is_multiple_of(64) {
            if let Some(last) = self.bits.last_mut() {
                *last = (1u64 << (kept % 64)) - 1;
            }
            if let Some(last) = self.word_counts.last_mut() {
                *last = (kept % 64) as u8;
            }
        }
        self.runs.clear();
        self.runs
            .extend((0..kept.div_ceil(RUN)).map(|r| (kept - r * RUN).min(RUN) as u32));
        if self.index.is_some() {
            self.build_index();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain vector: pushes, removals by rank from the newest (mostly small, some
    /// large, some past the end) and by id, across compactions and a clear; by id first with
    /// searches (ids near the newest end), then any id (most not there, so that the searches
    /// cost enough to switch to the table); and with the table from the start.
    #[test]
    fn agrees_with_a_vector() {
        for table in [false, true] {
            agrees_with_a_vector_from(table);
        }
    }

    fn agrees_with_a_vector_from(table: bool) {
        let mut list = RankList::default();
        if table {
            list.build_index();
        }
        let mut want: Vec<u64> = Vec::new();
        let mut x = 11u64;
        let mut next_id = 1u64;
        for step in 0..300_000u64 {
            if step == 150_000 {
                list.clear();
                want.clear();
                if table {
                    list.build_index();
                }
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match (x >> 59) % 8 {
                // Grow for a while, then mostly shrink, so that compactions happen.
                0..=3 if step % 60_000 < 40_000 || (x >> 40).is_multiple_of(4) => {
                    list.push(next_id);
                    want.push(next_id);
                    next_id += 1;
                }
                0..=5 => {
                    let n = want.len() as u64;
                    let rank = match (x >> 30) % 4 {
                        0 => (x >> 8) % (n + 2),
                        _ => (x >> 8) % 100,
                    };
                    let expect = (rank < n).then(|| want.remove((n - 1 - rank) as usize));
                    assert_eq!(list.take_from_newest(rank), expect, "step {step}");
                }
                _ => {
                    let obj = match step < 150_000 {
                        true => want
                            .len()
                            .checked_sub(1 + (x >> 8) as usize % 40)
                            .map_or(0, |p| want[p]),
                        false => (x >> 8) % (next_id + 3),
                    };
                    let expect = want.iter().rposition(|&o| o == obj).map(|p| {
                        want.remove(p);
                        (want.len() - p) as u64
                    });
                    assert_eq!(list.remove(obj), expect, "step {step}");
                }
            }
            assert_eq!(list.len(), want.len() as u64);
        }
        assert!(
            list.index.is_some(),
            "searches of the whole list switch to a table"
        );
    }
}
