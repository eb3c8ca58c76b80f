//! The objects still alive, in allocation order, with rank queries.
//!
//! Deaths tend to come in allocation order (Merlin's reordered traces emit the oldest dead
//! object first), so a death is coded as the rank of the object among the live ones, oldest
//! first: usually 0. A Fenwick tree over allocation slots gives rank and select in O(log n).

use std::collections::HashMap;

/// Live objects of one block.
#[derive(Default)]
pub struct LiveSet {
    /// Fenwick tree (1-based) over allocation slots; a slot holds 1 while its object lives.
    tree: Vec<i32>,
    /// Object id of each slot.
    ids: Vec<u64>,
    /// Slot of each live object id (the latest allocation of that id).
    slot_of: HashMap<u64, usize>,
    /// Number of live slots.
    live: u64,
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

    /// Records an allocation of `obj`.
    pub fn allocate(&mut self, obj: u64) {
        let i = self.tree.len() + 1;
        let low = i & i.wrapping_neg();
        // Node i covers slots (i - low, i]; all but the new one are already in the tree.
        let covered = self.prefix(i - 1) - self.prefix(i - low);
        self.tree.push(1 + covered as i32);
        self.ids.push(obj);
        self.slot_of.insert(obj, i - 1);
        self.live += 1;
    }

    /// Number of live slots (stale slots of reused ids included).
    pub fn len(&self) -> u64 {
        self.live
    }

    /// True when nothing is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Removes `obj` if it is live and returns its rank among live objects (oldest = 0).
    pub fn kill(&mut self, obj: u64) -> Option<u64> {
        let slot = self.slot_of.remove(&obj)?;
        let rank = self.prefix(slot) as u64;
        self.add(slot, -1);
        self.live -= 1;
        Some(rank)
    }

    /// Removes and returns the live object of rank `rank` (oldest = 0).
    pub fn kill_rank(&mut self, rank: u64) -> Option<u64> {
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
        if self.slot_of.get(&obj) != Some(&pos) {
            // A stale slot (its id was allocated again later): still live for ranking, but
            // the encoder never names it, so a well-formed file cannot point here.
            return None;
        }
        self.slot_of.remove(&obj);
        self.add(pos, -1);
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
}
