//! Guessing where the allocator will put the next block.
//!
//! Allocators reuse the most recently freed block of the same size class (glibc's tcache and
//! fastbins, jemalloc/scudo per-class free lists are all LIFO) and otherwise carve new blocks
//! from the end of the previous one. The guesses are numbered; the coder stores which one was
//! right, and only a wrong guess costs an address delta.

use crate::shared::huge_pages;
use crate::shared::key_table::KeyTable;

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
    /// A flag added to any of the symbols above when the address was
    /// still a live block (its rank follows in the relive stream).
    pub const RELIVE: u8 = 0x80;
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
    #[inline]
    pub fn glibc(size: u64) -> Class {
        let c = chunk_size(size);
        Class { key: c, step: c }
    }
}

/// What the predictor remembers about one size class.
#[derive(Debug, Clone, Copy, Default)]
struct ClassState {
    /// Freed addresses, oldest first; `freed[..freed_len]` are valid, and `freed_len` is at
    /// most `2 * LIFO_DEPTH`. The `LIFO_DEPTH` entries past that are room for
    /// [`ClassState::remove_at`]'s copy of a fixed length.
    freed: [u64; 3 * LIFO_DEPTH],
    freed_len: usize,
    /// The last block allocated in the class.
    last: Option<u64>,
}

impl ClassState {
    fn freed(&self) -> &[u64] {
        &self.freed[..self.freed_len]
    }

    /// Appends a freed address (the list has room).
    #[inline(always)]
    fn push(&mut self, addr: u64) {
        self.freed[self.freed_len] = addr;
        self.freed_len += 1;
    }

    /// Drops all but the newest `keep` freed entries (`keep` <= `freed_len`).
    fn keep_newest(&mut self, keep: usize) {
        let n = self.freed_len.min(2 * LIFO_DEPTH);
        self.freed.copy_within(n - keep..n, 0);
        self.freed_len = keep;
    }

    /// Drops the freed entry at `i` (< `freed_len`).
    #[inline(always)]
    fn remove_at(&mut self, i: usize) {
        let n = self.freed_len;
        // The newest entry (most often) goes without a copy: a copy of no entries was still a
        // call to `memmove`.
        if i + 1 < n {
            // The entries after `i` are few (a LIFO guess names one of the newest
            // `LIFO_DEPTH`): copying `LIFO_DEPTH` of them, a fixed length, is a few moves,
            // where the copy of the exact, variable length was a call to `memmove`. What is
            // copied past the list's end is never read.
            let fixed_end = i + 1 + LIFO_DEPTH;
            if n <= fixed_end && fixed_end <= self.freed.len() {
                self.freed.copy_within(i + 1..fixed_end, i);
            } else {
                self.freed.copy_within(i + 1..n.min(2 * LIFO_DEPTH), i);
            }
        }
        self.freed_len = n - 1;
    }

    /// Drops the newest freed entry equal to `addr`, if any (the block is in use again).
    #[inline(always)]
    fn forget(&mut self, addr: u64) {
        let n = self.freed_len;
        // Most reused blocks are the newest freed one (the LIFO guess): drop it without a copy.
        if n > 0 && self.freed[n - 1] == addr {
            self.remove_at(n - 1);
            return;
        }
        self.forget_older(addr, 1);
    }

    /// [`Self::forget`] of an address known not to be among the newest `skip` entries: only
    /// the older ones are searched. A decoder knows that much from the symbol the encoder
    /// chose (see [`AddrPredictor::resolve_allocated`]), and the search of the entries a
    /// guess had already ruled out was most of the work of an allocation that no LIFO guess
    /// named.
    #[inline(always)]
    fn forget_older(&mut self, addr: u64, skip: usize) {
        // At most `2 * LIFO_DEPTH` entries are listed: so the loads need no check.
        let n = self.freed_len.min(2 * LIFO_DEPTH);
        let mut i = n.saturating_sub(skip);
        while i > 0 {
            i -= 1;
            if self.freed[i] == addr {
                self.remove_found(i);
                return;
            }
        }
    }

    /// [`Self::forget`] of `addr` just given `symbol` by [`AddrPredictor::classify_allocated`]:
    /// the guesses tried before it rule entries out, as they do for a decoder (see
    /// [`AddrPredictor::resolve_allocated`]): a LIFO symbol names the entry (the newest
    /// matching one), a miss rules out every LIFO entry, any other symbol the newest. (A
    /// search from the newest entry would cost a sixth of `classify_allocated`.)
    #[inline(always)]
    fn forget_guessed(&mut self, symbol: u8, addr: u64) {
        let lifo = LIFO_DEPTH.min(self.freed_len);
        match usize::from(symbol) {
            s if s < lifo => self.remove_at(self.freed_len - 1 - s),
            _ if symbol == guess::MISS => self.forget_older(addr, LIFO_DEPTH),
            _ => self.forget_older(addr, 1),
        }
    }

    /// [`Self::remove_at`] for [`Self::forget_older`], out of line: an address that a guess
    /// other than its LIFO one names is seldom listed (about one in seventy such allocations),
    /// and the removal's set-up, inlined, is hoisted ahead of the search, a score of
    /// instructions for every one of them.
    #[inline(never)]
    fn remove_found(&mut self, i: usize) {
        self.remove_at(i);
    }
}

/// The slots of [`AddrPredictor::recent`], a fixed number: a slot is found by its index alone,
/// with no length to check (a cache allocated on first use had a check of its length on
/// every lookup).
#[derive(Debug, Clone)]
struct RecentClasses(Box<[(u64, u32); RECENT]>);

impl Default for RecentClasses {
    fn default() -> Self {
        RecentClasses(Box::new([(0, 0); RECENT]))
    }
}

/// Allocator-shaped address predictor, identical in encoder and decoder.
#[derive(Debug, Default)]
pub struct AddrPredictor {
    /// Size class key → its index in `states`: one lookup per event gives both the free list
    /// and the last allocation.
    classes: KeyTable,
    /// What is remembered per size class, in order of first use.
    states: Vec<ClassState>,
    /// A direct-mapped cache in front of `classes`: slot [`recent_slot`] of a key holds the
    /// last key looked up there and its index + 1 in `states` (0 = none). A program uses a
    /// few dozen classes at a time, so nearly every lookup (two per record) is answered
    /// here, with one load and no probing, and the state's load need not wait for it.
    recent: RecentClasses,
    last_freed: u64,
    after_previous: u64,
    top: u64,
}

/// The error for an address guess that a (damaged) stream names but the state lacks.
#[cold]
pub(in crate::internal::shared::allocation_model) fn unavailable(symbol: u8) -> String {
    format!("address guess {symbol} is not available here")
}

/// Slots of [`AddrPredictor::recent`].
const RECENT: usize = 256;

/// The slot of `key` in [`AddrPredictor::recent`]: the top bits of a multiplicative hash, which
/// mix the size bits with the high bits where front ends put a thread (see
/// `memory_replay::model`).
#[inline]
fn recent_slot(key: u64) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - RECENT.trailing_zeros())) as usize
}

/// glibc's chunk size for a request: size + 8 bytes of header, 16-byte aligned, at least 32.
#[inline]
pub fn chunk_size(size: u64) -> u64 {
    (size.saturating_add(8 + 15) & !15).max(32)
}

impl AddrPredictor {
    /// The after-previous guess: the end of the last block allocated.
    #[inline]
    pub fn after_previous(&self) -> u64 {
        self.after_previous
    }

    /// Back to the state of a new predictor, keeping the memory.
    pub fn clear(&mut self) {
        self.classes.clear();
        self.states.clear();
        self.recent.0.fill((0, 0));
        self.last_freed = 0;
        self.after_previous = 0;
        self.top = 0;
    }

    /// The guesses for a block of `size` bytes, in symbol order (`None` where a guess is
    /// unavailable).
    fn candidates(&self, class: Class) -> [Option<u64>; 12] {
        let mut c = [None; 12];
        let state = self.classes.get(class.key).map(|i| &self.states[i]);
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

    /// The state of the class `key`, a fresh one on first use (the fields are passed apart so
    /// callers can keep using the predictor's other fields).
    #[inline(always)]
    fn state<'s>(
        classes: &mut KeyTable,
        states: &'s mut Vec<ClassState>,
        recent: &mut RecentClasses,
        key: u64,
    ) -> &'s mut ClassState {
        let (k, r) = recent.0[recent_slot(key)];
        let i = (r as usize).wrapping_sub(1);
        if k == key && i < states.len() {
            return &mut states[i];
        }
        Self::state_slow(classes, states, recent, key)
    }

    /// [`Self::state`] for a key not in the cache.
    #[cold]
    #[inline(never)]
    fn state_slow<'s>(
        classes: &mut KeyTable,
        states: &'s mut Vec<ClassState>,
        recent: &mut RecentClasses,
        key: u64,
    ) -> &'s mut ClassState {
        let next = states.len();
        let i = classes.get_or_insert(key, next);
        if i == next {
            // Each new class writes a fresh part of a table that only grows: see
            // `grow_when_full`.
            huge_pages::grow_when_full(states);
            states.push(ClassState::default());
        }
        // A class takes a record to create, so there are fewer than u32::MAX; were there
        // more, the entry would say "none".
        recent.0[recent_slot(key)] = (key, u32::try_from(i + 1).unwrap_or(0));
        &mut states[i]
    }

    /// [`Self::classify`] then [`Self::allocated`] with the symbol found, looking the class up
    /// once and testing the guesses without building them all: what an encoder does for every
    /// new block.
    #[inline]
    pub fn classify_allocated(&mut self, class: Class, addr: u64) -> (u8, i64) {
        let (last_freed, after_previous, top) = (self.last_freed, self.after_previous, self.top);
        let st = Self::state(
            &mut self.classes,
            &mut self.states,
            &mut self.recent,
            class.key,
        );
        let lifo = LIFO_DEPTH.min(st.freed_len);
        // The preference order of `classify`: LIFO0, LAST_FREED, AFTER_PREVIOUS, TOP,
        // CLASS_NEXT, LIFO1..LIFO7.
        let n = st.freed_len;
        let symbol = if lifo > 0 && st.freed[n - 1] == addr {
            // The newest entry goes, with no copy: taken apart from the other symbols, the
            // most common allocation skips `forget_guessed`'s tests.
            st.remove_at(n - 1);
            guess::LIFO0
        } else {
            let newest = |i: usize| st.freed[n - 1 - i];
            let symbol = if last_freed == addr {
                guess::LAST_FREED
            } else if after_previous == addr {
                guess::AFTER_PREVIOUS
            } else if top == addr {
                guess::TOP
            } else if st.last.map(|a| a.wrapping_add(class.step)) == Some(addr) {
                guess::CLASS_NEXT
            } else {
                match (1..lifo).find(|&i| newest(i) == addr) {
                    Some(i) => i as u8,
                    None => guess::MISS,
                }
            };
            st.forget_guessed(symbol, addr);
            symbol
        };
        let delta = if symbol == guess::MISS {
            addr.wrapping_sub(after_previous) as i64
        } else {
            0
        };
        st.last = Some(addr);
        self.moved_to(class.step, addr, symbol);
        (symbol, delta)
    }

    /// [`Self::resolve`] then [`Self::allocated`] with the address found, looking the class up
    /// once: what a decoder does for every new block.
    #[inline(always)]
    pub fn resolve_allocated(
        &mut self,
        class: Class,
        symbol: u8,
        delta: i64,
    ) -> Result<u64, String> {
        let st = Self::state(
            &mut self.classes,
            &mut self.states,
            &mut self.recent,
            class.key,
        );
        // A LIFO guess names its entry: the encoder gives the smallest LIFO symbol that
        // matches (see `classify_allocated`), so no newer entry holds the address and the
        // entry is the one `forget` would search for.
        let s = usize::from(symbol);
        if s < LIFO_DEPTH.min(st.freed_len) {
            let i = st.freed_len - 1 - s;
            let addr = st.freed[i];
            st.last = Some(addr);
            st.remove_at(i);
            // Every LIFO symbol moves the guesses alike: named as the first, the tests of
            // `moved_to` for the other symbols fold away.
            self.moved_to(class.step, addr, guess::LIFO0);
            return Ok(addr);
        }
        // The encoder tries the guesses in a fixed order (see `classify_allocated`): the
        // newest freed block first, and every LIFO guess before giving a miss. So the newest
        // entry does not hold the address of another symbol, and none of the newest
        // `LIFO_DEPTH` holds that of a miss: the search for the entry to forget skips them.
        // (In a damaged block this forgets a different entry, which decodes garbage but
        // never panics.)
        let (addr, ruled_out) = match symbol {
            guess::LAST_FREED => (self.last_freed, 1),
            guess::AFTER_PREVIOUS => (self.after_previous, 1),
            guess::TOP => (self.top, 1),
            guess::MISS => (self.after_previous.wrapping_add(delta as u64), LIFO_DEPTH),
            guess::CLASS_NEXT => match st.last {
                Some(a) => (a.wrapping_add(class.step), 1),
                None => return Err(unavailable(symbol)),
            },
            s => return Err(unavailable(s)),
        };
        st.last = Some(addr);
        st.forget_older(addr, ruled_out);
        self.moved_to(class.step, addr, symbol);
        Ok(addr)
    }

    /// Records that a block of `class` now lives at `addr`.
    pub fn allocated(&mut self, class: Class, addr: u64, symbol: u8) {
        let chunk = class.step;
        let st = Self::state(
            &mut self.classes,
            &mut self.states,
            &mut self.recent,
            class.key,
        );
        st.last = Some(addr);
        st.forget(addr);
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
    #[inline(always)]
    pub fn freed(&mut self, class: Class, addr: u64) {
        let st = Self::state(
            &mut self.classes,
            &mut self.states,
            &mut self.recent,
            class.key,
        );
        if st.freed_len == 2 * LIFO_DEPTH {
            // Keep the newest; only LIFO_DEPTH of them are ever guessed.
            st.keep_newest(LIFO_DEPTH);
        }
        st.push(addr);
        self.last_freed = addr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_state_keeps_the_list_a_plain_search_keeps() {
        // Against a list kept by plain searches, through pushes, cuts, removals of the newest
        // entry, of older ones and of absent addresses, with repeated addresses.
        let mut st = ClassState::default();
        let mut plain: Vec<u64> = Vec::new();
        let mut x = 77u64;
        let (mut absent, mut removed_older, mut skipped_found) = (0, 0, 0);
        for step in 0..200_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let addr = 0x1000 + ((x >> 20) % 40) * 48;
            match (x >> 60) % 4 {
                0 | 1 => {
                    if plain.len() == 2 * LIFO_DEPTH {
                        plain.drain(..LIFO_DEPTH);
                        st.keep_newest(LIFO_DEPTH);
                    }
                    plain.push(addr);
                    st.push(addr);
                }
                2 if !plain.is_empty() && x.is_multiple_of(5) => {
                    // A LIFO guess: the newest entry equal to it.
                    let k = (x >> 8) as usize % plain.len().min(LIFO_DEPTH);
                    let i = plain.len() - 1 - k;
                    if plain[i + 1..].contains(&plain[i]) {
                        continue;
                    }
                    plain.remove(i);
                    st.remove_at(i);
                }
                2 if x.is_multiple_of(3) => {
                    // An address known not to be among the newest `skip`: only the older
                    // entries are searched.
                    let skip = (x >> 8) as usize % (LIFO_DEPTH + 2);
                    let older = plain.len().saturating_sub(skip);
                    if let Some(i) = plain[..older].iter().rposition(|&a| a == addr) {
                        skipped_found += 1;
                        plain.remove(i);
                    }
                    st.forget_older(addr, skip);
                }
                _ => {
                    absent += usize::from(!plain.contains(&addr));
                    if let Some(i) = plain.iter().rposition(|&a| a == addr) {
                        removed_older += usize::from(i + 1 < plain.len());
                        plain.remove(i);
                    }
                    st.forget(addr);
                }
            }
            assert_eq!(st.freed(), &plain[..], "step {step}");
        }
        assert!(
            absent > 1000 && removed_older > 1000 && skipped_found > 1000,
            "{absent} {removed_older} {skipped_found}"
        );
    }

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

    /// Checks that `a` and `b` resolve every symbol of `class` to the same address (or
    /// refuse it alike), after `step` steps.
    fn assert_same_guesses(a: &AddrPredictor, b: &AddrPredictor, class: Class, step: u64) {
        for s in 0..13u8 {
            assert_eq!(
                a.resolve(class, s, 5),
                b.resolve(class, s, 5),
                "step {step}"
            );
        }
    }

    #[test]
    fn classify_allocated_is_classify_then_allocated() {
        // Same events through both paths; symbols, deltas and every later guess must agree.
        // Addresses come from a small range so that every guess matches now and then.
        let g = Class::glibc;
        let (mut a, mut b) = (AddrPredictor::default(), AddrPredictor::default());
        let mut x = 0x2000u64;
        let mut seen = [false; 13];
        for step in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let class = g((x >> 20) % 64);
            let addr = 0x1000 + ((x >> 8) % 48) * 16;
            if x.is_multiple_of(3) {
                a.freed(class, addr);
                b.freed(class, addr);
                continue;
            }
            // The top guess matches only an address at the top.
            let addr = if (x >> 50).is_multiple_of(5) {
                a.top
            } else {
                addr
            };
            let expected = a.classify(class, addr);
            a.allocated(class, addr, expected.0);
            assert_eq!(b.classify_allocated(class, addr), expected, "step {step}");
            seen[expected.0 as usize] = true;
            // The whole lists too: entries past the guessed ones come into view later.
            let lists = |p: &AddrPredictor| -> Vec<Vec<u64>> {
                p.states.iter().map(|st| st.freed().to_vec()).collect()
            };
            assert_eq!(lists(&a), lists(&b), "step {step}");
            assert_same_guesses(&a, &b, class, step);
        }
        assert!(
            seen.iter().all(|&s| s),
            "every symbol was exercised: {seen:?}"
        );
    }

    #[test]
    fn resolve_allocated_is_resolve_then_allocated() {
        // Two predictors fed the same events, one through each path, must agree on every
        // guess (all 13 symbols, available or not) after every step. A symbol naming an
        // address is one an encoder gives, the one `classify` picks (the decoder relies on
        // that order, see `resolve_allocated`).
        let g = Class::glibc;
        let (mut a, mut b) = (AddrPredictor::default(), AddrPredictor::default());
        let mut x = 0x1000u64;
        let (mut older_lifo, mut forgotten) = (0, 0);
        for step in 0..20_000u64 {
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
            if let Ok(addr) = expected {
                if a.classify(class, addr).0 != symbol {
                    continue;
                }
                let lifo = symbol < LIFO_DEPTH as u8;
                older_lifo += usize::from(lifo && symbol > 0);
                // Another symbol whose address is among the freed ones: the entry must go.
                let listed = a.classes.get(class.key).map(|i| a.states[i].freed());
                forgotten += usize::from(!lifo && listed.is_some_and(|f| f.contains(&addr)));
            }
            let got = b.resolve_allocated(class, symbol, delta);
            assert_eq!(got, expected, "step {step}");
            if let Ok(addr) = expected {
                a.allocated(class, addr, symbol);
            }
            assert_same_guesses(&a, &b, class, step);
        }
        assert!(
            older_lifo > 100 && forgotten > 100,
            "LIFO symbols past the newest: {older_lifo}, freed blocks named otherwise: {forgotten}"
        );
    }
}
