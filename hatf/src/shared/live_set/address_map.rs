//! The live-block set's map from block addresses to sequence numbers, in 8-byte slots.
//!
//! [`KeyTable`] keeps each key beside its value: 16 bytes a slot, and the map of a trace with
//! 300,000 live blocks grew to a million slots, 16 MB that the encoder's address thread (the
//! critical path of an encode) first filled and then faulted in page by page. Here a slot
//! holds a sequence number (32 bits) and 32 bits derived from the key: the key itself is in
//! the live set's block list, which the caller reads anyway (for the size of a freed block),
//! so a slot whose bits match is confirmed by asking the caller for the address of its
//! number. The derived bits are the table position's hash bits, so growing the table moves
//! slots without looking any key up, and an empty slot is all zero bits, so a new table is
//! zeroed memory straight from the allocator (no fill pass).
//!
//! Numbers that do not fit in 32 bits, or a table that would need more than 2^29 slots, switch
//! the map to a [`KeyTable`] (16-byte slots, no limits) until it is cleared: a slower path no
//! real trace reaches, but never a wrong answer. Probing is exactly [`KeyTable`]'s (the same
//! home slot for a key, at most half the slots used), so the table's locality is unchanged.

use std::hash::BuildHasher;

use crate::shared::huge_pages;
use crate::shared::key_table::{prefetch_slot, KeyTable};

/// Slots of a table's first allocation.
const FIRST_SLOTS: usize = 64;
/// Low key bits that pick a slot within a region of neighbouring slots (as in [`KeyTable`]:
/// 64-byte regions, one slot per 8 bytes).
const REGION_BITS: u32 = 6;
/// Bits of the region's hash kept in a slot: enough to find the home slot of a table of up
/// to 2^29 slots.
const HASH_BITS: u32 = 29;

/// The first slot to probe, in a table of `len` slots (a power of two, at most
/// 2^[`HASH_BITS`]), for a key whose check bits are `check` ([`SeqMap::check`]).
#[inline]
fn home(check: u32, len: usize) -> usize {
    let bits = len.trailing_zeros();
    let region = (check >> (REGION_BITS - 3)) as usize >> (HASH_BITS - bits);
    let within = (check & ((1 << (REGION_BITS - 3)) - 1)) as usize;
    (region + within) & (len - 1)
}

/// Address → sequence number, for [`crate::shared::live_set::LiveSet`].
#[derive(Debug, Clone)]
pub struct SeqMap {
    /// `check << 32 | (seq + 1)`, where `check` is [`SeqMap::check`] of the key; 0 marks an
    /// empty slot. Empty or a power of two long.
    slots: Vec<u64>,
    /// Keys in `slots`.
    len: usize,
    seed: u64,
    /// The map once a number or the table outgrew the narrow slots (then `slots` is empty).
    wide: Option<Box<KeyTable>>,
    /// Numbers below this fit a narrow slot (lower in tests, to reach the wide path).
    narrow_seqs: usize,
    /// Most slots of a narrow table (lower in tests).
    narrow_slots: usize,
}

impl Default for SeqMap {
    fn default() -> Self {
        SeqMap {
            slots: Vec::new(),
            len: 0,
            seed: std::collections::hash_map::RandomState::new().hash_one(0x5e9_u64) | 1,
            wide: None,
            // `seq + 1` must fit in 32 bits.
            narrow_seqs: u32::MAX as usize,
            narrow_slots: 1 << HASH_BITS,
        }
    }
}

impl SeqMap {
    /// An empty map.
    pub fn new() -> Self {
        SeqMap::default()
    }

    /// A map that switches to wide slots at smaller sizes, so tests can reach that path.
    #[cfg(test)]
    fn with_narrow_limits(narrow_seqs: usize, narrow_slots: usize) -> Self {
        SeqMap {
            narrow_seqs,
            narrow_slots,
            ..SeqMap::default()
        }
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        match &self.wide {
            Some(w) => w.len(),
            None => self.len,
        }
    }

    /// True when the map holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The 32 bits a slot keeps of `key`: the top [`HASH_BITS`] bits of its region's hash,
    /// then its 8-byte step within the region (3 bits). Keys of one region get neighbouring
    /// home slots (see [`KeyTable`]'s `home`: blocks carved one after another share cache
    /// lines of the table), each region a random place from the seeded hash.
    #[inline]
    fn check(&self, key: u64) -> u32 {
        let region = ((key >> REGION_BITS) ^ self.seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let within = (key >> 3) as u32 & ((1 << (REGION_BITS - 3)) - 1);
        ((region >> (64 - HASH_BITS)) as u32) << (REGION_BITS - 3) | within
    }

    /// Asks the processor to fetch the cache line where a lookup of `key` starts (a hint
    /// only: no effect on the map).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        if self.slots.is_empty() {
            if let Some(w) = &self.wide {
                w.prefetch(key);
            }
            return;
        }
        let slots: &[u64] = &self.slots;
        prefetch_slot(&slots[home(self.check(key), slots.len())]);
    }

    /// The number of `key`, if present. `key_of(seq)` must give the key stored with each
    /// number in the map.
    #[inline]
    pub fn get(&self, key: u64, key_of: impl Fn(usize) -> u64) -> Option<usize> {
        if self.slots.is_empty() {
            return self.wide.as_ref().and_then(|w| w.get(key));
        }
        let check = self.check(key);
        let slots: &[u64] = &self.slots;
        let mask = slots.len() - 1;
        let mut i = home(check, slots.len());
        loop {
            let s = slots[i];
            if s == 0 {
                return None;
            }
            if (s >> 32) as u32 == check {
                let seq = (s as u32 - 1) as usize;
                if key_of(seq) == key {
                    return Some(seq);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Sets `key` to number `seq`; returns the number it had. `key_of` as for
    /// [`SeqMap::get`] (`seq` itself is never asked for).
    #[inline]
    pub fn insert(&mut self, key: u64, seq: usize, key_of: impl Fn(usize) -> u64) -> Option<usize> {
        if seq < self.narrow_seqs && 2 * (self.len + 1) <= self.slots.len() {
            return self.insert_narrow(key, seq, key_of);
        }
        self.insert_slow(key, seq, key_of)
    }

    /// [`SeqMap::insert`] into a narrow table with room for one more key.
    #[inline]
    fn insert_narrow(
        &mut self,
        key: u64,
        seq: usize,
        key_of: impl Fn(usize) -> u64,
    ) -> Option<usize> {
        let check = self.check(key);
        let slots: &mut [u64] = &mut self.slots;
        let mask = slots.len() - 1;
        let mut i = home(check, slots.len());
        let new = u64::from(check) << 32 | (seq as u64 + 1);
        loop {
            let s = slots[i];
            if s == 0 {
                slots[i] = new;
                self.len += 1;
                return None;
            }
            if (s >> 32) as u32 == check {
                let old = (s as u32 - 1) as usize;
                if key_of(old) == key {
                    slots[i] = new;
                    return Some(old);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// [`SeqMap::insert`] when the table must grow first, or the map is or becomes wide.
    #[cold]
    #[inline(never)]
    fn insert_slow(
        &mut self,
        key: u64,
        seq: usize,
        key_of: impl Fn(usize) -> u64,
    ) -> Option<usize> {
        if self.wide.is_none() {
            let must_grow = 2 * (self.len + 1) > self.slots.len();
            if seq < self.narrow_seqs && !(must_grow && 2 * self.slots.len() > self.narrow_slots) {
                if must_grow {
                    self.grow();
                }
                return self.insert_narrow(key, seq, key_of);
            }
            self.widen(&key_of);
        }
        self.wide.as_mut().and_then(|w| w.insert(key, seq))
    }

    /// Doubles the table. A slot's check bits give its home, so no key is looked up.
    fn grow(&mut self) {
        let size = (2 * self.slots.len()).max(FIRST_SLOTS);
        let old = std::mem::replace(&mut self.slots, huge_pages::zeroed_vec(size));
        let slots: &mut [u64] = &mut self.slots;
        let mask = size - 1;
        for &s in old.iter() {
            if s != 0 {
                let mut i = home((s >> 32) as u32, size);
                while slots[i] != 0 {
                    i = (i + 1) & mask;
                }
                slots[i] = s;
            }
        }
    }

    /// Moves every key to a wide table (the narrow slots are freed).
    #[cold]
    fn widen(&mut self, key_of: &impl Fn(usize) -> u64) {
        let mut wide = KeyTable::new();
        for &s in std::mem::take(&mut self.slots).iter() {
            if s != 0 {
                let seq = (s as u32 - 1) as usize;
                wide.insert(key_of(seq), seq);
            }
        }
        self.len = 0;
        self.wide = Some(Box::new(wide));
    }

    /// Removes every key, keeping the memory (a wide map becomes narrow again).
    pub fn clear(&mut self) {
        if self.len > 0 {
            self.slots.fill(0);
            self.len = 0;
        }
        self.wide = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Drives a map and a std map with the same inserts and lookups; keys are stored per
    /// number in `keys`, as the live set stores addresses per sequence number.
    fn agree(mut t: SeqMap, steps: usize, key_range: u64, seed: u64) -> SeqMap {
        let mut m: HashMap<u64, usize> = HashMap::new();
        let mut keys: Vec<u64> = Vec::new();
        let mut x = seed;
        for i in 0..steps {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly 16-byte-aligned addresses from a narrow range, so keys repeat; some
            // unaligned ones and some far apart, whose check bits may collide. Key 0 is an
            // ordinary key.
            let key = match x >> 60 {
                0 => (x >> 20) % key_range,
                1 => ((x >> 20) % 64) << 40,
                _ => ((x >> 40) % key_range) * 16,
            };
            if x.is_multiple_of(3) {
                assert_eq!(t.get(key, |q| keys[q]), m.get(&key).copied(), "step {i}");
            } else {
                let seq = keys.len();
                let got = t.insert(key, seq, |q| {
                    assert!(q < keys.len(), "asked for a number not yet stored");
                    keys[q]
                });
                keys.push(key);
                assert_eq!(got, m.insert(key, seq), "step {i}");
            }
            assert_eq!(t.len(), m.len());
        }
        for (&k, &v) in &m {
            assert_eq!(t.get(k, |q| keys[q]), Some(v));
        }
        t
    }

    #[test]
    fn agrees_with_a_std_map() {
        let mut t = agree(SeqMap::new(), 60_000, 5000, 99);
        assert!(t.wide.is_none());
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.get(0, |_| unreachable!()), None);
        assert_eq!(t.insert(0, 0, |_| unreachable!()), None);
        assert_eq!(t.get(0, |_| 0), Some(0));
    }

    #[test]
    fn keys_with_equal_check_bits_are_told_apart_by_their_numbers() {
        // Keys that differ only in their low three bits have the same check bits (and home):
        // only the confirmation against the stored key tells them apart.
        let mut t = SeqMap::new();
        let keys: Vec<u64> = (0..8).map(|k| 0x1000 + k).collect();
        for (seq, &k) in keys.iter().enumerate() {
            assert_eq!(t.insert(k, seq, |q| keys[q]), None);
        }
        for (seq, &k) in keys.iter().enumerate() {
            assert_eq!(t.get(k, |q| keys[q]), Some(seq));
        }
        assert_eq!(t.check(0x1000), t.check(0x1007));
        assert_eq!(t.get(0x1008, |q| keys[q]), None);
    }

    #[test]
    fn numbers_beyond_the_narrow_slots_switch_to_a_wide_table() {
        // A limit of 1000 numbers stands for 2^32: past it every answer must stay right.
        let t = agree(
            SeqMap::with_narrow_limits(1000, 1 << HASH_BITS),
            20_000,
            3000,
            7,
        );
        assert!(t.wide.is_some());
        // A table that would outgrow its most slots goes wide as well.
        let mut t = agree(SeqMap::with_narrow_limits(usize::MAX, 256), 20_000, 3000, 8);
        assert!(t.wide.is_some());
        // Cleared, the map is narrow again and works as new.
        t.clear();
        assert!(t.wide.is_none() && t.is_empty());
        let t = agree(t, 100, 3000, 9);
        assert!(t.wide.is_none());
    }

    #[test]
    fn the_home_slot_is_the_key_tables() {
        // Same probing as KeyTable: the home of a key from its check bits equals the home
        // computed from the key the way KeyTable does, at every table size.
        let mut t = SeqMap::new();
        for bits in [6u32, 10, 16] {
            t.slots = vec![0; 1 << bits];
            let mut x = 3u64;
            for _ in 0..1000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let region = ((x >> REGION_BITS) ^ t.seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let within = (x >> 3) as usize & 7;
                let want = ((region >> (64 - bits)) as usize + within) & (t.slots.len() - 1);
                assert_eq!(home(t.check(x), t.slots.len()), want);
            }
        }
    }
}
