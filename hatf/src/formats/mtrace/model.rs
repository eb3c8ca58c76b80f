//! The kind codes the `mtrace` encoding stores, and what the model learns from each.

use crate::shared::allocation_model::{KindTable, Shape};

/// `= Start`.
pub const START: u8 = 0;
/// `= End`.
pub const END: u8 = 1;
/// A line stored verbatim, followed by `\n`.
pub const VERBATIM: u8 = 2;
/// The last line of the file stored verbatim, with no `\n` after it.
pub const VERBATIM_UNTERMINATED: u8 = 3;
/// `+`.
pub const MALLOC: u8 = 4;
/// `-`.
pub const FREE: u8 = 5;
/// `<`.
pub const REALLOC_OLD: u8 = 6;
/// `>`.
pub const REALLOC_NEW: u8 = 7;

/// The `mtrace` kind table.
#[derive(Debug, Clone, Copy)]
pub struct MtraceKinds;

impl KindTable for MtraceKinds {
    fn shape(&self, kind: u8) -> Shape {
        match kind {
            MALLOC | REALLOC_NEW => Shape::Alloc,
            FREE | REALLOC_OLD => Shape::Free,
            _ => Shape::Bare,
        }
    }

    fn has_extra(&self, _kind: u8) -> bool {
        false
    }
}
