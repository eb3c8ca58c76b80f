//! Guessing where the allocator will put the next block.
//!
//! Allocators reuse the most recently freed block of the same size class (glibc's tcache and
//! fastbins, jemalloc/scudo per-class free lists are all LIFO) and otherwise carve new blocks
//! from the end of the previous one. The guesses are numbered; the coder stores which one was
//! right, and only a wrong guess costs an address delta.

use crate::alloc::fast_hash::FastMap;

/// Freed addresses remembered per size class.
const LIFO_DEPTH: usize = 8;

/// Which guess a block address matched.
pub mod guess {
    /// The newest freed block of the same size class (index 0); 1..=7 are the older ones.
    pub const LIFO0: u8 = 0;
    /// The block freed by the most recent free (realloc in place, free-then-malloc).
    pub const LAST_FREED: u8 = 8;
    /// Right after the previous allocation's chunk.
    pub const AFTER_PREVIOUS: u8 = 9;
    /// The current top of the heap (end of the last block carved from fresh memory).
    pub const TOP: u8 = 10;
    /// The next slot after the last block allocated in the same size class (slab/run
    /// allocators such as jemalloc carve a class's blocks side by side).
    pub const CLASS_NEXT: u8 = 11;
    /// None matched: a zigzag delta from the after-previous guess follows.
    pub const MISS: u8 = 12;
}

/// The size class a block belongs to, as far as reuse goes: `key` groups blocks that can
/// replace one another, `step` is the distance between neighbouring blocks of the class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    /// Blocks with the same key share a free list.
    pub key: u64,
    /// Bytes a block of the class occupies.
    pub step: u64,
}

impl Class {
    /// glibc: chunk size, one free list per chunk size for all threads.
    pub fn glibc(size: u64) -> Class {
        let c = chunk_size(size);
        Class { key: c, step: c }
    }
}

/// What the predictor remembers about one size class.
#[derive(Debug, Clone, Copy, Default)]
struct ClassState {
    /// Freed addresses, oldest first; `freed[..freed_len]` are valid.
    freed: [u64; 2 * LIFO_DEPTH],
    freed_len: usize,
    /// The last block allocated in the class.
    last: Option<u64>,
}

impl ClassState {
    fn freed(&self) -> &[u64] {
        &self.freed[..self.freed_len]
    }
}

/// Allocator-shaped address predictor, identical in encoder and decoder.
#[derive(Debug, Default)]
pub struct AddrPredictor {
    /// Per size class key: one map lookup per event gives both the free list and the last
    /// allocation.
    classes: FastMap<u64, ClassState>,
    last_freed: u64,
    after_previous: u64,
    top: u64,
}

/// The error for an address guess that a (damaged) stream names but the state lacks.
#[cold]
fn unavailable(symbol: u8) -> String {
    format!("address guess {symbol} is not available here")
}

/// glibc's chunk size for a request: size + 8 bytes of header, 16-byte aligned, at least 32.
pub fn chunk_size(size: u64) -> u64 {
    (size.saturating_add(8 + 15) & !15).max(32)
}

impl AddrPredictor {
    /// The guesses for a block of `size` bytes, in symbol order (`None` where a guess is
    /// unavailable).
    fn candidates(&self, class: Class) -> [Option<u64>; 12] {
        let mut c = [None; 12];
        let state = self.classes.get(&class.key);
        if let Some(st) = state {
            for (i, &a) in st.freed().iter().rev().take(LIFO_DEPTH).enumerate() {
                c[i] = Some(a);
            }
        }
        c[guess::LAST_FREED as usize] = Some(self.last_freed);
        c[guess::AFTER_PREVIOUS as usize] = Some(self.after_previous);
        c[guess::TOP as usize] = Some(self.top);
        c[guess::CLASS_NEXT as usize] = state
            .and_then(|st| st.last)
            .map(|a| a.wrapping_add(class.step));
        c
    }

    /// The symbol for `addr` and, on a miss, the delta to store.
    pub fn classify(&self, class: Class, addr: u64) -> (u8, i64) {
        let c = self.candidates(class);
        // Fixed preference order so a value matched by several guesses gets one symbol.
        for s in [0u8, 8, 9, 10, 11, 1, 2, 3, 4, 5, 6, 7] {
            if c[s as usize] == Some(addr) {
                return (s, 0);
            }
        }
        (guess::MISS, addr.wrapping_sub(self.after_previous) as i64)
    }

    /// The address a symbol (and, for a miss, delta) stands for.
    pub fn resolve(&self, class: Class, symbol: u8, delta: i64) -> Result<u64, String> {
        if symbol == guess::MISS {
            return Ok(self.after_previous.wrapping_add(delta as u64));
        }
        self.candidates(class)
            .get(symbol as usize)
            .copied()
            .flatten()
            .ok_or_else(|| unavailable(symbol))
    }

    /// [`Self::resolve`] then [`Self::allocated`] with the address found, looking the class up
    /// once: what a decoder does for every new block.
    #[inline]
    pub fn resolve_allocated(
        &mut self,
        class: Class,
        symbol: u8,
        delta: i64,
    ) -> Result<u64, String> {
        let st = self.classes.entry(class.key).or_default();
        let addr = match symbol {
            guess::LAST_FREED => self.last_freed,
            guess::AFTER_PREVIOUS => self.after_previous,
            guess::TOP => self.top,
            guess::MISS => self.after_previous.wrapping_add(delta as u64),
            guess::CLASS_NEXT => match st.last {
                Some(a) => a.wrapping_add(class.step),
                None => return Err(unavailable(symbol)),
            },
            // LIFO0..: the newest freed block of the class first.
            s if usize::from(s) < LIFO_DEPTH.min(st.freed_len) => {
                st.freed[st.freed_len - 1 - usize::from(s)]
            }
            s => return Err(unavailable(s)),
        };
        st.last = Some(addr);
        if let Some(i) = st.freed().iter().rposition(|&a| a == addr) {
            st.freed.copy_within(i + 1..st.freed_len, i);
            st.freed_len -= 1;
        }
        self.moved_to(class.step, addr, symbol);
        Ok(addr)
    }

    /// Records that a block of `class` now lives at `addr`.
    pub fn allocated(&mut self, class: Class, addr: u64, symbol: u8) {
        let chunk = class.step;
        let st = self.classes.entry(class.key).or_default();
        st.last = Some(addr);
        if let Some(i) = st.freed().iter().rposition(|&a| a == addr) {
            st.freed.copy_within(i + 1..st.freed_len, i);
            st.freed_len -= 1;
        }
        self.moved_to(chunk, addr, symbol);
    }

    /// Moves the top and after-previous guesses past a block of `chunk` bytes just allocated
    /// at `addr` (guessed by `symbol`).
    #[inline]
    fn moved_to(&mut self, chunk: u64, addr: u64, symbol: u8) {
        let end = addr.wrapping_add(chunk);
        // The top moves when the block came from fresh memory: at the top, or a little above it.
        if symbol == guess::TOP
            || symbol == guess::AFTER_PREVIOUS && addr >= self.top
            || symbol == guess::MISS && addr >= self.top && addr - self.top < (1 << 24)
            || self.top == 0
        {
            self.top = end;
        }
        self.after_previous = end;
    }

    /// Records that the block at `addr` of `class` was freed.
    pub fn freed(&mut self, class: Class, addr: u64) {
        let st = self.classes.entry(class.key).or_default();
        if st.freed_len == 2 * LIFO_DEPTH {
            // Keep the newest; only LIFO_DEPTH of them are ever guessed.
            st.freed.copy_within(LIFO_DEPTH.., 0);
            st.freed_len -= LIFO_DEPTH;
        }
        st.freed[st.freed_len] = addr;
        st.freed_len += 1;
        self.last_freed = addr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuse_of_a_freed_block_is_guessed() {
        let mut p = AddrPredictor::default();
        let g = Class::glibc;
        p.allocated(g(24), 0x1000, guess::MISS);
        p.allocated(g(24), 0x1020, guess::AFTER_PREVIOUS);
        assert_eq!(p.classify(g(40), 0x1040), (guess::AFTER_PREVIOUS, 0));
        p.freed(g(24), 0x1000);
        p.allocated(g(100), 0x5000, guess::MISS);
        assert_eq!(p.classify(g(20), 0x1000), (guess::LIFO0, 0));
        let (s, d) = p.classify(g(20), 0x9000);
        assert_eq!(s, guess::MISS);
        assert_eq!(p.resolve(g(20), s, d), Ok(0x9000));
    }

    #[test]
    fn resolve_allocated_is_resolve_then_allocated() {
        // Two predictors fed the same events, one through each path, must agree on every
        // guess (all 13 symbols, available or not) after every step.
        let g = Class::glibc;
        let (mut a, mut b) = (AddrPredictor::default(), AddrPredictor::default());
        let mut x = 0x1000u64;
        for step in 0..2000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let class = g((x >> 20) % 200);
            if x.is_multiple_of(3) {
                let addr = 0x1000 + ((x >> 8) % 64) * 16;
                a.freed(class, addr);
                b.freed(class, addr);
                continue;
            }
            let symbol = ((x >> 40) % 13) as u8;
            let delta = ((x >> 12) % 4096) as i64 - 2048;
            let expected = a.resolve(class, symbol, delta);
            let got = b.resolve_allocated(class, symbol, delta);
            assert_eq!(got, expected, "step {step}");
            if let Ok(addr) = expected {
                a.allocated(class, addr, symbol);
            }
            for s in 0..13u8 {
                assert_eq!(
                    a.resolve(class, s, 5),
                    b.resolve(class, s, 5),
                    "step {step}"
                );
            }
        }
    }
}
