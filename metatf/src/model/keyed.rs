//! The symbols of a keyed `reuse` hit: its rank among the ended values created under the key
//! (below [`REUSE_KEY_CAP`]) or among all ended values (the cap plus that rank). Which of the
//! few recently ended values comes back depends on the key itself (each size of object has its
//! own pattern of reuse), so ranks are coded per (hash of the key's value, previous symbol),
//! with a 16-symbol tree small enough to have thousands of such contexts.

use super::counter::{self, Counter, FRESH};
use super::numbers::NumberModel;
use super::predict::REUSE_KEY_CAP;
use super::range::{Decoder, Encoder};

/// Bits of the key's hash in the context.
const KEY_HASH_BITS: u32 = 10;
/// Symbols of the tree: ranks 0–6 in the key's list, an escape, ranks 0–6 among all ended
/// values, an escape.
const SYMBOLS: usize = 16;
/// Ranks coded directly by the tree on each side.
const DIRECT: u64 = 7;

/// Adaptive models of the ranks of one keyed `reuse` list entry.
pub(crate) struct KeyedRanks {
    /// Per context: a bit tree over [`SYMBOLS`] symbols.
    probs: Vec<Counter>,
    /// The rest of an escaped rank: in the key's list, among all ended values.
    escape: [NumberModel; 2],
    /// The previous symbol of this entry (0 at the start).
    last: usize,
}

impl KeyedRanks {
    pub(crate) fn new() -> KeyedRanks {
        KeyedRanks {
            probs: vec![FRESH; (SYMBOLS << KEY_HASH_BITS) * SYMBOLS],
            escape: [NumberModel::default(), NumberModel::default()],
            last: 0,
        }
    }

    fn context(&self, key: u64) -> usize {
        let hash = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - KEY_HASH_BITS)) as usize;
        ((self.last << KEY_HASH_BITS) | hash) * SYMBOLS
    }

    /// Codes `rank` given the key stream's current value `key`.
    pub(crate) fn encode(&mut self, e: &mut Encoder, key: u64, rank: u64) {
        let cap = REUSE_KEY_CAP as u64;
        let (side, r) = if rank < cap {
            (0, rank)
        } else {
            (1, rank - cap)
        };
        let symbol = side * 8 + r.min(DIRECT) as usize;
        let base = self.context(key);
        let mut node = 1usize;
        for i in (0..4).rev() {
            let bit = (symbol >> i) & 1 == 1;
            counter::encode(e, &mut self.probs[base + node], bit);
            node = (node << 1) | usize::from(bit);
        }
        if r >= DIRECT {
            self.escape[side].encode(e, r - DIRECT);
        }
        self.last = symbol;
    }

    /// Decodes a rank given the key stream's current value `key`.
    pub(crate) fn decode(&mut self, d: &mut Decoder<'_>, key: u64) -> u64 {
        let base = self.context(key);
        let mut node = 1usize;
        for _ in 0..4 {
            let bit = counter::decode(d, &mut self.probs[base + node]);
            node = (node << 1) | usize::from(bit);
        }
        let symbol = node - SYMBOLS;
        let side = symbol / 8;
        let mut r = (symbol % 8) as u64;
        if r >= DIRECT {
            r = DIRECT.saturating_add(self.escape[side].decode(d));
        }
        self.last = symbol;
        if side == 0 {
            r
        } else {
            (REUSE_KEY_CAP as u64).saturating_add(r)
        }
    }
}
