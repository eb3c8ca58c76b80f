//! The repeat model of a stream: many traces run the same loop over and over, so a stream's
//! coded symbols (which predictor hit, and the rank or residual after it) come back in long
//! runs that the hit-index contexts, two symbols deep, cannot see. The model finds the last
//! place where the stream's last [`MIN_MATCH`] symbols occurred before and, while the symbols
//! that followed there keep coming, offers the next one: one bit then says whether it holds,
//! under a counter chosen by how long the run has held. The symbols are the stream's own, so a
//! stream's cost still depends only on its own predictors (which the writer's trials need).
//! The layout is in docs/FORMAT.md §7 ("Repeats").

use super::counter::{self, Counter, FRESH};
use super::range::{Decoder, Encoder};

/// Symbols the window holds, and slots of the table from a hash of the last symbols to where
/// they ended, as powers of two: for the first [`FULL_STREAMS`] streams of a block that code a
/// value, and for the others. A wide inferred DTD codes a hundred streams and more; 128 KiB
/// each would take such a trace's memory past its bound, while its streams are short.
const FULL_BITS: u32 = 14;
const SMALL_BITS: u32 = 10;
/// Streams that get [`FULL_BITS`], in the order their first value is coded.
pub(crate) const FULL_STREAMS: usize = 16;
/// Symbols that must agree before a repeat is offered.
const MIN_MATCH: usize = 6;
/// How far back a found repeat is checked (its starting length, at most).
const MAX_CHECK: usize = 32;
/// A symbol whose payload does not fit its 28 bits: stored, never offered.
const UNREPEATABLE: u32 = u32::MAX;
/// Counters of the repeat bit: by length bucket (32), whether the previous offer held and
/// whether the offered symbol is the stream's last one (a run, which the hit-index contexts
/// already expect, against a change, which only the repeat can foresee).
const FLAG_CONTEXTS: usize = 128;

/// The symbol of one coded value: its hit index and the number coded after it (0 when none).
pub(crate) fn symbol(hit: usize, payload: u64) -> u32 {
    if hit < 8 && payload < 1 << 28 {
        ((hit as u32) << 28) | payload as u32
    } else {
        UNREPEATABLE
    }
}

/// The hit index and number of a symbol [`symbol`] made.
pub(crate) fn split(symbol: u32) -> (usize, u64) {
    ((symbol >> 28) as usize, u64::from(symbol & ((1 << 28) - 1)))
}

/// One stream's repeat model (its tables are allocated at its first symbol).
pub(crate) struct Repeats {
    /// Window and table size in bits (0 until the first symbol).
    bits: u32,
    window: Vec<u32>,
    table: Vec<u32>,
    /// Symbols seen.
    n: u32,
    /// Where the repeat continues (a count of symbols, like `n`), while `length > 0`.
    at: u32,
    /// How many symbols the repeat has held for (0: no repeat).
    length: usize,
    held: bool,
    flags: [Counter; FLAG_CONTEXTS],
}

impl Default for Repeats {
    fn default() -> Self {
        Repeats {
            bits: 0,
            window: Vec::new(),
            table: Vec::new(),
            n: 0,
            at: 0,
            length: 0,
            held: false,
            flags: [FRESH; FLAG_CONTEXTS],
        }
    }
}

impl Repeats {
    /// The symbol the repeat offers next, if any.
    #[inline]
    pub(crate) fn offer(&self) -> Option<u32> {
        if self.length == 0 {
            return None;
        }
        let s = self.window[self.at as usize & self.mask()];
        (s != UNREPEATABLE).then_some(s)
    }

    fn flag(&mut self) -> &mut Counter {
        let bucket = if self.length < 16 {
            self.length
        } else {
            (12 + self.length.ilog2() as usize).min(31)
        };
        let at = self.window[self.at as usize & self.mask()];
        let last = self.window[self.n.wrapping_sub(1) as usize & self.mask()];
        &mut self.flags[(bucket * 2 + usize::from(self.held)) * 2 + usize::from(at == last)]
    }

    /// Codes whether the offered symbol is the stream's next one.
    pub(crate) fn encode(&mut self, e: &mut Encoder, holds: bool) {
        counter::encode(e, self.flag(), holds);
    }

    /// Reads what [`Self::encode`] wrote.
    pub(crate) fn decode(&mut self, d: &mut Decoder<'_>) -> bool {
        counter::decode(d, self.flag())
    }

    /// Index mask of the window.
    #[inline]
    fn mask(&self) -> usize {
        self.window.len() - 1
    }

    /// Appends the stream's coded symbol `s`: the repeat goes on or ends, and when none is
    /// running, the last [`MIN_MATCH`] symbols look for an earlier occurrence. `started`
    /// counts the block's streams whose first symbol came before this stream's.
    pub(crate) fn push(&mut self, s: u32, started: &mut usize) {
        if self.window.is_empty() {
            self.bits = if *started < FULL_STREAMS {
                FULL_BITS
            } else {
                SMALL_BITS
            };
            *started += 1;
            self.window = vec![0; 1 << self.bits];
            self.table = vec![0; 1 << self.bits];
        }
        if self.length > 0 {
            self.held = self.window[self.at as usize & self.mask()] == s;
            if self.held {
                self.length += 1;
                self.at = self.at.wrapping_add(1);
            } else {
                self.length = 0;
            }
        }
        let i = self.n as usize & self.mask();
        self.window[i] = s;
        self.n = self.n.wrapping_add(1);
        if (self.n as usize) < MIN_MATCH {
            return;
        }
        let mut h = 0u64;
        for i in 1..=MIN_MATCH {
            let w = self.window[self.n.wrapping_sub(i as u32) as usize & self.mask()];
            h = (h ^ u64::from(w)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        let slot = (h >> (64 - self.bits)) as usize;
        if self.length == 0 {
            let at = self.table[slot];
            let back = self.n.wrapping_sub(at) as usize;
            // `at` is 0 in an empty slot, and a table entry older than the window is stale.
            if at != 0 && back > 0 && back + MAX_CHECK < self.window.len() {
                let mut l = 0;
                while l < MAX_CHECK && l < at as usize {
                    let a = self.window[at.wrapping_sub(1 + l as u32) as usize & self.mask()];
                    let b = self.window[self.n.wrapping_sub(1 + l as u32) as usize & self.mask()];
                    if a != b {
                        break;
                    }
                    l += 1;
                }
                if l >= MIN_MATCH {
                    self.length = l;
                    self.at = at;
                    self.held = true;
                }
            }
        }
        self.table[slot] = self.n;
    }
}
