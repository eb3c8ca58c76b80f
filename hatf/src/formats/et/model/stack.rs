//! One thread's call stack as the model keeps it: the most recent [`STACK_LIMIT`] method ids.
//!
//! A `VecDeque` would do this with a wrap-around index on every push and read (a third of the
//! cost of a method entry in a decode). Here the frames are a plain vector read from
//! `base`: when the stack is full a push moves `base` up instead of shifting the frames, and
//! the dropped frames are cut off in one go once there are as many of them as frames kept.

/// Deepest call stack remembered per thread.
pub const STACK_LIMIT: usize = 1 << 16;

/// A call stack that forgets its oldest frames beyond [`STACK_LIMIT`].
#[derive(Default)]
pub struct CallStack {
    /// Frames, oldest first; those before `base` are forgotten.
    frames: Vec<u64>,
    base: usize,
}

impl CallStack {
    /// Number of frames kept.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.frames.len() - self.base
    }

    /// Pushes `method`, forgetting the oldest frame when the stack is full.
    #[inline]
    pub fn push(&mut self, method: u64) {
        if self.len() == STACK_LIMIT {
            self.forget_oldest();
        }
        self.frames.push(method);
    }

    #[cold]
    fn forget_oldest(&mut self) {
        self.base += 1;
        if self.base >= STACK_LIMIT {
            self.frames.drain(..self.base);
            self.base = 0;
        }
    }

    /// The frame `depth` below the top (0 = the top), if kept.
    #[cfg(test)]
    pub fn below_top(&self, depth: usize) -> Option<u64> {
        let i = self.len().checked_sub(depth + 1)?;
        Some(self.frames[self.base + i])
    }

    /// Keeps only the oldest `len` frames (no change when there are fewer).
    #[inline(always)]
    pub fn truncate(&mut self, len: usize) {
        self.frames.truncate(self.base + len);
    }

    /// Removes the frame `depth` below the top (0 = the top) and every frame above it, and
    /// returns it; `None` (and no change) when that frame is not kept. What
    /// [`CallStack::below_top`] and [`CallStack::truncate`] do for a method exit, with one
    /// test instead of three.
    #[inline(always)]
    pub fn exit(&mut self, depth: usize) -> Option<u64> {
        let i = self.frames.len().checked_sub(depth)?.checked_sub(1)?;
        if i < self.base {
            return None;
        }
        let m = self.frames[i];
        self.frames.truncate(i);
        Some(m)
    }

    /// Where `method` is below the top (0 = the top), looking at most `limit` frames down.
    #[inline]
    pub fn find(&self, method: u64, limit: usize) -> Option<usize> {
        self.frames[self.base..]
            .iter()
            .rev()
            .take(limit)
            .position(|&m| m == method)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Pushes, exits and searches agree with a `VecDeque` that drops its front at the limit,
    /// also on stacks far deeper than the limit.
    #[test]
    fn agrees_with_a_bounded_deque() {
        let mut s = CallStack::default();
        let mut d: VecDeque<u64> = VecDeque::new();
        let mut x = 3u64;
        for step in 0..600_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly pushes during the first half (to go past the limit), then mostly pops.
            let push = if step < 300_000 {
                x >> 62 != 0
            } else {
                x >> 62 == 0
            };
            if push {
                let m = (x >> 20) % 50;
                if d.len() == STACK_LIMIT {
                    d.pop_front();
                }
                d.push_back(m);
                s.push(m);
            } else {
                let m = (x >> 30) % 50;
                let want = d.iter().rev().take(32).position(|&v| v == m);
                assert_eq!(s.find(m, 32), want, "step {step}");
                if let Some(depth) = want {
                    assert_eq!(s.below_top(depth), Some(m));
                    d.truncate(d.len() - depth - 1);
                    // Exits through both ways of taking the frame off.
                    if step % 2 == 0 {
                        s.truncate(s.len() - depth - 1);
                    } else {
                        assert_eq!(s.exit(depth), Some(m));
                    }
                } else if (x >> 10).is_multiple_of(3) {
                    // An exit deeper than the stack changes nothing.
                    let deep = d.len() + (x >> 40) as usize % 3;
                    assert_eq!(s.exit(deep), None);
                }
            }
            assert_eq!(s.len(), d.len());
            assert_eq!(s.below_top(0), d.back().copied());
            assert_eq!(s.below_top(d.len()), None);
        }
        assert!(s.len() <= STACK_LIMIT && s.len() > 0);
    }
}
