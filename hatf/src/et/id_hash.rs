//! A fast hasher for the model's maps, whose keys are object, thread, site and method ids.
//!
//! std's default (SipHash) was 10–18 % of an Elephant Tracks encode or decode (`perf`), for
//! keys that are one or two integers. This one folds each integer into the state with one
//! 64×64→128-bit multiply. It is seeded once per process from std's random keys, so that a
//! crafted trace cannot aim at collisions (the maps are only looked up, never iterated, so the
//! seed changes no output).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

/// A `HashMap` keyed by ids, with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, IdBuild>;

/// A new, empty [`IdMap`].
pub fn id_map<K, V>() -> IdMap<K, V> {
    HashMap::with_hasher(IdBuild(seed()))
}

fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64) | 1)
}

/// Builds [`IdHasher`]s from the process's seed.
#[derive(Clone, Copy)]
pub struct IdBuild(u64);

impl BuildHasher for IdBuild {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(self.0)
    }
}

/// The hasher: state folded with each integer written.
pub struct IdHasher(u64);

const MUL: u64 = 0x9e37_79b9_7f4a_7c15;

impl IdHasher {
    #[inline]
    fn mix(&mut self, v: u64) {
        let m = u128::from(self.0 ^ v) * u128::from(MUL);
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }
}

impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.mix(u64::from(v));
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.mix(v);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.mix(v as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_spread_over_buckets() {
        // Sequential small ids and ids differing only in high bits must not collide in the
        // low bits the table indexes by.
        let b = IdBuild(seed());
        let mut low: std::collections::HashSet<u64> = Default::default();
        for k in 0..1024u64 {
            low.insert(b.hash_one(k) & 0xfff);
            low.insert(b.hash_one(k << 40) & 0xfff);
        }
        assert!(low.len() > 1500, "{} distinct of 2048", low.len());
    }
}
