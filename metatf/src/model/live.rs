//! A recency list of distinct values with rank lookups both ways, for reference ranks and
//! move-to-front dictionaries: rank 0 is the value inserted last.
//!
//! Values get increasing sequence numbers; a Fenwick tree counts the live ones, so a value's rank
//! is the number of live values with a higher sequence number. When sequence numbers run out the
//! live values are renumbered in order; when the list is full the oldest value is dropped.

use crate::hash::FastMap;

/// Most values a list holds when coding; inserting one more drops the oldest.
pub(crate) const LIVE_CAP: usize = 1 << 16;
/// Most values a list holds while measuring candidates (fewer, to bound memory).
pub(crate) const MEASURE_LIVE_CAP: usize = 1 << 12;

pub(crate) struct LiveList {
    seq_of: FastMap<u64, u32>,
    value_at: Vec<u64>,
    tree: Vec<u32>,
    next: u32,
    count: u32,
    cap: usize,
}

/// Sequence numbers a new list starts with; doubled as needed up to twice its capacity.
const FIRST_SLOTS: usize = 64;

/// Adds `delta` to the count of sequence number `seq` in the Fenwick tree `tree` (one slot
/// more than sequence numbers).
fn fenwick_add(tree: &mut [u32], seq: u32, delta: i32) {
    let slots = tree.len() - 1;
    let mut i = seq as usize + 1;
    while i <= slots {
        tree[i] = tree[i].wrapping_add_signed(delta);
        i += i & i.wrapping_neg();
    }
}

impl LiveList {
    /// An empty list holding at most `cap` values (a power of two).
    pub(crate) fn new(cap: usize) -> Self {
        LiveList {
            cap,
            seq_of: FastMap::default(),
            value_at: vec![0; FIRST_SLOTS],
            tree: vec![0; FIRST_SLOTS + 1],
            next: 0,
            count: 0,
        }
    }

    fn slots(&self) -> usize {
        self.value_at.len()
    }

    fn add(&mut self, seq: u32, delta: i32) {
        fenwick_add(&mut self.tree, seq, delta);
    }

    /// Live values with sequence number ≤ seq.
    fn prefix(&self, seq: u32) -> u32 {
        let mut i = seq as usize + 1;
        let mut s = 0;
        while i > 0 {
            s += self.tree[i];
            i &= i - 1;
        }
        s
    }

    /// Sequence number of the k-th oldest live value (k from 1).
    fn kth(&self, mut k: u32) -> u32 {
        let mut pos = 0usize;
        let slots = self.slots();
        let mut step = slots;
        while step > 0 {
            let next = pos + step;
            if next <= slots && self.tree[next] < k {
                pos = next;
                k -= self.tree[next];
            }
            step >>= 1;
        }
        pos as u32
    }

    /// Rank of `v` (0 = newest), if it is in the list.
    pub(crate) fn rank_of(&self, v: u64) -> Option<u64> {
        let seq = *self.seq_of.get(&v)?;
        Some(u64::from(self.count - self.prefix(seq)))
    }

    /// The value at `rank`, if the list holds that many.
    pub(crate) fn at_rank(&self, rank: u64) -> Option<u64> {
        if rank >= u64::from(self.count) {
            return None;
        }
        let seq = self.kth(self.count - rank as u32);
        Some(self.value_at[seq as usize])
    }

    /// Position of `v` counted from the oldest value (0), if it is in the list.
    pub(crate) fn position_of(&self, v: u64) -> Option<u64> {
        let seq = *self.seq_of.get(&v)?;
        Some(u64::from(self.prefix(seq) - 1))
    }

    /// The value at `position` counted from the oldest (0), if the list holds that many.
    pub(crate) fn at_position(&self, position: u64) -> Option<u64> {
        if position >= u64::from(self.count) {
            return None;
        }
        let seq = self.kth(position as u32 + 1);
        Some(self.value_at[seq as usize])
    }

    /// Removes `v` if present.
    pub(crate) fn remove(&mut self, v: u64) {
        if let Some(seq) = self.seq_of.remove(&v) {
            self.add(seq, -1);
            self.count -= 1;
        }
    }

    /// Puts `v` at rank 0 (moving it there if present).
    pub(crate) fn insert(&mut self, v: u64) {
        // A value already listed moves with one lookup of the map (this runs for every value
        // of a move-to-front list); the numbering is only a relative order, so the newest
        // value need not move at all.
        if let Some(slot) = self.seq_of.get_mut(&v) {
            let seq = *slot;
            if seq + 1 == self.next {
                return;
            }
            if (self.next as usize) < self.value_at.len() {
                let new = self.next;
                *slot = new;
                self.next += 1;
                self.value_at[new as usize] = v;
                fenwick_add(&mut self.tree, seq, -1);
                fenwick_add(&mut self.tree, new, 1);
                return;
            }
            self.remove(v);
        }
        if self.count as usize >= self.cap {
            let oldest = self.kth(1);
            let old = self.value_at[oldest as usize];
            self.remove(old);
        }
        if self.next as usize >= self.slots() {
            if self.slots() < 2 * self.cap {
                // Doubling a Fenwick tree: the new upper half is empty, so only the new root
                // (covering everything) holds a count.
                let n = self.slots();
                self.value_at.resize(2 * n, 0);
                self.tree.resize(2 * n + 1, 0);
                self.tree[2 * n] = self.count;
            } else {
                self.renumber();
            }
        }
        let seq = self.next;
        self.next += 1;
        self.value_at[seq as usize] = v;
        self.seq_of.insert(v, seq);
        self.add(seq, 1);
        self.count += 1;
    }

    fn renumber(&mut self) {
        let mut live: Vec<(u32, u64)> = self.seq_of.iter().map(|(&v, &s)| (s, v)).collect();
        live.sort_unstable();
        self.tree.iter_mut().for_each(|t| *t = 0);
        self.seq_of.clear();
        self.next = 0;
        self.count = 0;
        for (_, v) in live {
            let seq = self.next;
            self.next += 1;
            self.value_at[seq as usize] = v;
            self.seq_of.insert(v, seq);
            self.add(seq, 1);
            self.count += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_recency_and_survive_renumbering() {
        let mut l = LiveList::new(LIVE_CAP);
        let mut model: Vec<u64> = Vec::new(); // newest first
        for i in 0..(6 * LIVE_CAP as u64) {
            let v = (i * 7919) % 1000;
            if i % 5 == 0 {
                l.remove(v);
                model.retain(|&x| x != v);
            } else {
                l.insert(v);
                if i % 3 == 0 {
                    l.insert(v); // the newest again: nothing moves
                }
                model.retain(|&x| x != v);
                model.insert(0, v);
            }
            if i % 997 == 0 {
                for (r, &x) in model.iter().enumerate() {
                    assert_eq!(l.rank_of(x), Some(r as u64));
                    assert_eq!(l.at_rank(r as u64), Some(x));
                    assert_eq!(l.position_of(x), Some((model.len() - 1 - r) as u64));
                }
                assert_eq!(l.at_rank(model.len() as u64), None);
            }
        }
    }

    #[test]
    fn a_full_list_drops_its_oldest_value() {
        let cap = 64;
        let mut l = LiveList::new(cap);
        let mut model: Vec<u64> = Vec::new(); // newest first
        for i in 0..20_000u64 {
            let v = (i * 31 + i / 7) % 150;
            l.insert(v);
            model.retain(|&x| x != v);
            model.insert(0, v);
            model.truncate(cap);
            if i % 101 == 0 {
                for (r, &x) in model.iter().enumerate() {
                    assert_eq!(l.rank_of(x), Some(r as u64));
                    assert_eq!(l.at_position((model.len() - 1 - r) as u64), Some(x));
                }
                assert_eq!(l.at_rank(cap as u64), None);
            }
        }
    }
}
