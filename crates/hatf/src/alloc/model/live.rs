//! The set of live blocks in allocation order, so a free can be coded as "the k-th newest live
//! block" instead of an address.
//!
//! Blocks get consecutive sequence numbers; a Fenwick tree over the numbers counts live blocks so
//! both the rank of a block and the block of a rank take O(log n). When dead numbers outweigh live
//! ones the numbering is compacted, which keeps memory proportional to the live set (encoder and
//! decoder compact at the same moments, so ranks agree).

use crate::alloc::fast_hash::FastMap;

/// Live blocks ordered by allocation, each with its size (kept here so the model needs one
/// map lookup per block event, not two).
#[derive(Debug, Default)]
pub struct LiveSet {
    /// Address → sequence number and size of the live block at that address.
    seq_of: FastMap<u64, (usize, u64)>,
    /// Sequence number → address (stale for dead numbers).
    addr_of: Vec<u64>,
    /// Fenwick tree (1-based) of live flags over sequence numbers.
    tree: Vec<u32>,
    /// Live flag per sequence number.
    alive: Vec<bool>,
    live: usize,
}

impl LiveSet {
    /// An empty set.
    pub fn new() -> Self {
        LiveSet::default()
    }

    /// Number of live blocks.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when no block is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// True when `addr` is a live block.
    pub fn contains(&self, addr: u64) -> bool {
        self.seq_of.contains_key(&addr)
    }

    /// Adds a block of `size` bytes as the newest; an address already live is first removed (a
    /// trace may allocate twice without a free in between, e.g. after lost records).
    pub fn insert_sized(&mut self, addr: u64, size: u64) {
        if self.addr_of.len() >= 1024 && self.addr_of.len() >= 2 * self.live + 1024 {
            self.compact();
        }
        let seq = self.addr_of.len();
        if let Some((old, _)) = self.seq_of.insert(addr, (seq, size)) {
            // Only the order of live blocks matters, so retiring the old number after the
            // compaction check gives the same ranks as retiring it before.
            self.retire(old);
        }
        self.addr_of.push(addr);
        self.alive.push(true);
        self.tree.push(0);
        // A new Fenwick node covers (seq+1 - lowbit(seq+1), seq+1]; fill it from its children.
        let i = seq + 1;
        let low = i & i.wrapping_neg();
        let mut sum = 1u32;
        let mut j = i - 1;
        while j > i - low {
            sum += self.tree[j - 1];
            j -= j & j.wrapping_neg();
        }
        self.tree[seq] = sum;
        self.live += 1;
    }

    fn retire(&mut self, seq: usize) {
        self.add(seq, -1);
        self.alive[seq] = false;
        self.live -= 1;
    }

    /// Adds a block as the newest, with size 0 (see [`LiveSet::insert_sized`]).
    pub fn insert(&mut self, addr: u64) {
        self.insert_sized(addr, 0);
    }

    /// Removes `addr`; returns its rank counted from the newest (0 = newest), or `None` if it
    /// was not live.
    pub fn remove(&mut self, addr: u64) -> Option<usize> {
        self.remove_sized(addr).map(|(rank, _)| rank)
    }

    /// Removes the block of rank `rank` (0 = newest) and returns its address.
    pub fn remove_rank(&mut self, rank: usize) -> Option<u64> {
        self.remove_rank_sized(rank).map(|(addr, _)| addr)
    }

    /// Removes `addr`; returns its rank counted from the newest (0 = newest) and its size, or
    /// `None` if it was not live.
    pub fn remove_sized(&mut self, addr: u64) -> Option<(usize, u64)> {
        let (seq, size) = self.seq_of.remove(&addr)?;
        let older_or_same = self.prefix(seq + 1);
        let rank = self.live - older_or_same;
        self.retire(seq);
        Some((rank, size))
    }

    /// Removes the block of rank `rank` (0 = newest) and returns its address and size.
    pub fn remove_rank_sized(&mut self, rank: usize) -> Option<(u64, u64)> {
        if rank >= self.live {
            return None;
        }
        // The (live - rank)-th live block counted from the oldest, found by descending the tree.
        let mut want = (self.live - rank) as u32;
        let n = self.tree.len();
        let mut pos = 0usize;
        let mut step = n.next_power_of_two();
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next - 1] < want {
                pos = next;
                want -= self.tree[next - 1];
            }
            step >>= 1;
        }
        let addr = *self.addr_of.get(pos)?;
        let (seq, size) = self.seq_of.remove(&addr)?;
        self.retire(seq);
        Some((addr, size))
    }

    fn prefix(&self, mut i: usize) -> usize {
        let mut s = 0usize;
        while i > 0 {
            s += self.tree[i - 1] as usize;
            i -= i & i.wrapping_neg();
        }
        s
    }

    fn add(&mut self, seq: usize, delta: i32) {
        let mut i = seq + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] = (self.tree[i - 1] as i32 + delta) as u32;
            i += i & i.wrapping_neg();
        }
    }

    fn compact(&mut self) {
        let order: Vec<(u64, u64)> = (0..self.addr_of.len())
            .filter(|&s| self.alive[s])
            .map(|s| {
                let a = self.addr_of[s];
                (a, self.seq_of.get(&a).map_or(0, |&(_, size)| size))
            })
            .collect();
        self.seq_of.clear();
        self.addr_of.clear();
        self.alive.clear();
        self.tree.clear();
        self.live = 0;
        for (a, size) in order {
            self.insert_sized(a, size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_count_from_the_newest_and_invert() {
        let mut s = LiveSet::new();
        for a in 1..=5u64 {
            s.insert_sized(a * 16, a);
        }
        assert_eq!(s.remove_sized(80), Some((0, 5)));
        assert_eq!(s.remove(16), Some(3));
        // Left: 32, 48, 64 (oldest → newest).
        assert_eq!(s.remove_rank_sized(1), Some((48, 3)));
        assert_eq!(s.remove_rank(0), Some(64));
        assert_eq!(s.remove_rank(5), None);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn compaction_keeps_ranks() {
        let mut a = LiveSet::new();
        let mut b = LiveSet::new();
        for i in 0..10_000u64 {
            a.insert_sized(i, i + 1);
            b.insert_sized(i, i + 1);
            if i % 3 != 0 {
                if let Some((r, size)) = a.remove_sized(i - i / 2) {
                    assert_eq!(b.remove_rank_sized(r), Some((i - i / 2, size)));
                }
            }
        }
        assert_eq!(a.len(), b.len());
    }
}
