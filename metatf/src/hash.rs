//! The one hasher of the maps keyed by trace values (addresses, object ids, small ids), here and
//! in the crates built on this one.
//!
//! Models look up a few hash maps per record (live blocks, recency lists, dictionaries, caches
//! keyed by call site); with std's SipHash that hashing was a third of all instructions of an
//! encode. Keys are addresses and small ids, so one folded 64×64→128-bit multiply mixes them
//! well enough, and the final fold brings the high bits down to the low ones the table indexes
//! by, which aligned addresses leave constant. The seed comes from std's per-process random
//! keys, so colliding keys cannot be prepared in advance from the binary alone; a map that uses
//! it must therefore never let its iteration order reach what is written.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};

/// An odd constant with well-spread bits (from the digits of π).
const MIX: u64 = 0x243f_6a88_85a3_08d3;

/// Multiplies and folds the 128-bit product into 64 bits: the mixing step of [`FastHasher`],
/// and of the hashers of longer keys built on it in other crates.
#[inline]
pub fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Builds [`FastHasher`]s from one random seed.
#[derive(Debug, Clone, Copy)]
pub struct FastState {
    seed: u64,
}

impl Default for FastState {
    fn default() -> Self {
        FastState {
            seed: std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64) | 1,
        }
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher { h: self.seed }
    }
}

/// A multiply-fold hasher for integer keys (byte strings are folded 8 bytes at a time).
#[derive(Debug, Clone, Copy)]
pub struct FastHasher {
    h: u64,
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        // The length goes in too, so "ab" and "ab\0" differ.
        self.write_u64(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
    }

    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.h = fold_mul(self.h ^ v, MIX);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        // One more round so the last word's high bits reach the low bits hashbrown indexes by.
        fold_mul(self.h, MIX ^ 0x9e37_79b9_7f4a_7c15)
    }
}

/// A `HashMap` with the fast hasher.
pub type FastMap<K, V> = HashMap<K, V, FastState>;
/// A `HashSet` with the fast hasher.
pub type FastSet<K> = HashSet<K, FastState>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_equal_and_neighbours_differ() {
        let s = FastState::default();
        assert_eq!(s.hash_one(42u64), s.hash_one(42u64));
        assert_ne!(s.hash_one(0x1000u64), s.hash_one(0x1010u64));
        assert_ne!(s.hash_one(&b"ab"[..]), s.hash_one(&b"ab\0"[..]));
        let mut m: FastMap<u64, u32> = FastMap::default();
        for a in 0..10_000u64 {
            m.insert(a * 16, a as u32);
        }
        assert_eq!(m.get(&(16 * 777)), Some(&777));
        assert_eq!(m.len(), 10_000);
    }
}
