//! The move-to-front list of a `keydelta` predictor: the most recent distinct nonzero
//! differences from its keyed guess, newest first. It holds at most [`KEY_DELTA_CAP`] values, so
//! a plain array searched from the front is faster than a hashed recency list (most hits are
//! among the first few).

use super::predict::KEY_DELTA_CAP;

/// Distinct values, newest first, at most [`KEY_DELTA_CAP`].
#[derive(Default)]
pub(crate) struct RecentDeltas {
    values: Vec<u64>,
}

/// Where `d` is in `values` (distinct), if it is. Most differences a measured `keydelta`
/// candidate sees are new, so most searches run the whole list: eight values are compared at
/// a time without a branch each, which the compiler turns into vector compares, where a
/// search stopping at the first match takes a branch per value, mispredicted as often as not.
#[inline]
fn find(values: &[u64], d: u64) -> Option<usize> {
    let mut chunks = values.chunks_exact(8);
    for (k, chunk) in (&mut chunks).enumerate() {
        let hits = chunk
            .iter()
            .enumerate()
            .fold(0u32, |m, (j, &x)| m | u32::from(x == d) << j);
        if hits != 0 {
            return Some(8 * k + hits.trailing_zeros() as usize);
        }
    }
    let rest = chunks.remainder();
    let start = values.len() - rest.len();
    rest.iter().position(|&x| x == d).map(|i| start + i)
}

impl RecentDeltas {
    /// Rank of `d` (0 = newest), if listed.
    #[inline]
    pub(crate) fn rank_of(&self, d: u64) -> Option<u64> {
        find(&self.values, d).map(|i| i as u64)
    }

    /// The value at `rank`, if the list holds that many.
    #[inline]
    pub(crate) fn at_rank(&self, rank: u64) -> Option<u64> {
        self.values.get(usize::try_from(rank).ok()?).copied()
    }

    /// Puts `d` at rank 0, moving it there if listed, else dropping the oldest when full.
    #[inline]
    pub(crate) fn insert(&mut self, d: u64) {
        let end = match find(&self.values, d) {
            Some(0) => return,
            Some(i) => i,
            None if self.values.len() < KEY_DELTA_CAP => {
                self.values.push(d);
                self.values.len() - 1
            }
            None => KEY_DELTA_CAP - 1,
        };
        self.values.copy_within(0..end, 1);
        self.values[0] = d;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_agrees_with_a_plain_search_at_every_length_and_place() {
        for len in 0..=KEY_DELTA_CAP {
            let values: Vec<u64> = (0..len as u64).map(|i| i * 3 + 1).collect();
            for d in 0..(3 * len as u64 + 3) {
                assert_eq!(find(&values, d), values.iter().position(|&x| x == d));
            }
        }
    }

    #[test]
    fn newest_first_distinct_and_capped() {
        let mut l = RecentDeltas::default();
        for d in [5, 7, 5, 9] {
            l.insert(d);
        }
        assert_eq!(l.rank_of(9), Some(0));
        assert_eq!(l.rank_of(5), Some(1));
        assert_eq!(l.rank_of(7), Some(2));
        assert_eq!(l.at_rank(1), Some(5));
        assert_eq!(l.at_rank(3), None);
        for d in 100..100 + KEY_DELTA_CAP as u64 {
            l.insert(d);
        }
        assert_eq!(l.rank_of(9), None, "the oldest values drop out");
        assert_eq!(l.rank_of(100), Some(KEY_DELTA_CAP as u64 - 1));
        assert_eq!(l.at_rank(0), Some(99 + KEY_DELTA_CAP as u64));
    }
}
