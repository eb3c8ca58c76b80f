//! The objects still alive, in allocation order, with rank queries.
//!
//! Deaths tend to come in allocation order (Merlin's reordered traces emit the oldest dead
//! object first), so a death is coded as the rank of the object among the live ones, oldest
//! first: usually 0. A Fenwick tree over allocation slots gives rank and select in O(log n).
//! When more than half of the slots are dead, the live ones are moved down into a fresh tree
//! (same order, so the same ranks): the tree stays at most about twice the live count, and
//! small enough to stay in cache, however many objects a block allocates and kills.
//!
//! Allocations are only queued until the set is first asked about: a trace without deaths
//! (the javac-tests trace, ET2 lots_of_allocs) never builds the tree or the id table, which
//! were a tenth of its decode (`perf`). The queued ones are entered in order before any query,
//! so the tree goes through the same steps as when each is entered at once.

use metatf::hash::FastMap;

/// Slots always allowed before the tree is compacted.
const COMPACT_SLACK: usize = 64;

/// Live objects of one block.
#[derive(Default)]
pub struct LiveSet {
    /// Fenwick tree (1-based) over allocation slots; a slot holds 1 while its object lives.
    tree: Vec<i32>,
    /// Object id of each slot.
    ids: Vec<u64>,
    /// Whether each slot is live (stale slots of reused ids included).
    alive: Vec<bool>,
    /// Slot of each live object id (the latest allocation of that id).
    slot_of: FastMap<u64, usize>,
    /// Number of live slots in the tree.
    live: u64,
    /// Allocations not yet entered in the tree, oldest first.
    pending: Vec<u64>,
}

impl LiveSet {
    fn prefix(&self, mut i: usize) -> i64 {
        // Sum of slots 0..i (exclusive), i.e. Fenwick positions 1..=i.
        let mut s = 0i64;
        while i > 0 {
            s += i64::from(self.tree[i - 1]);
            i &= i - 1;
        }
        s
    }

    fn add(&mut self, slot: usize, delta: i32) {
        let mut i = slot + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// Moves the live slots, in order, to the front of a fresh tree.
    fn compact(&mut self) {
        let mut kept = 0usize;
        for s in 0..self.ids.len() {
            if !self.alive[s] {
                continue;
            }
            let obj = self.ids[s];
            if let Some(slot) = self.slot_of.get_mut(&obj) {
                // Only the latest slot of an id is named; a stale one keeps its place unnamed.
                if *slot == s {
                    *slot = kept;
                }
            }
            self.ids[kept] = obj;
            kept += 1;
        }
        self.ids.truncate(kept);
        self.alive.clear();
        self.alive.resize(kept, true);
        // Every slot holds 1: Fenwick node i (1-based) covers `i & -i` slots.
        self.tree.clear();
        self.tree
            .extend((1..=kept).map(|i| (i & i.wrapping_neg()) as i32));
    }

    /// Records an allocation of `obj` (entered in the tree before the next query).
    #[inline]
    pub fn allocate(&mut self, obj: u64) {
        self.pending.push(obj);
    }

    /// Enters the queued allocations in the tree, in order.
    #[inline]
    fn settle(&mut self) {
        if !self.pending.is_empty() {
            self.enter_pending();
        }
    }

    #[inline(never)]
    fn enter_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for &obj in &pending {
            self.enter(obj);
        }
        // The queue's memory is kept for the next allocations.
        self.pending = pending;
        self.pending.clear();
    }

    /// Enters an allocation of `obj` in the tree.
    fn enter(&mut self, obj: u64) {
        if self.tree.len() >= 2 * self.live as usize + COMPACT_SLACK {
            self.compact();
        }
        let i = self.tree.len() + 1;
        let low = i & i.wrapping_neg();
        // Node i covers slots (i - low, i]; all but the new one are already in the tree, in
        // the nodes met going down from i - 1 to i - low (a prefix sum stopped early).
        let mut covered = 0i32;
        let mut j = i - 1;
        while j > i - low {
            covered += self.tree[j - 1];
            j &= j - 1;
        }
        self.tree.push(1 + covered);
        self.ids.push(obj);
        self.alive.push(true);
        self.slot_of.insert(obj, i - 1);
        self.live += 1;
    }

    /// Forgets every object, keeping the memory for the next block.
    pub fn clear(&mut self) {
        self.tree.clear();
        self.ids.clear();
        self.alive.clear();
        self.slot_of.clear();
        self.live = 0;
        self.pending.clear();
    }

    /// Number of live slots (stale slots of reused ids included).
    pub fn len(&self) -> u64 {
        self.live + self.pending.len() as u64
    }

    /// True when nothing is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes `obj` if it is live and returns its rank among live objects (oldest = 0).
    pub fn kill(&mut self, obj: u64) -> Option<u64> {
        self.settle();
        let slot = self.slot_of.remove(&obj)?;
        let rank = self.prefix(slot) as u64;
        self.add(slot, -1);
        self.alive[slot] = false;
        self.live -= 1;
        Some(rank)
    }

    /// Removes and returns the live object of rank `rank` (oldest = 0).
    pub fn kill_rank(&mut self, rank: u64) -> Option<u64> {
        self.settle();
        // Binary lifting: find the largest position whose prefix sum is <= rank.
        let n = self.tree.len();
        let mut pos = 0usize;
        let mut remaining = i64::try_from(rank).ok()?;
        let mut step = if n == 0 {
            0
        } else {
            1usize << (usize::BITS - 1 - n.leading_zeros())
        };
        while step > 0 {
            let next = pos + step;
            if next <= n && i64::from(self.tree[next - 1]) <= remaining {
                pos = next;
                remaining -= i64::from(self.tree[next - 1]);
            }
            step >>= 1;
        }
        // Slot `pos` is the first whose inclusive prefix exceeds `rank`.
        if pos >= n {
            return None;
        }
        let obj = self.ids[pos];
        // One probe of the table to check the slot and remove it.
        match self.slot_of.entry(obj) {
            std::collections::hash_map::Entry::Occupied(e) if *e.get() == pos => {
                e.remove();
            }
            // A stale slot (its id was allocated again later): still live for ranking, but
            // the encoder never names it, so a well-formed file cannot point here.
            _ => return None,
        }
        self.add(pos, -1);
        self.alive[pos] = false;
        self.live -= 1;
        Some(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_select_agree() {
        let mut a = LiveSet::default();
        let mut b = LiveSet::default();
        for o in 1..=50u64 {
            a.allocate(o * 7);
            b.allocate(o * 7);
        }
        for o in [3u64, 50, 1, 25, 24, 2, 49] {
            let r = a.kill(o * 7).expect("live");
            assert_eq!(b.kill_rank(r), Some(o * 7));
        }
        assert_eq!(a.kill(3 * 7), None);
        assert_eq!(a.kill(4 * 7), Some(0));
    }

    /// Every node of the tree holds the number of live slots it covers, after allocations
    /// entered one by one or many at once (the walk that fills a new node stops early).
    #[test]
    fn tree_nodes_count_their_live_slots() {
        let mut set = LiveSet::default();
        let mut x = 777u64;
        for step in 0..3_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Runs of allocations of varying length between deaths.
            for k in 0..(x >> 59) {
                set.allocate(step * 64 + k);
            }
            let live = set.len();
            if live > 0 && x & 1 == 0 {
                assert!(set.kill_rank((x >> 20) % live).is_some());
            } else {
                set.settle();
            }
            for (i, &node) in set.tree.iter().enumerate() {
                let i = i + 1;
                let low = i & i.wrapping_neg();
                let want = set.alive[i - low..i].iter().filter(|&&a| a).count();
                assert_eq!(node as usize, want, "node {i} at step {step}");
            }
        }
    }

    /// Compaction keeps ranks: a long run of allocations and deaths, with reused ids (stale
    /// slots), against a plain list of the live slots in order.
    #[test]
    fn compaction_keeps_ranks() {
        let mut set = LiveSet::default();
        // (id, named) per live slot, oldest first; `named` is false for a stale slot.
        let mut model: Vec<(u64, bool)> = Vec::new();
        let mut x = 12345u64;
        for step in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = (x >> 33) % 300;
            if x & (1 << 20) != 0 || model.is_empty() {
                if let Some(p) = model.iter().position(|&(o, named)| o == id && named) {
                    model[p].1 = false;
                }
                set.allocate(id);
                model.push((id, true));
            } else if step % 2 == 0 {
                let expect = model.iter().position(|&(o, named)| o == id && named);
                assert_eq!(
                    set.kill(id),
                    expect.map(|p| p as u64),
                    "kill {id} at {step}"
                );
                if let Some(p) = expect {
                    model.remove(p);
                }
            } else {
                let rank = (x >> 40) % model.len() as u64;
                let (o, named) = model[rank as usize];
                let got = set.kill_rank(rank);
                if named {
                    assert_eq!(got, Some(o), "rank {rank} at {step}");
                    model.remove(rank as usize);
                } else {
                    assert_eq!(got, None, "stale rank {rank} at {step}");
                }
            }
            assert_eq!(set.len(), model.len() as u64);
            assert!(set.tree.len() <= 2 * model.len() + COMPACT_SLACK + 1);
        }
    }
}
