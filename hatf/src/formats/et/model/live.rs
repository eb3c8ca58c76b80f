//! The objects still alive in one block, as Elephant Tracks codes deaths: by rank among the
//! live ones, oldest first.
//!
//! Deaths tend to come in allocation order (Merlin's reordered traces emit the oldest dead
//! object first), so a death is coded as the rank of the object among the live ones, oldest
//! first: usually 0. The set itself is the shared [`crate::shared::live_set::LiveSet`], kept
//! so that an id allocated again while it lives leaves the older object counted but unnamed,
//! as the layout defines it; this view turns its ranks (newest first) around.
//!
//! Allocations are only queued until the set is first asked about: a trace without deaths
//! never fills the set's address map, which would be most of what the set costs it. The
//! queued ones are entered in order before any query, so the set goes through the same steps
//! as when each is entered at once.

use crate::shared::live_set::LiveSet as Set;

/// Live objects of one block.
pub struct LiveSet {
    set: Set,
    /// Allocations not yet entered in the set, oldest first.
    pending: Vec<u64>,
}

impl Default for LiveSet {
    fn default() -> Self {
        LiveSet {
            set: Set::keeping_replaced(),
            pending: Vec::new(),
        }
    }
}

impl LiveSet {
    /// Records an allocation of `obj` (entered in the set before the next query).
    #[inline]
    pub fn allocate(&mut self, obj: u64) {
        self.pending.push(obj);
    }

    /// Enters the queued allocations in the set, in order.
    #[inline]
    fn settle(&mut self) {
        if !self.pending.is_empty() {
            self.enter_pending();
        }
    }

    #[inline(never)]
    fn enter_pending(&mut self) {
        for &obj in &self.pending {
            self.set.insert(obj);
        }
        // The queue's memory is kept for the next allocations.
        self.pending.clear();
    }

    /// Forgets every object, keeping the memory for the next block.
    pub fn clear(&mut self) {
        self.set.clear();
        self.pending.clear();
    }

    /// Number of live objects (older objects of reused ids included).
    pub fn len(&self) -> u64 {
        (self.set.len() + self.pending.len()) as u64
    }

    /// True when nothing is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes `obj` if it is live and returns its rank among live objects (oldest = 0).
    pub fn kill(&mut self, obj: u64) -> Option<u64> {
        self.settle();
        let newest_first = self.set.remove(obj)?;
        // The set's count is already one less: the object's place from the oldest end.
        Some((self.set.len() - newest_first) as u64)
    }

    /// Removes and returns the live object of rank `rank` (oldest = 0); `None` when there is
    /// none, or it is an older object of an id allocated again (never named by an encoder).
    pub fn kill_rank(&mut self, rank: u64) -> Option<u64> {
        self.settle();
        let live = self.set.len() as u64;
        if rank >= live {
            return None;
        }
        self.set.remove_named_rank((live - 1 - rank) as usize)
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

    /// Ranks from the oldest end over a long run of allocations and deaths (enough for the
    /// set to compact), with reused ids (older objects left unnamed), against a plain list of
    /// the live objects in order.
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
                    // Refused, and gone all the same (the decode stops there).
                    assert_eq!(got, None, "stale rank {rank} at {step}");
                    model.remove(rank as usize);
                }
            }
            assert_eq!(set.len(), model.len() as u64);
        }
    }
}
