//! The kind codes the `memory-replay` encoding stores, and what the model learns from each.

use super::line::{Action, ReplayLine};
use crate::shared::allocation_model::prediction::addresses::Class;
use crate::shared::allocation_model::{KindTable, ModelRecord, Shape};

/// jemalloc's size class for a request: 8, 16, then four classes per power of two.
#[inline(always)]
pub fn jemalloc_class(size: u64) -> u64 {
    // Most requests are small: one load from a table instead of two branches and the shifts
    // (the class was computed for every allocation and free a decoder models).
    if size <= SMALL_SIZES {
        return u64::from(SMALL_CLASSES[size.div_ceil(4) as usize]);
    }
    computed_class(size)
}

/// Requests up to this size take their class from [`SMALL_CLASSES`].
const SMALL_SIZES: u64 = 1024;

/// The class of the sizes up to [`SMALL_SIZES`], by the size divided by 4, rounded up: every
/// class up to there is a multiple of 4 (8, 16, then spacings of 4 and more), so sizes
/// with the same quarter, rounded up, share a class.
static SMALL_CLASSES: [u16; SMALL_SIZES as usize / 4 + 1] = {
    let mut t = [0u16; SMALL_SIZES as usize / 4 + 1];
    let mut q = 0;
    while q < t.len() {
        t[q] = computed_class(4 * q as u64) as u16;
        q += 1;
    }
    t
};

/// [`jemalloc_class`] worked out.
const fn computed_class(size: u64) -> u64 {
    if size <= 8 {
        return 8;
    }
    if size <= 16 {
        return 16;
    }
    let s = size - 1;
    let pow = 63 - s.leading_zeros(); // 2^pow <= s < 2^(pow+1)
    let shift = pow - 2;
    // `(s / spacing + 1) * spacing` with `spacing = 2^shift`, as shifts: a division by a
    // variable was the longest wait of a decode's per-record work. Wraps to 0 for the top
    // classes (sizes above 7 * 2^61), as release builds always computed; the class is only a
    // model key, so any deterministic value keeps encode and decode in step.
    ((s >> shift) + 1).wrapping_shl(shift)
}

/// A line stored verbatim, followed by `\n`.
pub const VERBATIM: u8 = 2;
/// The last line of the file stored verbatim, with no `\n` after it.
pub const VERBATIM_UNTERMINATED: u8 = 3;
/// `malloc`.
pub const MALLOC: u8 = 4;
/// `free`.
pub const FREE: u8 = 5;
/// `calloc` (model size = element size, extra = element count).
pub const CALLOC: u8 = 6;
/// `memalign` (model size = size, extra = alignment).
pub const MEMALIGN: u8 = 7;
/// `realloc`.
pub const REALLOC: u8 = 8;
/// `thread_done 0x0`.
pub const THREAD_DONE: u8 = 9;

/// The record the encoder makes of line `l` of thread `site`: malloc keeps its size, calloc
/// and memalign their first value as the extra one and their second as the size, realloc its
/// old pointer and size.
#[inline]
pub fn record_of(l: &ReplayLine, site: u32) -> ModelRecord {
    let mut r = ModelRecord {
        kind: of(l.action),
        site,
        addr: l.ptr,
        ..ModelRecord::default()
    };
    match l.action {
        Action::Malloc => r.size = l.a,
        Action::Calloc | Action::Memalign => (r.extra, r.size) = (l.a, l.b),
        Action::Realloc => (r.old, r.size) = (l.a, l.b),
        Action::Free | Action::ThreadDone => {}
    }
    r
}

/// The kind code of an action.
pub fn of(a: Action) -> u8 {
    match a {
        Action::Malloc => MALLOC,
        Action::Free => FREE,
        Action::Calloc => CALLOC,
        Action::Memalign => MEMALIGN,
        Action::Realloc => REALLOC,
        Action::ThreadDone => THREAD_DONE,
    }
}

/// The action of a kind code, for the kinds that have one.
pub fn action(kind: u8) -> Option<Action> {
    Some(match kind {
        MALLOC => Action::Malloc,
        FREE => Action::Free,
        CALLOC => Action::Calloc,
        MEMALIGN => Action::Memalign,
        REALLOC => Action::Realloc,
        THREAD_DONE => Action::ThreadDone,
        _ => return None,
    })
}

/// The `memory-replay` kind table.
#[derive(Debug, Clone, Copy)]
pub struct ReplayKinds;

impl KindTable for ReplayKinds {
    fn shape(&self, kind: u8) -> Shape {
        match kind {
            MALLOC | CALLOC | MEMALIGN => Shape::Alloc,
            FREE => Shape::Free,
            REALLOC => Shape::Realloc,
            THREAD_DONE => Shape::Site,
            _ => Shape::Bare,
        }
    }

    fn has_extra(&self, kind: u8) -> bool {
        matches!(kind, CALLOC | MEMALIGN)
    }

    /// Memory-replay lines are short and quick to print: the writing thread has time to spare
    /// while the worker models, which the site half uses.
    fn sites_ahead(&self) -> bool {
        true
    }

    fn size_class(&self, size: u64, site: u32) -> Class {
        // jemalloc (Android 6): per-thread caches of size classes spaced four to a doubling.
        let step = jemalloc_class(size);
        Class {
            key: (u64::from(site) << 40) | step,
            step,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jemalloc_classes_are_the_divided_ones() {
        // The shifts against the division they replace, over every power of two and its
        // neighbours, and the top classes that wrap.
        let divided = |size: u64| -> u64 {
            if size <= 16 {
                return if size <= 8 { 8 } else { 16 };
            }
            let s = size - 1;
            let spacing = 1u64 << (61 - s.leading_zeros());
            (s / spacing + 1).wrapping_mul(spacing)
        };
        for bit in 0..64 {
            for d in -3i64..=3 {
                let size = (1u64 << bit).wrapping_add(d as u64);
                assert_eq!(jemalloc_class(size), divided(size), "size {size}");
            }
        }
        for size in (0..5000).chain([u64::MAX, u64::MAX - 1, 7 << 61, (7 << 61) + 1]) {
            assert_eq!(jemalloc_class(size), divided(size), "size {size}");
            assert_eq!(computed_class(size), divided(size), "size {size}");
        }
        assert_eq!(
            [17, 20, 21, 24, 25, 33, 100].map(jemalloc_class),
            [20, 20, 24, 24, 28, 40, 112]
        );
    }
}
