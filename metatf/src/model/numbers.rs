//! Binarisations of the entropy stage: how a symbol becomes bits, and which adaptive
//! probability codes each bit.
//!
//! - [`SmallModel`]: a symbol below 2^BITS as a bit tree (one counter per tree node).
//! - [`NumberModel`]: any u64 as its bit length (a 7-level bit tree) and then the bits below the
//!   leading one, the three highest in a tree per length, the rest one counter per (length,
//!   bit position).

use super::counter::{self, Counter, FRESH};
use super::range::{Decoder, Encoder};

/// A symbol below `1 << bits`, coded as a bit tree, most significant bit first.
#[derive(Clone)]
pub(crate) struct SmallModel {
    bits: u32,
    probs: Vec<Counter>,
}

impl SmallModel {
    pub(crate) fn new(bits: u32) -> SmallModel {
        SmallModel {
            bits,
            probs: vec![FRESH; 1 << bits],
        }
    }

    #[inline]
    pub(crate) fn encode(&mut self, e: &mut Encoder, symbol: u32) {
        let mut node = 1usize;
        for i in (0..self.bits).rev() {
            let bit = (symbol >> i) & 1 == 1;
            counter::encode(e, &mut self.probs[node], bit);
            node = (node << 1) | usize::from(bit);
        }
    }

    #[inline]
    pub(crate) fn decode(&mut self, d: &mut Decoder<'_>) -> u32 {
        let mut node = 1usize;
        for _ in 0..self.bits {
            let bit = counter::decode(d, &mut self.probs[node]);
            node = (node << 1) | usize::from(bit);
        }
        (node - (1 << self.bits)) as u32
    }
}

/// Mantissa bits (below the leading one) coded in a tree per bit length.
const TREE_BITS: u32 = 3;

/// Any u64: bit length, then mantissa.
#[derive(Clone)]
pub(crate) struct NumberModel {
    length: SmallModel,
    /// Per bit length: the tree of the highest mantissa bits.
    high: Vec<Counter>,
    /// Per (bit length, bit position): the remaining mantissa bits.
    low: Vec<Counter>,
}

impl Default for NumberModel {
    /// The mantissa tables are allocated on first use: a block has a model per stream and
    /// context, and most contexts of a DTD with many fields never see a number of two bits or
    /// more, so memory follows what the data uses, not what the DTD declares.
    fn default() -> Self {
        NumberModel {
            length: SmallModel::new(7),
            high: Vec::new(),
            low: Vec::new(),
        }
    }
}

impl NumberModel {
    /// Allocates the mantissa tables (all probabilities one half, as a fresh model).
    #[inline]
    fn mantissa_tables(&mut self) {
        if self.high.is_empty() {
            self.high = vec![FRESH; 65 << TREE_BITS];
            self.low = vec![FRESH; 65 * 64];
        }
    }

    pub(crate) fn encode(&mut self, e: &mut Encoder, v: u64) {
        let n = 64 - v.leading_zeros();
        self.length.encode(e, n);
        if n < 2 {
            return;
        }
        self.mantissa_tables();
        let m = n - 1; // mantissa bits
        let t = m.min(TREE_BITS);
        let base = (n as usize) << TREE_BITS;
        let mut node = 1usize;
        for i in 0..t {
            let bit = (v >> (m - 1 - i)) & 1 == 1;
            counter::encode(e, &mut self.high[base + node], bit);
            node = (node << 1) | usize::from(bit);
        }
        for i in (0..m - t).rev() {
            counter::encode(
                e,
                &mut self.low[n as usize * 64 + i as usize],
                (v >> i) & 1 == 1,
            );
        }
    }

    pub(crate) fn decode(&mut self, d: &mut Decoder<'_>) -> u64 {
        let n = self.length.decode(d).min(64);
        if n < 2 {
            return u64::from(n);
        }
        self.mantissa_tables();
        let m = n - 1;
        let t = m.min(TREE_BITS);
        let base = (n as usize) << TREE_BITS;
        let mut node = 1usize;
        for _ in 0..t {
            let bit = counter::decode(d, &mut self.high[base + node]);
            node = (node << 1) | usize::from(bit);
        }
        let mut v = node as u64; // the leading one and the tree bits
        for i in (0..m - t).rev() {
            let bit = counter::decode(d, &mut self.low[n as usize * 64 + i as usize]);
            v = (v << 1) | u64::from(bit);
        }
        v
    }
}

/// Estimated bits to code `v` with a [`NumberModel`] that has seen similar values.
#[inline]
pub(crate) fn estimate(v: u64) -> u8 {
    let n = 64 - v.leading_zeros();
    (n.saturating_sub(1) + 2) as u8
}
