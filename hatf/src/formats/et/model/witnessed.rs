//! The classes of recently witnessed objects, kept in front of the model's object table.
//!
//! A `W` record predicts an object's class from the last witness of that object, which the
//! model keeps in a hash table of every object of the block: a lookup per `W`, and `W` lines
//! are about a third of a trace's lines. Most witnesses are of
//! an object witnessed a few lines before, so a small
//! direct-mapped cache answers them. It is a copy, not the truth: an entry always says what the
//! table says (entries are written by a witness and dropped when their object is allocated
//! again), so it changes no prediction.

/// Most slots of the cache (a power of two).
///
/// Misses fall as the cache grows to thousands of slots, and a miss is a probe of the object
/// table, megabytes big and out of cache; 4,096 slots are 128 KiB, which the level-2 cache
/// holds.
const SLOTS: usize = 4096;

/// Fewest slots: a block of a few lines gets this many (a tiny trace's decode had 32 page
/// faults, a seventh of its total, from filling 4,096).
const MIN_SLOTS: usize = 64;

/// What the cache knows of one witnessed object.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Witnessed {
    /// The object.
    pub obj: u64,
    /// Its last witnessed class.
    pub class: u64,
    /// Where its allocation site is in the model's site list (the model's `NO_SITE` when the
    /// block did not allocate it).
    pub site: usize,
}

/// A direct-mapped cache of [`Witnessed`] objects.
pub struct WitnessCache {
    /// A power of two of slots, on the heap (the model that holds the cache is moved by
    /// value).
    slots: Box<[Option<Witnessed>]>,
    /// 64 minus the number of bits of a slot number: the hash's top bits pick the slot.
    shift: u32,
}

impl Default for WitnessCache {
    fn default() -> Self {
        WitnessCache::for_records(u64::MAX)
    }
}

impl WitnessCache {
    /// A cache sized for a block of `records` records: one slot per record (a power of two),
    /// from [`MIN_SLOTS`] to [`SLOTS`]. Its size changes no prediction, only how often the
    /// object table is probed.
    pub fn for_records(records: u64) -> WitnessCache {
        let slots = usize::try_from(records)
            .unwrap_or(SLOTS)
            .clamp(MIN_SLOTS, SLOTS)
            .next_power_of_two();
        WitnessCache {
            slots: vec![None; slots].into_boxed_slice(),
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// Forgets every object (for another block), keeping the memory.
    pub fn clear(&mut self) {
        self.slots.fill(None);
    }

    #[inline(always)]
    fn slot(&self, obj: u64) -> usize {
        (obj.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// What the cache knows of `obj`, if anything.
    #[inline(always)]
    pub fn get(&self, obj: u64) -> Option<Witnessed> {
        self.slots[self.slot(obj)].filter(|w| w.obj == obj)
    }

    /// Remembers a witness (replacing whatever object shared its slot).
    #[inline(always)]
    pub fn put(&mut self, w: Witnessed) {
        let slot = self.slot(w.obj);
        self.slots[slot] = Some(w);
    }

    /// Forgets `obj` (allocated again: its table entry starts afresh).
    #[inline(always)]
    pub fn forget(&mut self, obj: u64) {
        let slot = self.slot(obj);
        let s = &mut self.slots[slot];
        if s.is_some_and(|w| w.obj == obj) {
            *s = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_by_the_block() {
        for (records, slots) in [(0, 64), (1, 64), (130, 256), (4096, 4096), (u64::MAX, 4096)] {
            let c = WitnessCache::for_records(records);
            assert_eq!(c.slots.len(), slots, "{records} records");
            assert!((0..10_000).all(|o| c.slot(o) < slots));
        }
        assert_eq!(WitnessCache::default().slots.len(), SLOTS);
    }

    #[test]
    fn remembers_forgets_and_evicts() {
        for records in [1, 500, u64::MAX] {
            let mut c = WitnessCache::for_records(records);
            let w = |obj, class| Witnessed {
                obj,
                class,
                site: 3,
            };
            c.put(w(10, 1));
            assert_eq!(c.get(10), Some(w(10, 1)));
            assert_eq!(c.get(11), None);
            c.put(w(10, 2));
            assert_eq!(c.get(10), Some(w(10, 2)));
            // Forgetting another object of the same slot keeps this one.
            let other = (11..).find(|&o| c.slot(o) == c.slot(10));
            let other = other.expect("some object shares the slot");
            c.forget(other);
            assert_eq!(c.get(10), Some(w(10, 2)));
            // Writing it evicts this one.
            c.put(w(other, 5));
            assert_eq!(c.get(10), None);
            assert_eq!(c.get(other), Some(w(other, 5)));
            c.forget(other);
            assert_eq!(c.get(other), None);
        }
    }
}
