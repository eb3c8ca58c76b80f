//! The model's per-site caches (which site follows which, which sizes a site asks for), stored
//! in vectors indexed by site id.
//!
//! Sites are numbered densely from 0, so a vector lookup replaces the hash-map lookups these
//! caches took (two per record, a tenth of a decode). Ids at or above [`DENSE_SITES`], and
//! kinds beyond the first [`DENSE_KINDS`] seen, go to hash maps instead: a front end that broke
//! the numbering rule still gets the same caches, and memory stays bounded.

use crate::alloc::fast_hash::FastMap;

/// Entries of a site cache (the symbol `SITE_CACHE` is a miss).
pub const SITE_CACHE: usize = 8;
/// Entries of a size cache (the symbol `SIZE_CACHE` is a miss).
pub const SIZE_CACHE: usize = 4;
/// Site ids below this live in the vectors.
const DENSE_SITES: u32 = 1 << 15;
/// Kinds with a slot in the per-site arrays (the formats use at most six kinds with a site).
const DENSE_KINDS: usize = 8;
/// `kind_slot` value of a kind that has no dense slot.
const SPARSE: u8 = u8::MAX;

/// Move-to-front cache of sites.
pub type SiteMtf = Recent<u32, SITE_CACHE>;
/// Move-to-front cache of sizes.
pub type SizeMtf = Recent<u64, SIZE_CACHE>;

/// A move-to-front list of up to `N` values: what `predict::Mtf` keeps, position for
/// position, with the searches and insertions the site half's encoder wants. A size cache
/// misses for most records of some traces (memory-replay threads ask for sizes all over), so
/// the miss path matters: the search compares every entry without stopping early (a fixed
/// number of compares, no mispredicted exit), and a value known to be absent goes in front
/// without being searched for again.
#[derive(Debug, Clone, Copy)]
pub struct Recent<T: Copy + PartialEq + Default, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T: Copy + PartialEq + Default, const N: usize> Default for Recent<T, N> {
    fn default() -> Self {
        Recent {
            items: [T::default(); N],
            len: 0,
        }
    }
}

impl<T: Copy + PartialEq + Default, const N: usize> Recent<T, N> {
    /// Position of `v`, if cached.
    #[inline(always)]
    pub fn find(&self, v: T) -> Option<usize> {
        // One bit per position holding `v` (at most one does), among the first `len`.
        let mut hits = 0u32;
        for (i, &x) in self.items.iter().enumerate() {
            hits |= u32::from(x == v) << i;
        }
        hits &= (1u32 << self.len.min(N)) - 1;
        (hits != 0).then_some(hits.trailing_zeros() as usize)
    }

    /// The value at `i`, if that many are cached.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<T> {
        // `len` is at most `N`: saying so spares a bounds check.
        if i < self.len.min(N) {
            Some(self.items[i])
        } else {
            None
        }
    }

    /// Moves the value at position `i` (one of those cached) to the front: what
    /// [`Recent::touch`] of that value does, without searching for it (cached values are
    /// distinct).
    #[inline(always)]
    pub fn promote(&mut self, i: usize) {
        debug_assert!(i < self.len);
        // The front value (the commonest symbol) stays where it is.
        if i == 0 {
            return;
        }
        let v = self.items[i];
        self.shift_down(i);
        self.items[0] = v;
    }

    /// Puts `v`, which is not cached, in front (dropping the last value when full): what
    /// [`Recent::touch`] does for it, without the search. (Were `v` cached, it would be
    /// cached twice: positions still name values, but not the ones `touch` would leave.)
    #[inline(always)]
    pub fn insert_new(&mut self, v: T) {
        if self.len < N {
            self.len += 1;
        }
        self.shift_down(self.len - 1);
        self.items[0] = v;
    }

    /// Moves `v` to the front (inserting it, dropping the last one when full).
    #[inline]
    pub fn touch(&mut self, v: T) {
        match self.find(v) {
            Some(i) => self.promote(i),
            None => self.insert_new(v),
        }
    }

    /// Every position from 1 to `i` takes its predecessor's value: a fixed number of
    /// conditional moves, where `copy_within` of a variable length was a `memmove` call.
    #[inline(always)]
    fn shift_down(&mut self, i: usize) {
        let mut j = N - 1;
        while j > 0 {
            if j <= i {
                self.items[j] = self.items[j - 1];
            }
            j -= 1;
        }
    }
}

/// The site and size caches of one model state.
#[derive(Debug)]
pub struct SiteCaches {
    /// Kind code → its slot + 1 in the per-site arrays, in order of first use; 0 = not seen
    /// yet, [`SPARSE`] = no slot left.
    kind_slot: [u8; 256],
    slots: usize,
    /// By previous site: for each kind slot, the sites that followed it.
    after: Vec<[SiteMtf; DENSE_KINDS]>,
    after_sparse: FastMap<(u32, u8), SiteMtf>,
    /// By site: the sizes it asked for.
    sizes: Vec<SizeMtf>,
    sizes_sparse: FastMap<u32, SizeMtf>,
}

impl Default for SiteCaches {
    fn default() -> Self {
        SiteCaches {
            kind_slot: [0; 256],
            slots: 0,
            after: Vec::new(),
            after_sparse: FastMap::default(),
            sizes: Vec::new(),
            sizes_sparse: FastMap::default(),
        }
    }
}

impl SiteCaches {
    /// Back to the state of new caches, keeping the memory.
    pub fn clear(&mut self) {
        self.kind_slot = [0; 256];
        self.slots = 0;
        self.after.clear();
        self.after_sparse.clear();
        self.sizes.clear();
        self.sizes_sparse.clear();
    }

    /// The cache of the sites of records of `kind` that followed a record at site `prev`.
    #[inline]
    pub fn after(&mut self, prev: u32, kind: u8) -> &mut SiteMtf {
        let slot = usize::from(self.kind_slot[kind as usize]).wrapping_sub(1);
        let i = prev as usize;
        if slot < DENSE_KINDS && i < self.after.len() {
            return &mut self.after[i][slot];
        }
        self.after_slow(prev, kind)
    }

    /// [`Self::after`] for a new kind, a new site or a sparse entry.
    #[cold]
    fn after_slow(&mut self, prev: u32, kind: u8) -> &mut SiteMtf {
        let slot = self.slot(kind);
        if prev < DENSE_SITES && slot < DENSE_KINDS {
            let i = prev as usize;
            if i >= self.after.len() {
                self.after.resize(i + 1, Default::default());
            }
            &mut self.after[i][slot]
        } else {
            self.after_sparse.entry((prev, kind)).or_default()
        }
    }

    /// The cache of the sizes site `site` asked for.
    #[inline]
    pub fn sizes(&mut self, site: u32) -> &mut SizeMtf {
        let i = site as usize;
        if i < self.sizes.len() {
            return &mut self.sizes[i];
        }
        self.sizes_slow(site)
    }

    /// [`Self::sizes`] for a new site or a sparse one.
    #[cold]
    fn sizes_slow(&mut self, site: u32) -> &mut SizeMtf {
        if site < DENSE_SITES {
            let i = site as usize;
            if i >= self.sizes.len() {
                self.sizes.resize(i + 1, Default::default());
            }
            &mut self.sizes[i]
        } else {
            self.sizes_sparse.entry(site).or_default()
        }
    }

    /// The dense slot of `kind` (assigned on first use), or [`DENSE_KINDS`] when it has none.
    fn slot(&mut self, kind: u8) -> usize {
        if self.kind_slot[kind as usize] == 0 {
            self.kind_slot[kind as usize] = if self.slots < DENSE_KINDS {
                self.slots += 1;
                self.slots as u8
            } else {
                SPARSE
            };
        }
        match self.kind_slot[kind as usize] {
            SPARSE => DENSE_KINDS,
            s => usize::from(s) - 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::model::predict::Mtf;

    /// Random finds, gets, promotions, touches and insertions of new values give the same
    /// answers as the plain move-to-front list, position for position.
    fn same_as_mtf<const N: usize>(seed: u64, values: u64) {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut fast: Recent<u64, N> = Recent::default();
        let mut plain: Mtf<u64, N> = Mtf::default();
        for _ in 0..20_000 {
            let v = next() % values;
            let found = plain.find(v);
            assert_eq!(fast.find(v), found, "find {v}");
            match (next() % 3, found) {
                (0, _) => {
                    fast.touch(v);
                    plain.touch(v);
                }
                (1, Some(i)) => {
                    fast.promote(i);
                    plain.promote(i);
                }
                (1, None) => {
                    fast.insert_new(v);
                    plain.touch(v);
                }
                _ => {}
            }
            for i in 0..N + 2 {
                assert_eq!(fast.get(i), plain.get(i), "position {i}");
            }
        }
    }

    #[test]
    fn recent_lists_keep_the_order_of_a_move_to_front_list() {
        for seed in 1..6 {
            same_as_mtf::<8>(seed, 12);
            same_as_mtf::<8>(seed, 5);
            same_as_mtf::<4>(seed, 7);
            same_as_mtf::<4>(seed, 3);
        }
        // The value a new list's empty entries hold is not found.
        let r: Recent<u32, 8> = Recent::default();
        assert_eq!((r.find(0), r.get(0)), (None, None));
    }

    #[test]
    fn dense_and_sparse_entries_are_kept_apart_and_remembered() {
        let mut c = SiteCaches::default();
        // Ten kinds: the last two have no dense slot.
        for kind in 0..10u8 {
            c.after(3, kind).touch(u32::from(kind) + 100);
            c.after(DENSE_SITES + 5, kind).touch(u32::from(kind) + 200);
        }
        for kind in 0..10u8 {
            assert_eq!(c.after(3, kind).get(0), Some(u32::from(kind) + 100));
            assert_eq!(
                c.after(DENSE_SITES + 5, kind).get(0),
                Some(u32::from(kind) + 200)
            );
            assert_eq!(c.after(4, kind).get(0), None);
        }
        c.sizes(7).touch(48);
        c.sizes(u32::MAX).touch(64);
        assert_eq!(c.sizes(7).get(0), Some(48));
        assert_eq!(c.sizes(u32::MAX).get(0), Some(64));
        assert_eq!(c.sizes(6).get(0), None);
    }
}
