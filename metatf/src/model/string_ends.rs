//! Where a byte string ends, decided inside the string model (docs/FORMAT.md §7, "Strings
//! with their ends").
//!
//! Why: a string's length coded on its own, before the string, is a number that knows nothing
//! of the bytes. In a text trace the end of a string is easy to see from its bytes (a line
//! that ends in `) = 0`, a name the match model has seen whole before), while a length
//! stream is a large part of a text trace's coded blocks. So, for a string coded with
//! its end, before each byte (and after the last) one bit says whether the string ends there,
//! predicted from the bytes so far, the field's previous string and whether the string the
//! match model follows ended at the same place.
//!
//! The bit is a logistic mix of [`INPUTS`] − 1 hashed contexts and a bias, its weight set
//! chosen by what the match model and the column string say. All arithmetic is integer, so
//! writer and reader agree on every machine; memory is fixed (the tables do not grow).

use super::strings::{adapt, mix, rates};
use crate::container::context_mix::{squash, Tables};

/// Hashed contexts of an end bit.
const CONTEXTS: usize = 6;
/// Mixer inputs: the contexts and a bias.
const INPUTS: usize = CONTEXTS + 1;
/// Slots per context table (log2).
const TABLE_BITS: u32 = 16;
/// Weight sets: the match state (5) × whether the column string ends here (2).
const WEIGHT_SETS: usize = 10;
/// Mixer learning rate, as the byte mixers'.
const LEARNING_RATE: i32 = 48;
/// A fresh slot: probability ½, seen 0 times (22-bit probability << 10 | count).
const FRESH: u32 = 1 << 31;

/// What an end bit is predicted from, given by the string model.
pub(crate) struct EndContext {
    /// The field hash.
    pub(crate) field: u64,
    /// The string's bytes so far, newest lowest (0 at its start).
    pub(crate) hist: u64,
    /// Bytes of the string so far.
    pub(crate) at: usize,
    /// The current word's hash (see the byte model).
    pub(crate) word: u64,
    /// The column string's byte at `at` (256 past its end), and whether it ends at `at`.
    pub(crate) column: u32,
    pub(crate) column_ends: bool,
    /// The match model: 0 when it follows nothing, else 1 when the string it follows goes on
    /// at its position and 2 when a string started there (the one it follows ended), plus 2
    /// when the match is the aligned one; and its length (capped at 15).
    pub(crate) matched: u32,
    pub(crate) match_len: u32,
}

/// The end-bit model of a block.
pub(crate) struct EndModel {
    slots: Vec<u32>,
    weights: Vec<[i32; INPUTS]>,
    at: [usize; CONTEXTS],
    inputs: [i32; INPUTS],
    set: usize,
    /// The probability (of 4096) the last bit was coded with.
    pub(crate) last_p: u32,
}

impl EndModel {
    pub(crate) fn new() -> EndModel {
        EndModel {
            slots: vec![FRESH; CONTEXTS << TABLE_BITS],
            weights: vec![[1 << 14; INPUTS]; WEIGHT_SETS],
            at: [0; CONTEXTS],
            inputs: [0; INPUTS],
            set: 0,
            last_p: 2048,
        }
    }

    /// Codes (or reads) whether the string ends here; `end` is ignored by the decoder.
    pub(crate) fn code<C: super::strings::BitIo>(
        &mut self,
        c: &mut C,
        x: &EndContext,
        end: bool,
    ) -> bool {
        let t = tables();
        let f = x.field;
        let h = x.hist;
        let start = u64::from(x.at == 0);
        let hashes = [
            mix(f ^ 0x10, (h & 0xFF) | start << 8),
            mix(f ^ 0x11, (h & 0xFF_FFFF) | (x.at.min(3) as u64) << 24),
            mix(
                f ^ 0x12,
                u64::from(x.column) | u64::from(x.column_ends) << 9 | (h & 0xFF) << 10,
            ),
            mix(
                f ^ 0x13,
                u64::from(x.matched) | u64::from(x.match_len) << 3 | (h & 0xFF) << 8,
            ),
            mix(f ^ 0x14, x.at.min(1023) as u64),
            mix(f ^ 0x15, x.word ^ (h & 0xFF) << 56 | start),
        ];
        for (i, (&hash, at)) in hashes.iter().zip(&mut self.at).enumerate() {
            *at = (i << TABLE_BITS) + (hash >> (64 - TABLE_BITS)) as usize;
            self.inputs[i] = i32::from(t.stretch[(self.slots[*at] >> 20) as usize]);
        }
        self.inputs[CONTEXTS] = 256;
        self.set = x.matched as usize * 2 + usize::from(x.column_ends);
        let w = &mut self.weights[self.set];
        let dot: i64 = w
            .iter()
            .zip(&self.inputs)
            .map(|(&w, &x)| i64::from(w) * i64::from(x))
            .sum();
        let st = (dot >> 16).clamp(-2047, 2047) as i32;
        let p = squash(st).clamp(1, 4095) as u32;
        self.last_p = p;
        let bit = c.bit(p, u32::from(end));
        let err = ((bit as i32) << 12) - squash(st);
        for (w, &x) in w.iter_mut().zip(&self.inputs) {
            *w += (x * err * LEARNING_RATE + (1 << 15)) >> 16;
        }
        let rate = rates();
        for &at in &self.at {
            self.slots[at] = adapt(self.slots[at], bit, rate);
        }
        bit == 1
    }
}

fn tables() -> &'static Tables {
    super::strings::tables()
}
