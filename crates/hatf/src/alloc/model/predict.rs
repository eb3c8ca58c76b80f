//! Small move-to-front caches: "which of the last few values is it" is a tiny symbol when
//! values repeat, which allocation traces do a lot (call sites, sizes per call site).

/// A move-to-front list of up to `N` values.
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
    pub fn find(&self, v: T) -> Option<usize> {
        self.items[..self.len].iter().position(|&x| x == v)
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

    /// Moves the value at position `i` (one of those cached) to the front: what [`Mtf::touch`]
    /// of that value does, without searching for it (cached values are distinct).
    #[inline(always)]
    pub fn promote(&mut self, i: usize) {
        debug_assert!(i < self.len);
        // The front value (the commonest symbol) stays where it is.
        if i == 0 {
            return;
        }
        let v = self.items[i];
        // Every position below `i` takes its predecessor's value: a fixed number of
        // conditional moves, where `copy_within` of a variable length was a `memmove` call
        // per record.
        let mut j = N - 1;
        while j > 0 {
            if j <= i {
                self.items[j] = self.items[j - 1];
            }
            j -= 1;
        }
        self.items[0] = v;
    }

    /// Moves `v` to the front (inserting it, dropping the last one when full).
    pub fn touch(&mut self, v: T) {
        let at = match self.find(v) {
            Some(i) => i,
            None => {
                if self.len < N {
                    self.len += 1;
                }
                self.len - 1
            }
        };
        let mut j = N - 1;
        while j > 0 {
            if j <= at {
                self.items[j] = self.items[j - 1];
            }
            j -= 1;
        }
        self.items[0] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
