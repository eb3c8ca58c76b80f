//! A recency list of distinct values with rank lookups both ways, for reference ranks and
//! move-to-front dictionaries: rank 0 is the value inserted last.
//!
//! Values get increasing sequence numbers; a Fenwick tree counts the live ones, so a value's rank
//! is the number of live values with a higher sequence number. When sequence numbers run out the
//! live values are renumbered in order; when the list is full the oldest value is dropped.
//! The lists of one coding engine share a [`Pool`]: together they hold at most
//! [`LIVE_CAP`] values, so one list may hold every live object of a trace when the others are
//! small, and the memory of all of them stays bounded whatever the DTD.

use std::cell::Cell;
use std::rc::Rc;

/// Most values the lists of a coding engine hold together (and one list alone); a value
/// entering a list when they hold that many drops that list's oldest. 2^19 values take about
/// 32 MiB, within the memory bound, and hold the live allocations of ordinary programs.
pub(crate) const LIVE_CAP: usize = 1 << 19;
/// Most values a list holds while measuring candidates (fewer, to bound memory).
pub(crate) const MEASURE_LIVE_CAP: usize = 1 << 12;

/// The count of values held by every list of one engine, against the most they may hold.
pub(crate) struct Pool {
    held: Cell<usize>,
    most: usize,
}

impl Pool {
    /// A pool of at most `most` values, for the lists of one engine.
    pub(crate) fn new(most: usize) -> Rc<Pool> {
        Rc::new(Pool {
            held: Cell::new(0),
            most,
        })
    }

    fn full(&self) -> bool {
        self.held.get() >= self.most
    }

    fn add(&self, delta: isize) {
        self.held.set(self.held.get().wrapping_add_signed(delta));
    }
}

/// Where each listed value's sequence number is: an open-addressed table (linear probing) of
/// sequence numbers + 1 (0: empty), the value read back from the list's `value_at`. Four bytes
/// a slot, at most half full, where a hash map of (value, number) took about 30 bytes a value:
/// with lists holding hundreds of thousands of live objects, that is what bounds memory.
#[derive(Default)]
struct SeqIndex {
    slots: Vec<u32>,
    len: usize,
}

impl SeqIndex {
    fn home(&self, v: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// The slot holding `v`'s number, if listed.
    fn find(&self, v: u64, value_at: &[u64]) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(v);
        loop {
            let e = self.slots[i];
            if e == 0 {
                return None;
            }
            if value_at[e as usize - 1] == v {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    fn get(&self, v: u64, value_at: &[u64]) -> Option<u32> {
        self.find(v, value_at).map(|i| self.slots[i] - 1)
    }

    /// Lists `v` (not listed yet, `value_at[seq] == v`) under `seq`.
    fn insert(&mut self, v: u64, seq: u32, value_at: &[u64]) {
        if 2 * (self.len + 1) > self.slots.len() {
            let old = std::mem::take(&mut self.slots);
            self.slots = vec![0; (old.len() * 2).max(64)];
            self.len = 0;
            for e in old.into_iter().filter(|&e| e != 0) {
                self.insert(value_at[e as usize - 1], e - 1, value_at);
            }
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(v);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = seq + 1;
        self.len += 1;
    }

    /// Unlists the value in slot `i`, shifting back the ones probed past it.
    fn remove_at(&mut self, mut i: usize, value_at: &[u64]) {
        let mask = self.slots.len() - 1;
        self.slots[i] = 0;
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.slots[j];
            if e == 0 {
                return;
            }
            let k = self.home(value_at[e as usize - 1]);
            // The entry at j may move to i when its home is not cyclically within (i, j].
            let stays = if i <= j {
                i < k && k <= j
            } else {
                i < k || k <= j
            };
            if !stays {
                self.slots[i] = e;
                self.slots[j] = 0;
                i = j;
            }
        }
    }

    fn clear(&mut self) {
        self.slots.iter_mut().for_each(|e| *e = 0);
        self.len = 0;
    }
}

pub(crate) struct LiveList {
    seq_of: SeqIndex,
    value_at: Vec<u64>,
    tree: Vec<u32>,
    next: u32,
    count: u32,
    cap: usize,
    pool: Option<Rc<Pool>>,
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
    #[cfg(test)]
    pub(crate) fn new(cap: usize) -> Self {
        Self::pooled(cap, None)
    }

    /// An empty list holding at most `cap` values (a power of two), and none beyond the
    /// oldest while `pool`'s lists hold as many as it allows.
    pub(crate) fn pooled(cap: usize, pool: Option<Rc<Pool>>) -> Self {
        LiveList {
            cap,
            pool,
            seq_of: SeqIndex::default(),
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
        let seq = self.seq_of.get(v, &self.value_at)?;
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
        let seq = self.seq_of.get(v, &self.value_at)?;
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

    /// The values held, oldest first: what a list carried into the next block is rebuilt from
    /// (inserting them in this order gives the same ranks).
    pub(crate) fn oldest_first(&self) -> Vec<u64> {
        (1..=self.count)
            .map(|k| self.value_at[self.kth(k) as usize])
            .collect()
    }

    /// An empty list of at most `cap` values in the same pool (to replace this one while it is
    /// empty).
    pub(crate) fn empty_like(&self, cap: usize) -> LiveList {
        LiveList::pooled(cap, self.pool.clone())
    }

    /// Most values the list holds.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Removes `v` if present.
    pub(crate) fn remove(&mut self, v: u64) {
        if let Some(i) = self.seq_of.find(v, &self.value_at) {
            let seq = self.seq_of.slots[i] - 1;
            self.seq_of.remove_at(i, &self.value_at);
            self.add(seq, -1);
            self.count -= 1;
            if let Some(p) = &self.pool {
                p.add(-1);
            }
        }
    }

    /// Puts `v` at rank 0 (moving it there if present).
    pub(crate) fn insert(&mut self, v: u64) {
        // A value already listed moves with one lookup of the map (this runs for every value
        // of a move-to-front list); the numbering is only a relative order, so the newest
        // value need not move at all.
        if let Some(i) = self.seq_of.find(v, &self.value_at) {
            let seq = self.seq_of.slots[i] - 1;
            if seq + 1 == self.next {
                return;
            }
            if (self.next as usize) < self.value_at.len() {
                let new = self.next;
                self.seq_of.slots[i] = new + 1;
                self.next += 1;
                self.value_at[new as usize] = v;
                fenwick_add(&mut self.tree, seq, -1);
                fenwick_add(&mut self.tree, new, 1);
                return;
            }
            self.remove(v);
        }
        let pool_full = self.pool.as_ref().is_some_and(|p| p.full());
        if self.count as usize >= self.cap || (pool_full && self.count > 0) {
            let oldest = self.kth(1);
            let old = self.value_at[oldest as usize];
            self.remove(old);
        }
        if self.next as usize >= self.slots() {
            // Sequence numbers are only a relative order: a list at most three quarters full
            // is renumbered rather than grown, so a small move-to-front list takes little memory
            // however many values pass through it.
            if self.slots() < 2 * self.cap && 4 * self.count as usize > 3 * self.slots() {
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
        self.seq_of.insert(v, seq, &self.value_at);
        self.add(seq, 1);
        self.count += 1;
        if let Some(p) = &self.pool {
            p.add(1);
        }
    }

    /// Numbers the live values 0, 1, ... in their order. This runs every few dozen inserts
    /// of a small move-to-front list, so it neither sorts nor builds a list of pairs: the
    /// index's entries mark the live sequence numbers, `value_at` is compacted in place in
    /// their order, and the tree of `count` live values at the front is written directly.
    fn renumber(&mut self) {
        let mut live = vec![0u64; self.slots().div_ceil(64)];
        for &e in &self.seq_of.slots {
            if e != 0 {
                let seq = e as usize - 1;
                live[seq / 64] |= 1 << (seq % 64);
            }
        }
        let mut n = 0;
        for (w, &bits) in live.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let seq = w * 64 + bits.trailing_zeros() as usize;
                self.value_at[n] = self.value_at[seq];
                n += 1;
                bits &= bits - 1;
            }
        }
        self.seq_of.clear();
        for seq in 0..n {
            self.seq_of
                .insert(self.value_at[seq], seq as u32, &self.value_at);
        }
        // Tree slot i counts the live values among positions (i - lowest bit of i, i].
        for (i, t) in self.tree.iter_mut().enumerate().skip(1) {
            *t = i.min(n).saturating_sub(i - (i & i.wrapping_neg())) as u32;
        }
        self.next = n as u32;
        self.count = n as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_recency_and_survive_renumbering() {
        let cap = 1 << 16;
        let mut l = LiveList::new(cap);
        let mut model: Vec<u64> = Vec::new(); // newest first
        for i in 0..(6 * cap as u64) {
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

    #[test]
    fn pooled_lists_hold_at_most_the_pool_together_and_list_oldest_first() {
        let pool = Pool::new(100);
        let mut a = LiveList::pooled(1 << 10, Some(pool.clone()));
        let mut b = LiveList::pooled(1 << 10, Some(pool.clone()));
        for v in 0..80u64 {
            a.insert(v);
        }
        for v in 0..50u64 {
            b.insert(1000 + v);
        }
        // b filled the pool at its 20th value; each later one dropped b's own oldest.
        assert_eq!(pool.held.get(), 100);
        assert_eq!(a.oldest_first(), (0..80).collect::<Vec<u64>>());
        assert_eq!(b.oldest_first(), (1030..1050).collect::<Vec<u64>>());
        a.remove(5);
        b.insert(7);
        assert_eq!(pool.held.get(), 100);
        assert_eq!(b.at_rank(0), Some(7));
        assert_eq!(b.rank_of(1049), Some(1));
    }
}
