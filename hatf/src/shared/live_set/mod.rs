//! The set of live blocks (or objects) in allocation order, so a free or a death can be coded
//! as "the k-th newest live one" instead of an address: the one live set with rank queries that
//! every format uses (allocation traces, wee_alloc, malloc-bench, JVM and Elephant Tracks).
//!
//! Blocks get consecutive sequence numbers and a live bit each, 64 bits to a word. A Fenwick
//! tree over the live counts of the words (all but the newest, still filling, word) counts live
//! blocks, so both the rank of a block and the block of a rank take O(log n) over a tree 64
//! times smaller than one over the numbers: it stays in the caches, and a rank among the newest
//! few hundred blocks (most frees) is found with popcounts of the newest words alone. When dead
//! numbers outweigh live ones the numbering is compacted, which keeps memory proportional to
//! the live set (encoder and decoder compact at the same moments, so ranks agree).
//!
//! Removing a block (by rank, or by address, what an encoder does) leaves the address's map
//! entry in place, pointing at a dead number, because a hash-map removal would cost more than
//! the rest of a free. Such stale entries are recognised by the number being dead (numbers are
//! never reused before a compaction), are overwritten when the address is allocated again, and
//! are dropped at compaction, so the map stays bounded by the numbering. Decoders that only
//! remove by rank keep no map at all ([`LiveSet::by_rank_only`]).
//!
//! An allocation at an address that is still live ends the older block by default (a trace
//! that lost a free). Elephant Tracks object ids are hash codes that may repeat while the
//! first object lives, and its layout counts such an older object among the live ones until
//! the block ends: [`LiveSet::keeping_replaced`] keeps it live, unnamed.

pub mod address_map;

use crate::shared::huge_pages;
use address_map::SeqMap;

/// Newest words of live bits looked at with popcounts before falling back to the tree.
const SCAN_WORDS: usize = 4;

/// Live blocks ordered by allocation, each with its size (kept here so the model needs one
/// map lookup per block event, not two).
#[derive(Debug, Default)]
pub struct LiveSet {
    /// Address → sequence number of the block last allocated there (a dead number when that
    /// block was removed since). Empty in a set made by [`LiveSet::by_rank_only`].
    seq_of: SeqMap,
    /// True for a set made by [`LiveSet::by_rank_only`]: no address map is kept.
    rank_only: bool,
    /// True for a set made by [`LiveSet::keeping_replaced`]: an allocation at a live address
    /// leaves the older block live (unnamed: only the newest block of an address is found by
    /// address).
    keep_replaced: bool,
    /// Sequence number → address (stale for dead numbers) and size, side by side so a free
    /// reads one cache line.
    blocks: Vec<(u64, u64)>,
    /// Live bit of number `s`: bit `s % 64` of word `s / 64`. The last word is the one still
    /// filling; the others are "sealed".
    alive: Vec<u64>,
    /// The live count of each word of `alive`: the portable build has no popcount
    /// instruction, and counting the newest words' bits on every free would be a tenth of a
    /// decode.
    counts: Vec<u8>,
    /// Where the last search by rank that left the newest words ended: a word and the live
    /// blocks in the words before it (kept exact as blocks before it retire). Blocks are often
    /// freed in the order they were allocated (a queue, or everything at the end), and then
    /// the next block wanted is at or just after it: found by stepping over a few word counts
    /// instead of descending the tree.
    finger: (usize, usize),
    /// Fenwick tree (1-based) of the live counts of the sealed words: one entry per sealed
    /// word. In a set kept by rank only, the blocks retired in the words of `lagging` are
    /// still counted (see [`LiveSet::settle`]).
    tree: Vec<u32>,
    /// A set kept by rank only: the sealed words of the blocks retired since the tree was
    /// last brought up to date, one entry per block. Such a set reads the tree only when a
    /// search by rank misses the newest words and the finger (a few in a hundred frees), so
    /// the tree's update (a walk up the tree for every free, a tenth of a free's work) is
    /// put off until then, or replaced by a rebuild when that is cheaper. A number retires
    /// once, and a compaction empties this, so it never holds more entries than `blocks`.
    lagging: Vec<usize>,
    live: usize,
}

/// `x` in each of the eight bytes of a word.
const BYTES: u64 = 0x0101_0101_0101_0101;

/// `SELECT_IN_BYTE[b][k]`: the position of the `k`-th (from 0) set bit of the byte `b`.
static SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        let mut bit = 0;
        while bit < 8 {
            if b >> bit & 1 != 0 {
                t[b][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    t
};

/// The position of the `k`-th (from 0) set bit of `w`, counted from the lowest; `w` has more
/// than `k` bits set.
#[inline]
fn select(w: u64, k: u32) -> u32 {
    // The portable build has no popcount instruction: count the bits of each byte at once
    // (SWAR), sum them into running counts, find the byte where the count passes `k`, and
    // look the bit up in that byte.
    let mut c = w - ((w >> 1) & 0x5555_5555_5555_5555);
    c = (c & 0x3333_3333_3333_3333) + ((c >> 2) & 0x3333_3333_3333_3333);
    c = (c + (c >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte i: the set bits in bytes 0..=i (at most 64, so no carries between bytes).
    let running = c.wrapping_mul(BYTES);
    // The high bit of byte i stays set when running_i <= k; those are the lowest bytes.
    let at_most_k = (((u64::from(k) * BYTES) | 0x8080_8080_8080_8080) - running) & (0x80 * BYTES);
    let byte = ((at_most_k >> 7).wrapping_mul(BYTES) >> 56) as u32;
    let before = ((running << 8) >> (8 * byte)) as u32 & 0xff;
    let b = (w >> (8 * byte)) as usize & 0xff;
    8 * byte + u32::from(SELECT_IN_BYTE[b][((k - before) & 7) as usize])
}

/// The position of the `k`-th (from 0) set bit of `w` counted from the highest; `w` has
/// `count` > `k` bits set. Half the frees of a memory_replay trace are of the newest live
/// block, and most others of one of the next few: for those, clearing the top bits is
/// quicker than [`select`]. The Elephant Tracks decoder's rank list reads its words with it too.
#[inline(always)]
pub(crate) fn select_from_top(mut w: u64, count: usize, k: usize) -> u32 {
    if k < 3 {
        // Clear the top bit once for k >= 1 and again for k >= 2, as conditional moves: which
        // of the three a free wants is data, and a loop of k steps mispredicted often.
        let without_top = |w: u64| w & !((1 << 63) >> w.leading_zeros());
        w = if k >= 1 { without_top(w) } else { w };
        w = if k >= 2 { without_top(w) } else { w };
        return 63 - w.leading_zeros();
    }
    select(w, (count - 1 - k) as u32)
}

/// The position of the `k`-th (from 0) set bit of `w` counted from the lowest, as [`select`]
/// gives it. Blocks freed in allocation order (a queue) are mostly the oldest live block of
/// their word, or the next: for those, clearing the lowest bit is quicker than the table.
#[inline(always)]
fn select_from_bottom(mut w: u64, k: u32) -> u32 {
    if k < 2 {
        // A conditional move, not a branch: which of the two is wanted is data.
        w = if k == 1 { w & w.wrapping_sub(1) } else { w };
        return w.trailing_zeros();
    }
    select(w, k)
}

/// Words a search by rank steps over from [`LiveSet::finger`] before descending the tree.
const FINGER_WORDS: usize = 8;

impl LiveSet {
    /// An empty set.
    pub fn new() -> Self {
        LiveSet::default()
    }

    /// An empty set that keeps no address map, for a decoder that only ever removes blocks by
    /// rank and is told by the coded data when an allocation reuses a live address: writing
    /// each block's map entry, a cache miss nearly every time, would be a sixth of a decode. [`LiveSet::insert_sized`] then never looks for a live block at the
    /// same address, and [`LiveSet::remove_sized`] and [`LiveSet::contains`] find nothing.
    pub fn by_rank_only() -> Self {
        LiveSet {
            rank_only: true,
            ..LiveSet::default()
        }
    }

    /// An empty set in which an allocation at a live address leaves the older block live:
    /// it still counts in ranks, but is no longer found by its address, and
    /// [`LiveSet::remove_named_rank`] refuses it (an encoder never names it).
    pub fn keeping_replaced() -> Self {
        LiveSet {
            keep_replaced: true,
            ..LiveSet::default()
        }
    }

    /// Forgets every block, keeping the memory for the next block of a file.
    pub fn clear(&mut self) {
        self.seq_of.clear();
        self.blocks.clear();
        self.tree.clear();
        self.lagging.clear();
        self.alive.clear();
        self.counts.clear();
        self.finger = (0, 0);
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
        self.prefetch_known::<false>(addr);
    }

    /// True for a set made by [`LiveSet::by_rank_only`], which keeps no address map.
    #[inline]
    pub fn keeps_no_map(&self) -> bool {
        self.rank_only
    }

    /// [`LiveSet::prefetch`] by a caller that knows, when `NO_MAP`, that the set keeps no map
    /// ([`LiveSet::keeps_no_map`]): a decoder's loop over many records tests that once, not
    /// at every allocation and free.
    #[inline(always)]
    pub fn prefetch_known<const NO_MAP: bool>(&self, addr: u64) {
        // A decoder's set has no map to fetch from (and calls this for every block).
        if NO_MAP || self.rank_only {
            return;
        }
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
        self.seq_of
            .get(addr, |s| self.blocks[s].0)
            .filter(|&s| self.is_alive(s))
    }

    /// Adds a block of `size` bytes as the newest; an address already live is first removed (a
    /// trace may allocate twice without a free in between, e.g. after lost records), and the
    /// rank that block had (counted from the newest, before this insertion) is returned.
    #[inline(always)]
    pub fn insert_sized(&mut self, addr: u64, size: u64) -> Option<usize> {
        self.insert_known::<false>(addr, size)
    }

    /// [`LiveSet::insert_sized`] by a caller that knows, when `NO_MAP`, that the set keeps no
    /// map (see [`LiveSet::prefetch_known`]).
    #[inline(always)]
    pub fn insert_known<const NO_MAP: bool>(&mut self, addr: u64, size: u64) -> Option<usize> {
        debug_assert!(!NO_MAP || self.rank_only);
        if self.blocks.len().is_multiple_of(64) {
            self.word_full();
        }
        let seq = self.blocks.len();
        // A set kept by rank only has nothing to look up: see `by_rank_only`.
        let replaced = match NO_MAP || self.rank_only {
            true => None,
            false => self.replace(addr, seq),
        };
        self.blocks.push((addr, size));
        // The newest block is in the filling word, which is always the last (`word_full`
        // starts one at every multiple of 64, and a compaction leaves the last one filling):
        // taken as the last, it needs no bounds check.
        debug_assert_eq!(seq / 64 + 1, self.alive.len());
        if let (Some(bits), Some(count)) = (self.alive.last_mut(), self.counts.last_mut()) {
            *bits |= 1 << (seq % 64);
            *count += 1;
        }
        self.live += 1;
        replaced
    }

    /// Before the insert of a block numbered at a multiple of 64: compacts the numbering
    /// when dead numbers outweigh live ones, and starts a new word of live bits unless the
    /// compaction left one filling. (Out of line, so that the insert of the other 63 stays
    /// short. Ranks count live blocks, which a compaction keeps in order, so when it happens
    /// changes no rank: checking once a word instead of at every insert gives the same
    /// streams.)
    #[inline(never)]
    fn word_full(&mut self) {
        // Dead numbers may reach three times the live ones before a compaction (which moves
        // every live block and, in a set with a map, rebuilds the map): at twice, the
        // compactions would be a tenth of an encode's address thread, at this bound a third
        // of that. Ranks do not depend on when compactions happen, so only memory (still
        // proportional to the live set) changes.
        const FACTOR: usize = 4;
        const FLOOR: usize = 4096;
        if self.blocks.len() >= FLOOR && self.blocks.len() >= FACTOR * self.live + FLOOR {
            self.compact();
        }
        if self.blocks.len().is_multiple_of(64) {
            self.new_word();
        }
        // Room for the pushes up to the next call. Past the smallest sizes the capacity is a
        // multiple of 64 (doublings from 64, and the huge jumps), so the vector only fills up
        // right before a call, never between two.
        huge_pages::grow_when_full(&mut self.blocks);
    }

    /// Maps `addr` to number `seq`; retires the live block it was mapped to, if any, and
    /// returns that block's rank.
    fn replace(&mut self, addr: u64, seq: usize) -> Option<usize> {
        let old = self.seq_of.insert(addr, seq, |s| self.blocks[s].0)?;
        // Only the order of live blocks matters, so retiring the old number after the
        // compaction check gives the same ranks as retiring it before.
        if self.keep_replaced || !self.is_alive(old) {
            return None;
        }
        let rank = self.rank(old);
        self.retire(old);
        Some(rank)
    }

    /// Seals the filling word, if any, and starts a new one (every 64 blocks).
    fn new_word(&mut self) {
        if !self.alive.is_empty() {
            self.seal();
        }
        self.alive.push(0);
        self.counts.push(0);
    }

    /// Adds the filling word (the last) to the tree; a new word follows.
    fn seal(&mut self) {
        let w = self.tree.len();
        debug_assert_eq!(w + 1, self.alive.len());
        // Fenwick node i covers words (i - lowbit(i), i]; fill it from its children.
        let i = w + 1;
        let low = i & i.wrapping_neg();
        let mut sum = u32::from(self.counts[w]);
        let mut j = i - 1;
        while j > i - low {
            sum += self.tree[j - 1];
            j -= j & j.wrapping_neg();
        }
        self.tree.push(sum);
    }

    #[inline(always)]
    fn retire(&mut self, seq: usize) {
        let w = seq / 64;
        self.alive[w] &= !(1 << (seq % 64));
        self.counts[w] -= 1;
        self.retired_in(w);
    }

    /// What [`Self::retire`] does once the block's live bit and its word's count are cleared:
    /// the finger, the tree and the live count.
    #[inline(always)]
    fn retired_in(&mut self, w: usize) {
        if w < self.finger.0 {
            self.finger.1 -= 1;
        }
        if w < self.tree.len() {
            if self.rank_only {
                self.lagging.push(w);
            } else {
                self.tree_retire(w);
            }
        }
        self.live -= 1;
    }

    /// Counts one block fewer in sealed word `w` in the tree.
    #[inline(always)]
    fn tree_retire(&mut self, w: usize) {
        let mut i = w + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] -= 1;
            i += i & i.wrapping_neg();
        }
    }

    /// Brings the tree up to date with the blocks retired since it last was (a set kept by
    /// rank only, see [`LiveSet::lagging`]): one walk up the tree per retired block, or, when
    /// that would take longer, the tree built afresh from the words' counts. (Words sealed
    /// in the meantime took their nodes from children that still counted those blocks, and
    /// the walks reach those nodes too, so either way gives the tree of the counts.)
    #[cold]
    #[inline(never)]
    fn settle(&mut self) {
        let n = self.tree.len();
        // A walk visits about half the tree's levels at a few instructions each; a rebuild
        // visits every node twice. Rebuilding for a few walks made a decode slower.
        if self.lagging.len() * (n.max(1).ilog2() as usize + 1) > 8 * n {
            for (node, &c) in self.tree.iter_mut().zip(&self.counts) {
                *node = u32::from(c);
            }
            for i in 1..=n {
                let up = i + (i & i.wrapping_neg());
                if up <= n {
                    self.tree[up - 1] += self.tree[i - 1];
                }
            }
        } else {
            for k in 0..self.lagging.len() {
                self.tree_retire(self.lagging[k]);
            }
        }
        self.lagging.clear();
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
            let newer: usize = self.counts[w + 1..].iter().map(|&c| usize::from(c)).sum();
            return above + newer;
        }
        // Live blocks up to and including `seq`: whole words before `w` from the tree.
        let older_or_same =
            self.prefix(w) + (self.alive[w] << (63 - seq % 64)).count_ones() as usize;
        self.live - older_or_same
    }

    /// Removes the block of rank `rank` (0 = newest) and returns its address and size.
    #[inline(always)]
    pub fn remove_rank_sized(&mut self, rank: usize) -> Option<(u64, u64)> {
        let pos = self.retire_rank(rank)?;
        Some(self.blocks[pos])
    }

    /// Removes the block of rank `rank` (0 = newest) and returns its address, or `None` when
    /// there is no such block or it is an older block at an address allocated again since (in
    /// a set made by [`LiveSet::keeping_replaced`]), which an encoder never names: a damaged
    /// file, whose decode stops there (the block is removed all the same).
    pub fn remove_named_rank(&mut self, rank: usize) -> Option<u64> {
        let pos = self.retire_rank(rank)?;
        let addr = self.blocks[pos].0;
        let named = self.rank_only || self.seq_of.get(addr, |s| self.blocks[s].0) == Some(pos);
        named.then_some(addr)
    }

    /// Retires the live block of rank `rank` (0 = newest) and returns its number.
    #[inline(always)]
    fn retire_rank(&mut self, rank: usize) -> Option<usize> {
        if rank >= self.live {
            return None;
        }
        let pos = match self.take_newest(rank) {
            Some(pos) => pos,
            None => {
                let pos = self.seq_of_old_rank(rank);
                self.retire(pos);
                pos
            }
        };
        debug_assert!(!self.is_alive(pos));
        Some(pos)
    }

    /// Retires the live block of rank `rank` (< the live count) if it is in the newest words,
    /// and returns its number; `None` (and nothing retired) for an older block.
    #[inline(always)]
    fn take_newest(&mut self, rank: usize) -> Option<usize> {
        // Most frees are of recent blocks: the counts of the newest words find a small rank
        // without the tree.
        // The newest words hold at most 64 blocks each: a larger rank is older than all of
        // them, and counting through them first would only find that out.
        if rank >= 64 * (SCAN_WORDS + 1) {
            return None;
        }
        // A plain countdown over slices of one length: an inclusive range walked backwards
        // and two bounds checks per word would be a tenth of a free's instructions. The block's
        // bit and count are cleared here, where the slices are known to hold its word.
        // (The two vectors have one length: cutting one to the other's is a compare, where
        // taking the smaller of the two is three instructions.)
        let n = self.counts.len();
        let (alive, counts) = (&mut self.alive[..n], &mut self.counts[..]);
        let oldest = n.saturating_sub(SCAN_WORDS + 1);
        let mut left = rank;
        let mut w = n;
        while w > oldest {
            w -= 1;
            let c = usize::from(counts[w]);
            if c > left {
                let bit = select_from_top(alive[w], c, left);
                alive[w] &= !(1 << bit);
                counts[w] -= 1;
                self.retired_in(w);
                return Some(w * 64 + bit as usize);
            }
            left -= c;
        }
        None
    }

    /// The number of the live block of rank `rank` (< the live count) when it is older than
    /// the newest words that [`Self::take_newest`] looks at (kept out of line so that the
    /// common case stays short).
    #[inline(never)]
    fn seq_of_old_rank(&mut self, rank: usize) -> usize {
        let last = self.alive.len() - 1;
        // The wanted block, counted from the oldest (from 0): near the finger, or found by
        // descending the tree.
        let want = self.live - 1 - rank;
        let (mut w, mut before) = self.finger;
        let mut steps = 0;
        if want >= before {
            while w <= last && steps < FINGER_WORDS {
                let c = usize::from(self.counts[w]);
                if want < before + c {
                    self.finger = (w, before);
                    return w * 64
                        + select_from_bottom(self.alive[w], (want - before) as u32) as usize;
                }
                before += c;
                w += 1;
                steps += 1;
            }
        } else {
            while w > 0 && steps < FINGER_WORDS {
                w -= 1;
                steps += 1;
                let c = usize::from(self.counts[w]);
                before -= c;
                if want >= before {
                    self.finger = (w, before);
                    return w * 64
                        + select_from_bottom(self.alive[w], (want - before) as u32) as usize;
                }
            }
        }
        // Descend the tree for the (want + 1)-th live block (it is in a sealed word: the scan
        // above covered the filling one).
        if !self.lagging.is_empty() {
            self.settle();
        }
        let mut left = (want + 1) as u32;
        let n = self.tree.len();
        let mut pos = 0usize;
        let mut step = if n == 0 { 0 } else { 1 << n.ilog2() };
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next - 1] < left {
                pos = next;
                left -= self.tree[next - 1];
            }
            step >>= 1;
        }
        // Words before `pos` hold fewer than the wanted count; word `pos` holds the rest.
        self.finger = (pos, want + 1 - left as usize);
        pos * 64 + select_from_bottom(self.alive[pos], left - 1) as usize
    }

    /// Live blocks in the sealed words before word `w`.
    fn prefix(&self, mut i: usize) -> usize {
        // Only a set with an address map asks, and its tree is never behind.
        debug_assert!(self.lagging.is_empty());
        let mut s = 0usize;
        while i > 0 {
            s += self.tree[i - 1] as usize;
            i -= i & i.wrapping_neg();
        }
        s
    }

    /// Renumbers the live blocks from 0, oldest first: the state inserting them one by one
    /// into an empty set gives, built directly (every word full but the last, the tree's node
    /// `i` counting 64 blocks per word it covers).
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        // Live blocks move down to the front of the numbering, in order, in place: a block's
        // new number is never above its old one.
        let mut n = 0;
        for w in 0..self.alive.len() {
            let mut b = self.alive[w];
            while b != 0 {
                self.blocks[n] = self.blocks[w * 64 + b.trailing_zeros() as usize];
                n += 1;
                b &= b - 1;
            }
        }
        let mut blocks = std::mem::take(&mut self.blocks);
        blocks.truncate(n);
        self.clear();
        if !self.rank_only {
            for (seq, &(a, _)) in blocks.iter().enumerate() {
                // Live addresses are distinct in a set with a map, except the older blocks a
                // set keeping replaced ones holds: entered oldest first, the newest block of
                // an address is the one its entry names again.
                self.seq_of.insert(a, seq, |s| blocks[s].0);
            }
        }
        self.blocks = blocks;
        let words = n.div_ceil(64);
        self.alive.resize(words, u64::MAX);
        self.counts.resize(words, 64);
        if !n.is_multiple_of(64) {
            self.alive[words - 1] = (1 << (n % 64)) - 1;
            self.counts[words - 1] = (n % 64) as u8;
        }
        // All words but the last are sealed.
        let sealed = words.saturating_sub(1);
        self.tree
            .extend((1..=sealed).map(|i| 64 * (i & i.wrapping_neg()) as u32));
        self.live = n;
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
    fn selecting_the_lowest_bits_is_selecting() {
        let mut x = 5u64;
        for _ in 0..5_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            for w in [x, x & (x >> 9), u64::MAX, 1 << 63, 1, 0b1011] {
                for k in 0..w.count_ones() {
                    assert_eq!(select_from_bottom(w, k), select(w, k), "word {w:#x} k {k}");
                }
            }
        }
    }

    #[test]
    fn selecting_from_the_top_is_selecting_from_the_bottom() {
        let mut x = 11u64;
        for _ in 0..5_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            for w in [x, x & (x >> 9), u64::MAX, 1 << 63, 1, 0b1011] {
                let count = w.count_ones() as usize;
                for k in 0..count {
                    assert_eq!(
                        select_from_top(w, count, k),
                        select(w, (count - 1 - k) as u32),
                        "word {w:#x} k {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_set_keeping_replaced_blocks_counts_them_but_does_not_name_them() {
        let mut s = LiveSet::keeping_replaced();
        for a in [16u64, 32, 16, 48] {
            s.insert(a);
        }
        // Oldest → newest: 16 (replaced, unnamed), 32, 16, 48.
        assert_eq!(s.len(), 4);
        assert_eq!(s.remove(16), Some(1));
        assert_eq!(s.remove(16), None);
        assert_eq!(s.remove_named_rank(2), None);
        assert_eq!(s.remove_named_rank(0), Some(48));
        assert_eq!(s.remove_named_rank(0), Some(32));
        assert!(s.is_empty());
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
    fn blocks_freed_in_allocation_order_are_found_by_rank() {
        // Frees of the oldest blocks (a queue), of blocks a little after and before the last
        // one found, and now and then of any block, through compactions: the search from the
        // last position found must give what the encoder's set gives.
        let mut enc = LiveSet::new();
        let mut dec = LiveSet::by_rank_only();
        let mut order: std::collections::VecDeque<u64> = std::collections::VecDeque::new();
        let mut x = 99u64;
        let mut next = 0u64;
        for round in 0..40 {
            for _ in 0..3000 {
                enc.insert_sized(16 * next, next);
                dec.insert_sized(16 * next, next);
                order.push_back(16 * next);
                next += 1;
            }
            for i in 0..2500 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = match x % 8 {
                    // Oldest first, the common case.
                    0..=4 => 0,
                    // A little way in, either side of the last one found.
                    5 | 6 => (x >> 20) as usize % 700,
                    _ => (x >> 20) as usize % order.len(),
                };
                let Some(addr) = order.remove(pick.min(order.len() - 1)) else {
                    continue;
                };
                let (rank, size) = enc.remove_sized(addr).expect("live");
                assert_eq!(
                    dec.remove_rank_sized(rank),
                    Some((addr, size)),
                    "round {round} free {i}"
                );
            }
        }
        assert_eq!(enc.len(), dec.len());
    }

    #[test]
    fn a_compacted_set_is_the_set_of_its_live_blocks_inserted_afresh() {
        for rank_only in [false, true] {
            let new = || match rank_only {
                true => LiveSet::by_rank_only(),
                false => LiveSet::new(),
            };
            for n in [0u64, 1, 63, 64, 65, 127, 128, 129, 1000, 4096, 5000] {
                // 3n blocks, two in three removed (by rank, newest first, which both kinds of
                // set can do): n stay live, spread over the numbering.
                let mut s = new();
                for i in 0..3 * n {
                    s.insert_sized(16 * i, i);
                }
                let mut rank = 0;
                for i in (0..3 * n).rev() {
                    if i % 3 == 1 {
                        rank += 1;
                    } else {
                        assert_eq!(s.remove_rank_sized(rank), Some((16 * i, i)));
                    }
                }
                let mut fresh = new();
                for i in (0..3 * n).filter(|i| i % 3 == 1) {
                    fresh.insert_sized(16 * i, i);
                }
                s.compact();
                assert_eq!(s.blocks, fresh.blocks, "n {n}");
                assert_eq!(s.alive, fresh.alive, "n {n}");
                assert_eq!(s.counts, fresh.counts, "n {n}");
                assert_eq!(s.tree, fresh.tree, "n {n}");
                assert_eq!(s.live, fresh.live, "n {n}");
                for i in 0..3 * n {
                    assert_eq!(
                        s.seq_of.get(16 * i, |q| s.blocks[q].0),
                        fresh.seq_of.get(16 * i, |q| fresh.blocks[q].0),
                        "n {n}"
                    );
                }
            }
        }
    }

    proptest::proptest! {
        /// Both kinds of set against a plain list of the live blocks (oldest first), through
        /// inserts and removals of the newest blocks, of the oldest (a queue) and of any:
        /// removing by rank (the decoder's set, its inserts told it keeps no map) must give
        /// the list's block, and removing that block by address (the encoder's set) its rank.
        #[test]
        fn removing_by_rank_is_removing_from_a_list(
            start in 0usize..1500,
            ops in proptest::collection::vec((0u8..5, proptest::prelude::any::<u16>()), 1..4000)
        ) {
            // `start` inserts first, so that ranks beyond the newest words (the tree and the
            // finger) are asked for; the removals that follow make compactions.
            let mut list: Vec<(u64, u64)> = Vec::new();
            let mut enc = LiveSet::new();
            let mut dec = LiveSet::by_rank_only();
            let ops = std::iter::repeat_n((0, 0), start).chain(ops);
            for (next, (op, x)) in (0u64..).zip(ops) {
                if op < 2 || list.is_empty() {
                    let block = (16 * next + 16, next);
                    enc.insert_sized(block.0, block.1);
                    dec.insert_known::<true>(block.0, block.1);
                    list.push(block);
                    continue;
                }
                let len = list.len();
                let rank = match op {
                    2 => usize::from(x) % len.min(8),
                    3 => len - 1 - usize::from(x) % len.min(4),
                    _ => usize::from(x) % len,
                };
                let block = list.remove(len - 1 - rank);
                proptest::prop_assert_eq!(dec.remove_rank_sized(rank), Some(block));
                proptest::prop_assert_eq!(enc.remove_sized(block.0), Some((rank, block.1)));
                proptest::prop_assert_eq!(dec.len(), list.len());
            }
            proptest::prop_assert_eq!(dec.remove_rank_sized(list.len()), None);
            proptest::prop_assert_eq!(enc.len(), list.len());
        }
    }

    #[test]
    fn a_lagging_tree_catches_up_to_the_tree_of_the_counts() {
        // A set kept by rank only puts off the tree's updates: through frees of recent blocks
        // and, every so often, of an old one (which reads the tree), the blocks must be the
        // list's, and the tree brought up to date (by walks when few blocks lag, rebuilt
        // when many do) must be the Fenwick tree of the sealed words' counts.
        for old_every in [1usize, 40, 5000] {
            let mut s = LiveSet::by_rank_only();
            let mut list: Vec<(u64, u64)> = Vec::new();
            let mut x = 3u64;
            for i in 0..20_000u64 {
                s.insert_sized(16 * i, i);
                list.push((16 * i, i));
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let free = |s: &mut LiveSet, list: &mut Vec<(u64, u64)>, rank: usize| {
                    let block = list.remove(list.len() - 1 - rank);
                    assert_eq!(s.remove_rank_sized(rank), Some(block), "step {i}");
                };
                if x.is_multiple_of(3) {
                    let rank = (x >> 20) as usize % list.len().min(300);
                    free(&mut s, &mut list, rank);
                }
                if (i as usize).is_multiple_of(old_every) && list.len() > 1000 {
                    let rank = list.len() - 1 - (x >> 33) as usize % 500;
                    free(&mut s, &mut list, rank);
                }
            }
            s.settle();
            assert!(s.lagging.is_empty());
            for node in 1..=s.tree.len() {
                let low = node & node.wrapping_neg();
                let counted: u32 = s.counts[node - low..node]
                    .iter()
                    .map(|&c| u32::from(c))
                    .sum();
                assert_eq!(s.tree[node - 1], counted, "every {old_every}: node {node}");
            }
        }
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
