//! The tag stream: each record's tag is coded as its index among the records of its scope, by
//! a bit tree whose probabilities are chosen by a context — a hash of the last `order` record
//! indices and, optionally, of the last value of one stream. The context is chosen per block by
//! simulating the coder's cost for every candidate.

use super::counter::{self, Counter, FRESH};
use super::predict::History;
use super::range::{Decoder, Encoder};
use crate::universal::plan::Catalog;

/// Contexts of the tag model (hashed).
pub(crate) const TAG_CONTEXT_BITS: u32 = 16;
/// Contexts while measuring candidates (fewer, to bound memory; ranks them alike).
pub(crate) const MEASURE_CONTEXT_BITS: u32 = 13;
/// Longest history of record indices in a context.
pub(crate) const MAX_TAG_ORDER: u32 = 8;

/// Which context codes the tags of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TagContext {
    pub(crate) order: u32,
    pub(crate) stream: Option<usize>,
}

impl TagContext {
    /// The candidates measured for every block.
    pub(crate) fn candidates(streams: usize) -> Vec<TagContext> {
        let mut c: Vec<TagContext> = [0, 1, 2, 3, 4, 6, 8]
            .iter()
            .map(|&order| TagContext {
                order,
                stream: None,
            })
            .collect();
        for s in 0..streams {
            for order in [1, 3] {
                c.push(TagContext {
                    order,
                    stream: Some(s),
                });
            }
        }
        c
    }
}

/// Record indices within each scope.
pub(crate) struct TagAlphabet {
    /// Per plan: its index within its scope.
    local: Vec<u32>,
    /// Per scope: the plans, by local index.
    plans: Vec<Vec<usize>>,
    /// Bits of the widest scope's alphabet.
    pub(crate) bits: u32,
}

impl TagAlphabet {
    pub(crate) fn new(catalog: &Catalog) -> TagAlphabet {
        let mut plans: Vec<Vec<usize>> = Vec::new();
        let mut local = Vec::new();
        for (i, p) in catalog.plans().iter().enumerate() {
            if plans.len() <= p.scope {
                plans.resize(p.scope + 1, Vec::new());
            }
            local.push(plans[p.scope].len() as u32);
            plans[p.scope].push(i);
        }
        let widest = plans.iter().map(Vec::len).max().unwrap_or(1).max(2);
        let bits = usize::BITS - (widest - 1).leading_zeros();
        TagAlphabet { local, plans, bits }
    }

    pub(crate) fn symbol(&self, plan: usize) -> u32 {
        self.local[plan]
    }

    pub(crate) fn plan(&self, scope: usize, symbol: u32) -> Option<usize> {
        self.plans.get(scope)?.get(symbol as usize).copied()
    }
}

/// The adaptive tag model under one context.
pub(crate) struct TagModel {
    pub(crate) context: TagContext,
    bits: u32,
    context_bits: u32,
    probs: Vec<Counter>,
    history: u64,
}

impl TagModel {
    pub(crate) fn new(context: TagContext, bits: u32, context_bits: u32) -> TagModel {
        TagModel {
            context,
            bits,
            context_bits,
            probs: vec![FRESH; 1 << (context_bits + bits)],
            history: 0,
        }
    }

    fn base(&self, h: &History) -> usize {
        let order = self.context.order.min(MAX_TAG_ORDER);
        let mask = if order == 0 {
            0
        } else {
            u64::MAX >> (64 - 8 * order)
        };
        let mut x = (self.history & mask) ^ (u64::from(order) << 59);
        if let Some(s) = self.context.stream {
            x = (x ^ h.last[s].wrapping_mul(0xA24B_AED4_963E_E407)).rotate_left(23);
        }
        let slot = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.context_bits);
        (slot as usize) << self.bits
    }

    /// The last two record indices, each capped at 3, as a number below 16.
    pub(crate) fn recent(&self) -> usize {
        let a = (self.history & 0xFF).min(3);
        let b = ((self.history >> 8) & 0xFF).min(3);
        (a * 4 + b) as usize
    }

    /// Records `symbol` as the next tag without coding it (a trial codes no tags, but its
    /// streams read [`Self::recent`]).
    pub(crate) fn pass(&mut self, symbol: u32) {
        self.push(symbol);
    }

    fn push(&mut self, symbol: u32) {
        self.history = (self.history << 8) | u64::from(symbol & 0xFF);
    }

    pub(crate) fn encode(&mut self, e: &mut Encoder, h: &History, symbol: u32) {
        let base = self.base(h);
        let mut node = 1usize;
        for i in (0..self.bits).rev() {
            let bit = (symbol >> i) & 1 == 1;
            counter::encode(e, &mut self.probs[base + node], bit);
            node = (node << 1) | usize::from(bit);
        }
        self.push(symbol);
    }

    pub(crate) fn decode(&mut self, d: &mut Decoder<'_>, h: &History) -> u32 {
        let base = self.base(h);
        let mut node = 1usize;
        for _ in 0..self.bits {
            let bit = counter::decode(d, &mut self.probs[base + node]);
            node = (node << 1) | usize::from(bit);
        }
        let symbol = (node - (1 << self.bits)) as u32;
        self.push(symbol);
        symbol
    }

    /// Where the counters of the context of `h` start, with the first of them read now: a
    /// writer measuring many models finds every model's context first, so that their cache
    /// misses overlap rather than follow one another, then measures each ([`Self::measure_at`]).
    pub(crate) fn touch(&self, h: &History) -> usize {
        let base = self.base(h);
        std::hint::black_box(self.probs.get(base + 1).copied());
        base
    }

    /// Cost in 1/256 bits of coding `symbol` in the context that [`Self::touch`] found (and
    /// adapts, as coding would).
    pub(crate) fn measure_at(&mut self, base: usize, symbol: u32) -> u64 {
        let mut node = 1usize;
        let mut cost = 0u64;
        for i in (0..self.bits).rev() {
            let bit = (symbol >> i) & 1 == 1;
            let c = &mut self.probs[base + node];
            cost += u64::from(counter::cost(*c, bit));
            counter::update(c, bit);
            node = (node << 1) | usize::from(bit);
        }
        self.push(symbol);
        cost
    }
}
