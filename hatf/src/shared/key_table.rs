//! A hash table from 64-bit keys (block addresses, size-class keys) to small indices, for the
//! model's per-record lookups.
//!
//! With std's map those lookups would be a third of an `mtrace` encode and a sixth of a decode:
//! its generic insert and remove paths cost more than the probe itself. This table is open
//! addressing with linear probing over one array of (key, value) pairs, so a lookup is one
//! multiply and, nearly always, one cache line. It never removes single entries (the live-block
//! set leaves stale entries that it recognises itself, see `live_set`); [`KeyTable::clear`]
//! empties it. The hash is seeded from std's per-process random keys so that colliding
//! addresses cannot be prepared in advance, and at most half the slots are used, so probe runs
//! stay short. No iteration order exists, so nothing about the table reaches the output.

use std::hash::BuildHasher;

use crate::shared::huge_pages;

/// Asks the processor to fetch the cache line of `slot`, where a lookup starts (a hint only:
/// it never faults and changes nothing the program sees). The tables' callers ask a few
/// records ahead, so the line is in the cache when the lookup comes.
#[inline(always)]
pub fn prefetch_slot<T>(slot: &T) {
    let slot: *const T = slot;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing into the program; `slot` comes from a
    // reference, so it points into live memory anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

/// Marks an empty slot (values are indices, never this large).
const EMPTY: usize = usize::MAX;
/// Slots of a table's first allocation.
const FIRST_SLOTS: usize = 64;
/// Keys that differ only in their low `REGION_BITS` bits are placed side by side (see
/// [`KeyTable::home`]). Regions of 64 bytes (8 slots, two cache lines): with larger regions
/// the densely packed small blocks of a 32-bit heap make long runs that a probe must walk.
const REGION_BITS: u32 = 6;

/// Keys to indices (`usize` values below `usize::MAX`).
#[derive(Debug, Clone)]
pub struct KeyTable {
    /// (key, value) pairs; a value of [`EMPTY`] marks a free slot. Empty or a power of two long.
    slots: Vec<(u64, usize)>,
    len: usize,
    seed: u64,
}

impl Default for KeyTable {
    fn default() -> Self {
        KeyTable {
            slots: Vec::new(),
            len: 0,
            seed: std::collections::hash_map::RandomState::new().hash_one(0x7ab1e_u64) | 1,
        }
    }
}

impl KeyTable {
    /// An empty table.
    pub fn new() -> Self {
        KeyTable::default()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the table holds no key.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first slot to probe for `key` (the table must have slots).
    #[inline]
    fn home(&self, key: u64) -> usize {
        // Keys of one region of 2^REGION_BITS get neighbouring slots, one per 8 bytes (the
        // smallest alignment of blocks), and
        // each region a random place: the blocks an allocator carves one after another then
        // share cache lines of the table, where a full hash costs a cache miss per block. The
        // region's place is a multiply by an odd constant, high bits kept, of the region
        // number and the seed.
        let region = ((key >> REGION_BITS) ^ self.seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let bits = self.slots.len().trailing_zeros();
        let within = (key >> 3) as usize & ((1 << (REGION_BITS - 3)) - 1);
        ((region >> (64 - bits)) as usize + within) & (self.slots.len() - 1)
    }

    /// Asks the processor to fetch the cache line where a lookup of `key` starts, so a lookup
    /// a few records later does not wait for memory (a hint only: no effect on the table).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        if self.slots.is_empty() {
            return;
        }
        prefetch_slot(&self.slots[self.home(key)]);
    }

    /// The value of `key`, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, v) = self.slots[i];
            if v == EMPTY {
                return None;
            }
            if k == key {
                return Some(v);
            }
            i = (i + 1) & mask;
        }
    }

    /// Sets `key` to `value` (below `usize::MAX`); returns the value it had.
    #[inline]
    pub fn insert(&mut self, key: u64, value: usize) -> Option<usize> {
        debug_assert!(value != EMPTY);
        let i = self.slot_of(key);
        let old = std::mem::replace(&mut self.slots[i], (key, value)).1;
        if old == EMPTY {
            self.len += 1;
            None
        } else {
            Some(old)
        }
    }

    /// The value of `key`, first setting it to `value` when absent.
    #[inline]
    pub fn get_or_insert(&mut self, key: u64, value: usize) -> usize {
        debug_assert!(value != EMPTY);
        let i = self.slot_of(key);
        if self.slots[i].1 == EMPTY {
            self.slots[i] = (key, value);
            self.len += 1;
        }
        self.slots[i].1
    }

    /// The index of the slot holding `key`, or of the empty slot where it goes (growing the
    /// table first when one more key would fill more than half of it).
    #[inline]
    fn slot_of(&mut self, key: u64) -> usize {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, v) = self.slots[i];
            if v == EMPTY || k == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let size = (2 * self.slots.len()).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, huge_pages::filled_vec(size, (0, EMPTY)));
        let mask = size - 1;
        for (k, v) in old {
            if v != EMPTY {
                let mut i = self.home(k);
                while self.slots[i].1 != EMPTY {
                    i = (i + 1) & mask;
                }
                self.slots[i] = (k, v);
            }
        }
    }

    /// Removes every key, keeping the memory.
    pub fn clear(&mut self) {
        if self.len > 0 {
            self.slots.fill((0, EMPTY));
            self.len = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn agrees_with_a_std_map() {
        let mut t = KeyTable::new();
        let mut m: HashMap<u64, usize> = HashMap::new();
        let mut x = 99u64;
        for i in 0..50_000usize {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Aligned addresses from a narrow range, so keys repeat; key 0 is an ordinary key.
            let key = ((x >> 40) % 5000) * 16;
            if x.is_multiple_of(3) {
                assert_eq!(t.get(key), m.get(&key).copied(), "step {i}");
            } else if x % 3 == 1 {
                assert_eq!(t.insert(key, i), m.insert(key, i), "step {i}");
            } else {
                assert_eq!(
                    t.get_or_insert(key, i),
                    *m.entry(key).or_insert(i),
                    "step {i}"
                );
            }
            assert_eq!(t.len(), m.len());
        }
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.get(0), None);
        assert_eq!(t.insert(0, 7), None);
        assert_eq!(t.get(0), Some(7));
    }
}
