//! The set of live blocks in allocation order, so a free can be coded as "the k-th newest live
//! block" instead of an address.
//!
//! Blocks get consecutive sequence numbers; a Fenwick tree over the numbers counts live blocks so
//! both the rank of a block and the block of a rank take O(log n). When dead numbers outweigh live
//! ones the numbering is compacted, which keeps memory proportional to the live set (encoder and
//! decoder compact at the same moments, so ranks agree).
//!
//! Removing by rank (what a decoder does for every free) leaves the address's map entry in
//! place, pointing at a dead number: a hash-map removal was a fifth of a decode's time. Such
//! stale entries are recognised by the number being dead, are overwritten when the address is
//! allocated again, and are dropped at compaction, so the map stays bounded by the numbering.

use crate::alloc::fast_hash::FastMap;

/// Ranks below this are looked for by walking back from the newest number.
const SCAN_RANKS: usize = 16;
/// How many of the newest numbers that walk looks at before falling back to the tree.
const SCAN_SPAN: usize = 64;

/// Live blocks ordered by allocation, each with its size (kept here so the model needs one
/// map lookup per block event, not two).
#[derive(Debug, Default)]
pub struct LiveSet {
    /// Address → sequence number of the block last allocated there (a dead number when that
    /// block was removed by rank since).
    seq_of: FastMap<u64, usize>,
    /// Sequence number → address (stale for dead numbers).
    addr_of: Vec<u64>,
    /// Sequence number → size.
    size_of: Vec<u64>,
    /// Fenwick tree (1-based) of live flags over sequence numbers.
    tree: Vec<u32>,
    /// Live flag per sequence number: 1 live, 0 dead (bytes, so eight count at once).
    alive: Vec<u8>,
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
        self.live_seq(addr).is_some()
    }

    /// The sequence number of the live block at `addr`, skipping a stale entry.
    fn live_seq(&self, addr: u64) -> Option<usize> {
        self.seq_of
            .get(&addr)
            .copied()
            .filter(|&s| self.alive[s] != 0)
    }

    /// Adds a block of `size` bytes as the newest; an address already live is first removed (a
    /// trace may allocate twice without a free in between, e.g. after lost records).
    pub fn insert_sized(&mut self, addr: u64, size: u64) {
        if self.addr_of.len() >= 1024 && self.addr_of.len() >= 2 * self.live + 1024 {
            self.compact();
        }
        let seq = self.addr_of.len();
        if let Some(old) = self.seq_of.insert(addr, seq) {
            // Only the order of live blocks matters, so retiring the old number after the
            // compaction check gives the same ranks as retiring it before.
            if self.alive[old] != 0 {
                self.retire(old);
            }
        }
        self.addr_of.push(addr);
        self.size_of.push(size);
        self.alive.push(1);
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
        self.alive[seq] = 0;
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
        let seq = self.seq_of.remove(&addr).filter(|&s| self.alive[s] != 0)?;
        let size = self.size_of[seq];
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
        // Most frees are of recent blocks: walking back over the newest numbers finds a small
        // rank in a few steps, where the descent below visits every level of the tree.
        if rank < SCAN_RANKS {
            if let Some(pos) = self.newest_walk(rank) {
                return Some(self.take(pos));
            }
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
        // `pos` is live: the descent stops on a number whose prefix count reaches `want`.
        if pos >= self.addr_of.len() {
            return None;
        }
        Some(self.take(pos))
    }

    /// The number of the live block of rank `rank`, when it is among the newest
    /// [`SCAN_SPAN`] numbers: counted 8 numbers at a time (the live flags are bytes 0 or 1),
    /// then one at a time.
    fn newest_walk(&self, rank: usize) -> Option<usize> {
        let lo = self.alive.len().saturating_sub(SCAN_SPAN);
        let mut end = self.alive.len();
        let mut left = rank;
        while end >= lo + 8 {
            let mut word = [0u8; 8];
            word.copy_from_slice(&self.alive[end - 8..end]);
            // Bytes of 0 or 1: the multiply sums them into the top byte.
            let live =
                (u64::from_le_bytes(word).wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
            if live > left {
                break;
            }
            left -= live;
            end -= 8;
        }
        for pos in (lo..end).rev() {
            if self.alive[pos] != 0 {
                if left == 0 {
                    return Some(pos);
                }
                left -= 1;
            }
        }
        None
    }

    /// Retires live number `pos`; its address and size. The map entry is left stale (see the
    /// module comment).
    fn take(&mut self, pos: usize) -> (u64, u64) {
        debug_assert!(self.alive[pos] != 0);
        self.retire(pos);
        (self.addr_of[pos], self.size_of[pos])
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
            .filter(|&s| self.alive[s] != 0)
            .map(|s| (self.addr_of[s], self.size_of[s]))
            .collect();
        self.seq_of.clear();
        self.addr_of.clear();
        self.size_of.clear();
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
    fn removing_by_rank_agrees_with_ranks_by_address() {
        // Small ranks take the walk, large ones the tree; both must name the block whose
        // address-side rank is the same.
        let mut a = LiveSet::new();
        let mut b = LiveSet::new();
        let mut x = 12345u64;
        for i in 0..20_000u64 {
            a.insert_sized(i * 16, i);
            b.insert_sized(i * 16, i);
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x % 5 < 3 && !b.is_empty() {
                let rank = if x.is_multiple_of(7) {
                    (x >> 33) as usize % b.len()
                } else {
                    (x >> 33) as usize % 20
                };
                if let Some((addr, size)) = b.remove_rank_sized(rank) {
                    assert_eq!(a.remove_sized(addr), Some((rank, size)), "step {i}");
                }
            }
        }
        assert_eq!(a.len(), b.len());
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
