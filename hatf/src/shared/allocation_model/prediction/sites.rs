//! The model's per-site caches (which site follows which, which sizes a site asks for), stored
//! in vectors indexed by site id.
//!
//! Sites are numbered densely from 0, so a vector lookup does what would otherwise be two
//! hash-map lookups per record (a tenth of a decode). Ids at or above [`DENSE_SITES`], and
//! kinds beyond the first [`DENSE_KINDS`] seen, go to hash maps instead: a front end that broke
//! the numbering rule still gets the same caches, and memory stays bounded.

use crate::shared::allocation_model::prediction::recent_values::Mtf;
use metatf::hash::FastMap;

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
pub type SiteMtf = Mtf<u32, SITE_CACHE>;
/// Move-to-front cache of sizes.
pub type SizeMtf = Mtf<u64, SIZE_CACHE>;

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
