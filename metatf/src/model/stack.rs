//! The state of the `stack` predictor (docs/FORMAT.md §7): the values another record opened
//! and the own record has not yet closed, innermost last. A call trace's exit names the
//! innermost open entry; a `live` list ranks it first too, but loses it when the same value is
//! open twice (recursion), and a guess needs no rank symbol.

use std::collections::VecDeque;

/// Most values a stack holds; one more drops the outermost. Bounds memory on a trace whose
/// entries are never closed.
pub(crate) const STACK_CAP: usize = 1 << 16;
/// How deep below the top a closing value is looked for: an exit that matches none of the
/// innermost entries leaves the stack as it is (a record lost or out of order), rather than
/// emptying it.
pub(crate) const STACK_SEARCH: usize = 64;

/// Open values, innermost last.
#[derive(Default)]
pub(crate) struct OpenStack {
    open: VecDeque<u64>,
}

impl OpenStack {
    /// The innermost open value, or 0 when none is open.
    #[inline]
    pub(crate) fn top(&self) -> u64 {
        self.open.back().copied().unwrap_or(0)
    }

    /// The watched (opening) stream named `v`.
    pub(crate) fn open(&mut self, v: u64) {
        if self.open.len() == STACK_CAP {
            self.open.pop_front();
        }
        self.open.push_back(v);
    }

    /// The own (closing) stream named `v`: the innermost open `v` within [`STACK_SEARCH`] of
    /// the top is closed, with every value opened inside it.
    pub(crate) fn close(&mut self, v: u64) {
        let n = self.open.len();
        if let Some(d) = self
            .open
            .iter()
            .rev()
            .take(STACK_SEARCH)
            .position(|&x| x == v)
        {
            self.open.truncate(n - d - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closes_the_innermost_match_and_ignores_strangers() {
        let mut s = OpenStack::default();
        assert_eq!(s.top(), 0);
        for v in [1, 2, 3, 2, 4] {
            s.open(v);
        }
        assert_eq!(s.top(), 4);
        s.close(2);
        assert_eq!(s.top(), 3);
        s.close(9);
        assert_eq!(s.top(), 3);
        s.close(1);
        assert_eq!(s.top(), 0);
    }

    #[test]
    fn holds_at_most_its_cap() {
        let mut s = OpenStack::default();
        for v in 0..(STACK_CAP as u64 + 10) {
            s.open(v);
        }
        assert_eq!(s.open.len(), STACK_CAP);
        assert_eq!(s.open.front().copied(), Some(10));
    }
}
