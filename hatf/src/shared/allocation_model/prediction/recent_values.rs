//! Small move-to-front caches: "which of the last few values is it" is a tiny symbol when
//! values repeat, which allocation traces do a lot (call sites, sizes per call site).

/// A move-to-front list of up to `N` values (`N` below 32). A size cache
/// misses for most records of some traces (memory-replay threads ask for sizes all over), so
/// the miss path matters: the search compares every entry without stopping early (a fixed
/// number of compares, no mispredicted exit), and a value known to be absent goes in front
/// without being searched for again.
#[derive(Debug, Clone, Copy)]
pub struct Mtf<T: Copy + PartialEq + Default, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T: Copy + PartialEq + Default, const N: usize> Default for Mtf<T, N> {
    fn default() -> Self {
        Mtf {
            items: [T::default(); N],
            len: 0,
        }
    }
}

impl<T: Copy + PartialEq + Default, const N: usize> Mtf<T, N> {
    /// Position of `v`, if cached.
    #[inline(always)]
    pub fn find(&self, v: T) -> Option<usize> {
        // One bit per position holding `v` (at most one does), among the first `len`.
        const { assert!(N < 32, "a move-to-front list holds fewer than 32 values") };
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
        // Two compares (`len` is at most `N`, but the compiler cannot know): fewer
        // instructions than bounding `len` by `N` first, which took a conditional move.
        match self.items.get(i) {
            Some(&v) if i < self.len => Some(v),
            _ => None,
        }
    }

    /// Moves the value at position `i` (one of those cached) to the front: what
    /// [`Mtf::touch`] of that value does, without searching for it (cached values are
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
    /// [`Mtf::touch`] does for it, without the search. (Were `v` cached, it would be
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Random finds, gets, promotions, touches and insertions of new values give the same
    /// answers as a plain move-to-front list in a `Vec`, position for position.
    fn same_as_a_vec<const N: usize>(seed: u64, values: u64) {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut fast: Mtf<u64, N> = Mtf::default();
        // The reference: front first, at most `N` values.
        let mut plain: Vec<u64> = Vec::new();
        let plain_touch = |plain: &mut Vec<u64>, v: u64| {
            if let Some(i) = plain.iter().position(|&x| x == v) {
                plain.remove(i);
            }
            plain.insert(0, v);
            plain.truncate(N);
        };
        for _ in 0..20_000 {
            let v = next() % values;
            let found = plain.iter().position(|&x| x == v);
            assert_eq!(fast.find(v), found, "find {v}");
            match (next() % 3, found) {
                (0, _) => {
                    fast.touch(v);
                    plain_touch(&mut plain, v);
                }
                (1, Some(i)) => {
                    fast.promote(i);
                    plain_touch(&mut plain, v);
                }
                (1, None) => {
                    fast.insert_new(v);
                    plain_touch(&mut plain, v);
                }
                _ => {}
            }
            for i in 0..N + 2 {
                assert_eq!(fast.get(i), plain.get(i).copied(), "position {i}");
            }
        }
    }

    #[test]
    fn lists_keep_the_order_of_a_plain_move_to_front_list() {
        for seed in 1..6 {
            same_as_a_vec::<8>(seed, 12);
            same_as_a_vec::<8>(seed, 5);
            same_as_a_vec::<4>(seed, 7);
            same_as_a_vec::<4>(seed, 3);
        }
        // The value a new list's empty entries hold is not found.
        let r: Mtf<u32, 8> = Mtf::default();
        assert_eq!((r.find(0), r.get(0)), (None, None));
    }

    #[test]
    fn mtf_moves_to_front_and_drops_the_oldest() {
        let mut m: Mtf<u32, 3> = Mtf::default();
        for v in [1, 2, 3] {
            m.touch(v);
        }
        assert_eq!(m.find(1), Some(2));
        m.touch(1);
        assert_eq!((m.get(0), m.get(1), m.get(2)), (Some(1), Some(3), Some(2)));
        m.touch(4);
        assert_eq!(m.find(2), None);
        assert_eq!(m.get(3), None);
        let mut p = m;
        m.touch(3);
        p.promote(p.find(3).unwrap());
        assert_eq!(
            (m.get(0), m.get(1), m.get(2)),
            (p.get(0), p.get(1), p.get(2))
        );
    }
}
