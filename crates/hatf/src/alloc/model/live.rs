//! The set of live blocks in allocation order, so a free can be coded as "the k-th newest live
//! block" instead of an address.
//!
//! Blocks get consecutive sequence numbers and a live bit each, 64 bits to a word. A Fenwick
//! tree over the live counts of the words (all but the newest, still filling, word) counts live
//! blocks, so both the rank of a block and the block of a rank take O(log n) over a tree 64
//! times smaller than one over the numbers: it stays in the caches, and a rank among the newest
//! few hundred blocks (most frees) is found with popcounts of the newest words alone. When dead
//! numbers outweigh live ones the numbering is compacted, which keeps memory proportional to
//! the live set (encoder and decoder compact at the same moments, so ranks agree).
//!
//! Removing a block (by rank, what a decoder of the older layouts does for every free, or by
//! address, what an encoder does) leaves the address's map entry in place, pointing at a dead
//! number: a hash-map removal was a fifth of a decode's time. Such stale entries are recognised
//! by the number being dead (numbers are never reused before a compaction), are overwritten
//! when the address is allocated again, and are dropped at compaction, so the map stays bounded
//! by the numbering. Decoders of the current layout keep no map at all
//! ([`LiveSet::by_rank_only`]).

use super::key_table::KeyTable;

/// Newest words of live bits looked at with popcounts before falling back to the tree.
const SCAN_WORDS: usize = 4;

/// Live blocks ordered by allocation, each with its size (kept here so the model needs one
/// map lookup per block event, not two).
#[derive(Debug, Default)]
pub struct LiveSet {
    /// Address → sequence number of the block last allocated there (a dead number when that
    /// block was removed since). Empty in a set made by [`LiveSet::by_rank_only`].
    seq_of: KeyTable,
    /// True for a set made by [`LiveSet::by_rank_only`]: no address map is kept.
    rank_only: bool,
    /// Sequence number → address (stale for dead numbers) and size, side by side so a free
    /// reads one cache line.
    blocks: Vec<(u64, u64)>,
    /// Scratch for [`LiveSet::compact`].
    order: Vec<(u64, u64)>,
    /// Live bit of number `s`: bit `s % 64` of word `s / 64`. The last word is the one still
    /// filling; the others are "sealed".
    alive: Vec<u64>,
    /// Fenwick tree (1-based) of the live counts of the sealed words: one entry per sealed
    /// word.
    tree: Vec<u32>,
    live: usize,
}

/// `x` in each of the eight bytes of a word.
const BYTES: u64 = 0x0101_0101_0101_0101;

/// The position of the `k`-th (from 0) set bit of `w`, counted from the lowest; `w` has more
/// than `k` bits set.
#[inline]
fn select(w: u64, k: u32) -> u32 {
    // The portable build has no popcount instruction: count the bits of each byte at once
    // (SWAR), sum them into running counts, and find the byte where the count passes `k`.
    let mut c = w - ((w >> 1) & 0x5555_5555_5555_5555);
    c = (c & 0x3333_3333_3333_3333) + ((c >> 2) & 0x3333_3333_3333_3333);
    c = (c + (c >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte i: the set bits in bytes 0..=i (at most 64, so no carries between bytes).
    let running = c.wrapping_mul(BYTES);
    // The high bit of byte i stays set when running_i <= k; those are the lowest bytes.
    let at_most_k = (((u64::from(k) * BYTES) | 0x8080_8080_8080_8080) - running) & (0x80 * BYTES);
    let byte = ((at_most_k >> 7).wrapping_mul(BYTES) >> 56) as u32;
    let before = ((running << 8) >> (8 * byte)) as u32 & 0xff;
    let mut b = (w >> (8 * byte)) & 0xff;
    for _ in 0..k - before {
        b &= b - 1;
    }
    8 * byte + b.trailing_zeros()
}

impl LiveSet {
    /// An empty set.
    pub fn new() -> Self {
        LiveSet::default()
    }

    /// An empty set that keeps no address map, for a decoder that only ever removes blocks by
    /// rank and is told by the coded data when an allocation reuses a live address (layout
    /// `alloc-model-3`): writing each block's map entry, a cache miss nearly every time, was a
    /// sixth of a decode. [`LiveSet::insert_sized`] then never looks for a live block at the
    /// same address, and [`LiveSet::remove_sized`] and [`LiveSet::contains`] find nothing.
    pub fn by_rank_only() -> Self {
        LiveSet {
            rank_only: true,
            ..LiveSet::default()
        }
    }

    /// Forgets every block, keeping the memory for the next block of a file.
    pub fn clear(&mut self) {
        self.seq_of.clear();
        self.blocks.clear();
        self.tree.clear();
        self.alive.clear();
        self.live = 0;
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

    /// Starts fetching what [`LiveSet::remove_sized`] or [`LiveSet::insert_sized`] of `addr`
    /// will look up first (a hint only).
    #[inline]
    pub fn prefetch(&self, addr: u64) {
        self.seq_of.prefetch(addr);
    }

    #[inline]
    fn is_alive(&self, seq: usize) -> bool {
        self.alive[seq / 64] >> (seq % 64) & 1 != 0
    }

    /// The sequence number of the live block at `addr`, skipping a stale entry (always `None`
    /// in a set kept by rank only).
    #[inline]
    fn live_seq(&self, addr: u64) -> Option<usize> {
        self.seq_of.get(addr).filter(|&s| self.is_alive(s))
    }

    /// Adds a block of `size` bytes as the newest; an address already live is first removed (a
    /// trace may allocate twice without a free in between, e.g. after lost records), and the
    /// rank that block had (counted from the newest, before this insertion) is returned.
    pub fn insert_sized(&mut self, addr: u64, size: u64) -> Option<usize> {
        if self.blocks.len() >= 1024 && self.blocks.len() >= 2 * self.live + 1024 {
            self.compact();
        }
        let seq = self.blocks.len();
        let mut replaced = None;
        if self.rank_only {
            // Nothing to look up: see `by_rank_only`.
        } else if let Some(old) = self.seq_of.insert(addr, seq) {
            // Only the order of live blocks matters, so retiring the old number after the
            // compaction check gives the same ranks as retiring it before.
            if self.is_alive(old) {
                replaced = Some(self.rank(old));
                self.retire(old);
            }
        }
        if seq.is_multiple_of(64) {
            if seq > 0 {
                self.seal();
            }
            self.alive.push(0);
        }
        self.blocks.push((addr, size));
        self.alive[seq / 64] |= 1 << (seq % 64);
        self.live += 1;
        replaced
    }

    /// Adds the filling word (the last) to the tree; a new word follows.
    fn seal(&mut self) {
        let w = self.tree.len();
        debug_assert_eq!(w + 1, self.alive.len());
        // Fenwick node i covers words (i - lowbit(i), i]; fill it from its children.
        let i = w + 1;
        let low = i & i.wrapping_neg();
        let mut sum = self.alive[w].count_ones();
        let mut j = i - 1;
        while j > i - low {
            sum += self.tree[j - 1];
            j -= j & j.wrapping_neg();
        }
        self.tree.push(sum);
    }

    fn retire(&mut self, seq: usize) {
        let w = seq / 64;
        self.alive[w] &= !(1 << (seq % 64));
        if w < self.tree.len() {
            let mut i = w + 1;
            while i <= self.tree.len() {
                self.tree[i - 1] -= 1;
                i += i & i.wrapping_neg();
            }
        }
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
        let seq = self.live_seq(addr)?;
        let size = self.blocks[seq].1;
        let rank = self.rank(seq);
        self.retire(seq);
        Some((rank, size))
    }

    /// Live blocks newer than live number `seq`.
    fn rank(&self, seq: usize) -> usize {
        let w = seq / 64;
        // Bits above `seq` in its word (a shift by 64 would overflow: split it).
        let above = (self.alive[w] >> (seq % 64) >> 1).count_ones() as usize;
        let last = self.alive.len() - 1;
        if last - w <= SCAN_WORDS {
            let newer: usize = self.alive[w + 1..]
                .iter()
                .map(|x| x.count_ones() as usize)
                .sum();
            return above + newer;
        }
        // Live blocks up to and including `seq`: whole words before `w` from the tree.
        let older_or_same =
            self.prefix(w) + (self.alive[w] << (63 - seq % 64)).count_ones() as usize;
        self.live - older_or_same
    }

    /// Removes the block of rank `rank` (0 = newest) and returns its address and size.
    pub fn remove_rank_sized(&mut self, rank: usize) -> Option<(u64, u64)> {
        if rank >= self.live {
            return None;
        }
        let pos = self.seq_of_rank(rank);
        Some(self.take(pos))
    }

    /// The number of the live block of rank `rank` (< the live count).
    #[inline]
    fn seq_of_rank(&self, rank: usize) -> usize {
        // Most frees are of recent blocks: popcounts of the newest words find a small rank
        // without the tree.
        let last = self.alive.len() - 1;
        let mut left = rank as u32;
        for w in (last.saturating_sub(SCAN_WORDS)..=last).rev() {
            let c = self.alive[w].count_ones();
            if c > left {
                return w * 64 + select(self.alive[w], c - 1 - left) as usize;
            }
            left -= c;
        }
        // The (live - rank)-th live block counted from the oldest, found by descending the tree
        // (it is in a sealed word: the scan above covered the filling one).
        let mut want = (self.live - rank) as u32;
        let n = self.tree.len();
        let mut pos = 0usize;
        let mut step = if n == 0 { 0 } else { 1 << n.ilog2() };
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next - 1] < want {
                pos = next;
                want -= self.tree[next - 1];
            }
            step >>= 1;
        }
        // Words before `pos` hold fewer than the wanted count; word `pos` holds the rest.
        pos * 64 + select(self.alive[pos], want - 1) as usize
    }

    /// Retires live number `pos`; its address and size. The map entry is left stale (see the
    /// module comment).
    fn take(&mut self, pos: usize) -> (u64, u64) {
        debug_assert!(self.is_alive(pos));
        self.retire(pos);
        self.blocks[pos]
    }

    /// Live blocks in the sealed words before word `w`.
    fn prefix(&self, mut i: usize) -> usize {
        let mut s = 0usize;
        while i > 0 {
            s += self.tree[i - 1] as usize;
            i -= i & i.wrapping_neg();
        }
        s
    }

    fn compact(&mut self) {
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(
            (0..self.blocks.len())
                .filter(|&s| self.is_alive(s))
                .map(|s| self.blocks[s]),
        );
        self.clear();
        for &(a, size) in &order {
            self.insert_sized(a, size);
        }
        self.order = order;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_finds_the_kth_set_bit() {
        let mut x = 7u64;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Sparse and dense words, and the extremes.
            for w in [x, x & (x >> 7) & (x >> 13), u64::MAX, 1 << 63, 1] {
                let mut k = 0;
                for bit in 0..64 {
                    if w >> bit & 1 != 0 {
                        assert_eq!(select(w, k), bit, "word {w:#x} k {k}");
                        k += 1;
                    }
                }
            }
        }
    }

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
    fn a_set_kept_by_rank_only_gives_the_same_blocks() {
        // The decoder's set (no address map) against the encoder's, through compactions and
        // large and small ranks; the encoder names the rank of each freed address.
        let mut enc = LiveSet::new();
        let mut dec = LiveSet::by_rank_only();
        let mut x = 777u64;
        for i in 0..30_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x % 5 < 2 && !enc.is_empty() {
                let addr = 16 * ((x >> 20) % (i + 1));
                if let Some((rank, size)) = enc.remove_sized(addr) {
                    assert_eq!(dec.remove_rank_sized(rank), Some((addr, size)), "step {i}");
                }
            } else {
                enc.insert_sized(16 * i, i);
                dec.insert_sized(16 * i, i);
            }
            assert_eq!(enc.len(), dec.len());
        }
        // No address map: a live block is not found by address.
        dec.insert_sized(8, 1);
        assert!(!dec.contains(8));
        assert_eq!(dec.remove_sized(8), None);
        assert_eq!(dec.remove_rank_sized(0), Some((8, 1)));
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
