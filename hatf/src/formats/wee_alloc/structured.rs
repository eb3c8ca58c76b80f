//! The structured bit coding of a `wee-alloc-cm-4` block (docs/FORMAT.md §6.1, `wee-alloc`):
//! each record is a few decisions, each coded with the adaptive probability of its context by
//! [`crate::shared::coding::bit_coder`]. Used instead of the record bytes through the context mixer
//! when it is smaller, which it is on short traces (a mixer spends the first hundreds of
//! records learning what the record bytes mean).
//!
//! A record, in order (the context of each decision in brackets; "previous kind" is that of
//! the record before, start / alloc / free / verbatim):
//! 1. allocation? [previous kind, the kind before it]; if not: free? [previous kind]; if not
//!    it is a verbatim line;
//! 2. `Alloc(s)`: when the size that followed the previous allocation's size last time is
//!    known, whether s is that size [previous kind]; if not, whether s was seen before
//!    [previous kind], then its position in the move-to-front list of sizes (at most
//!    [`SIZE_LIST`]) or s itself, each a [`Number`];
//! 3. `Free(i)`: for the previous freed index + 1, then − 1, when that allocation is live,
//!    whether i is it [which one, previous kind]; if neither, the rank of i among the live
//!    allocations (0 = newest) [previous kind], or the live count followed by i itself when
//!    i is not live;
//! 4. verbatim: whether it ended with `\n`, its length (a [`Number`], at most
//!    [`MAX_VERBATIM`] bytes a block), then each byte, bit by bit from the top, with the bits
//!    before it in the byte as context.

use std::collections::HashMap;

use super::model::Record;
use crate::shared::coding::bit_coder::{Bit, BitDecoder, BitEncoder, Number};
use crate::shared::live_set::LiveSet;

/// Most sizes the move-to-front list holds; older ones fall off its end.
const SIZE_LIST: usize = 4096;
/// Most verbatim bytes one block may hold in this coding (the encoder uses the mixer for a
/// block with more); bounds what a damaged block can make the decoder produce.
pub const MAX_VERBATIM: u64 = 1 << 20;

const START: usize = 0;
const ALLOC: usize = 1;
const FREE: usize = 2;
const VERBATIM: usize = 3;

/// The state encoder and decoder share; a fresh one starts each block.
#[derive(Debug)]
pub struct Structured {
    prev: usize,
    prev2: usize,
    is_alloc: [[Bit; 4]; 4],
    is_free: [Bit; 4],
    follows_hit: [Bit; 4],
    seen: [Bit; 4],
    size_rank: Number,
    new_size: Number,
    /// The size allocated after each size, the last time.
    follows: HashMap<u64, u64>,
    prev_size: Option<u64>,
    /// Sizes, most recent first.
    sizes: Vec<u64>,
    near: [[Bit; 4]; 2],
    free_rank: [Number; 4],
    not_live: Number,
    live: LiveSet,
    allocs: u64,
    last_freed: Option<u64>,
    terminated: Bit,
    verbatim_len: Number,
    verbatim_bits: Box<[Bit; 256]>,
    verbatim_total: u64,
}

impl Default for Structured {
    fn default() -> Self {
        Structured {
            prev: START,
            prev2: START,
            is_alloc: Default::default(),
            is_free: Default::default(),
            follows_hit: Default::default(),
            seen: Default::default(),
            size_rank: Number::default(),
            new_size: Number::default(),
            follows: HashMap::new(),
            prev_size: None,
            sizes: Vec::new(),
            near: Default::default(),
            free_rank: Default::default(),
            not_live: Number::default(),
            live: LiveSet::new(),
            allocs: 0,
            last_freed: None,
            terminated: Bit::default(),
            verbatim_len: Number::default(),
            verbatim_bits: Box::new([Bit::default(); 256]),
            verbatim_total: 0,
        }
    }
}

/// The neighbours of the previous freed index tried first, in order.
const NEAR: [i64; 2] = [1, -1];

impl Structured {
    /// Codes `r`. Returns `false` (and codes nothing) for a verbatim line that would take the
    /// block past [`MAX_VERBATIM`]: the caller must then use the mixer for the block.
    pub fn encode(&mut self, r: Record<'_>, e: &mut BitEncoder) -> bool {
        let kind = match r {
            Record::Alloc(_) => ALLOC,
            Record::Free(_) => FREE,
            Record::Verbatim(text, _) => {
                self.verbatim_total += text.len() as u64;
                if self.verbatim_total > MAX_VERBATIM {
                    return false;
                }
                VERBATIM
            }
        };
        e.bit(kind == ALLOC, &mut self.is_alloc[self.prev][self.prev2]);
        if kind != ALLOC {
            e.bit(kind == FREE, &mut self.is_free[self.prev]);
        }
        match r {
            Record::Alloc(size) => self.encode_alloc(size, e),
            Record::Free(index) => self.encode_free(index, e),
            Record::Verbatim(text, terminated) => {
                e.bit(terminated, &mut self.terminated);
                self.verbatim_len.encode(e, text.len() as u64);
                for &byte in text {
                    let mut node = 1usize;
                    for k in (0..8).rev() {
                        let bit = (byte >> k) & 1 == 1;
                        e.bit(bit, &mut self.verbatim_bits[node]);
                        node = node * 2 + usize::from(bit);
                    }
                }
            }
        }
        self.advance(kind);
        true
    }

    /// Reads the next record; `Err` when the bits name something impossible (damage).
    pub fn decode(
        &mut self,
        d: &mut BitDecoder<'_>,
        text: &mut Vec<u8>,
    ) -> Result<Record<'static>, String> {
        let kind = if d.bit(&mut self.is_alloc[self.prev][self.prev2]) {
            ALLOC
        } else if d.bit(&mut self.is_free[self.prev]) {
            FREE
        } else {
            VERBATIM
        };
        let record = match kind {
            ALLOC => Record::Alloc(self.decode_alloc(d)?),
            FREE => Record::Free(self.decode_free(d)?),
            _ => {
                let terminated = d.bit(&mut self.terminated);
                let len = self.verbatim_len.decode(d);
                self.verbatim_total = self.verbatim_total.saturating_add(len);
                if self.verbatim_total > MAX_VERBATIM {
                    return Err(format!(
                        "verbatim lines of more than {MAX_VERBATIM} bytes in one block"
                    ));
                }
                text.clear();
                for _ in 0..len {
                    let mut node = 1usize;
                    for _ in 0..8 {
                        node = node * 2 + usize::from(d.bit(&mut self.verbatim_bits[node]));
                    }
                    text.push(node as u8);
                }
                // The caller reads the bytes from `text`; the record only says which it was.
                Record::Verbatim(&[], terminated)
            }
        };
        self.advance(kind);
        Ok(record)
    }

    fn advance(&mut self, kind: usize) {
        self.prev2 = self.prev;
        self.prev = kind;
    }

    fn encode_alloc(&mut self, size: u64, e: &mut BitEncoder) {
        let predicted = self.prev_size.and_then(|p| self.follows.get(&p).copied());
        if let Some(p) = predicted {
            e.bit(p == size, &mut self.follows_hit[self.prev]);
        }
        if predicted != Some(size) {
            let at = self.sizes.iter().position(|&s| s == size);
            e.bit(at.is_some(), &mut self.seen[self.prev]);
            match at {
                Some(rank) => self.size_rank.encode(e, rank as u64),
                None => self.new_size.encode(e, size),
            }
        }
        self.allocated(size);
    }

    fn decode_alloc(&mut self, d: &mut BitDecoder<'_>) -> Result<u64, String> {
        let predicted = self.prev_size.and_then(|p| self.follows.get(&p).copied());
        let size = match predicted {
            Some(p) if d.bit(&mut self.follows_hit[self.prev]) => p,
            _ => {
                if d.bit(&mut self.seen[self.prev]) {
                    let rank = self.size_rank.decode(d);
                    let known = self.sizes.len();
                    usize::try_from(rank)
                        .ok()
                        .and_then(|r| self.sizes.get(r).copied())
                        .ok_or_else(|| format!("size rank {rank} but {known} sizes seen"))?
                } else {
                    self.new_size.decode(d)
                }
            }
        };
        self.allocated(size);
        Ok(size)
    }

    fn allocated(&mut self, size: u64) {
        match self.sizes.iter().position(|&s| s == size) {
            Some(i) => {
                self.sizes.remove(i);
            }
            None => self.sizes.truncate(SIZE_LIST - 1),
        }
        self.sizes.insert(0, size);
        if let Some(p) = self.prev_size {
            self.follows.insert(p, size);
        }
        self.prev_size = Some(size);
        // Allocation n is stored as n + 1 so that no live key is 0.
        self.allocs += 1;
        self.live.insert(self.allocs);
    }

    /// The live neighbours of the previous freed index, in the order they are tried.
    fn near_candidates(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        NEAR.iter().enumerate().filter_map(move |(j, &delta)| {
            let c = self.last_freed?.wrapping_add(delta as u64);
            self.live.contains(c.wrapping_add(1)).then_some((j, c))
        })
    }

    fn encode_free(&mut self, index: u64, e: &mut BitEncoder) {
        let candidates: Vec<(usize, u64)> = self.near_candidates().collect();
        for (j, c) in candidates {
            let hit = c == index;
            e.bit(hit, &mut self.near[j][self.prev]);
            if hit {
                self.live.remove(index.wrapping_add(1));
                self.last_freed = Some(index);
                return;
            }
        }
        let live = self.live.len() as u64;
        match self.live.remove(index.wrapping_add(1)) {
            Some(rank) => self.free_rank[self.prev].encode(e, rank as u64),
            None => {
                self.free_rank[self.prev].encode(e, live);
                self.not_live.encode(e, index);
            }
        }
        self.last_freed = Some(index);
    }

    fn decode_free(&mut self, d: &mut BitDecoder<'_>) -> Result<u64, String> {
        let candidates: Vec<(usize, u64)> = self.near_candidates().collect();
        for (j, c) in candidates {
            if d.bit(&mut self.near[j][self.prev]) {
                self.live.remove(c.wrapping_add(1));
                self.last_freed = Some(c);
                return Ok(c);
            }
        }
        let live = self.live.len() as u64;
        let rank = self.free_rank[self.prev].decode(d);
        let index = if rank < live {
            self.live
                .remove_rank(rank as usize)
                .map(|key| key.wrapping_sub(1))
                .ok_or_else(|| format!("free of live rank {rank} but {live} are live"))?
        } else if rank == live {
            self.not_live.decode(d)
        } else {
            return Err(format!("free of live rank {rank} but {live} are live"));
        };
        self.last_freed = Some(index);
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_shape_round_trips() {
        let recs = super::super::model::sample_records();
        let mut model = Structured::default();
        let mut e = BitEncoder::default();
        for &r in &recs {
            assert!(model.encode(r, &mut e));
        }
        let coded = e.finish();
        let mut model = Structured::default();
        let mut d = BitDecoder::new(&coded);
        let mut text = Vec::new();
        for &r in &recs {
            match (model.decode(&mut d, &mut text).unwrap(), r) {
                (Record::Verbatim(_, t), Record::Verbatim(bytes, terminated)) => {
                    assert_eq!((text.as_slice(), t), (bytes, terminated));
                }
                (got, want) => assert_eq!(got, want),
            }
        }
        assert_eq!(d.overrun(), 0);
    }

    #[test]
    fn damage_is_an_error_or_wrong_records_never_a_panic() {
        let mut text = Vec::new();
        for seed in 0u8..=255 {
            let coded = [seed, seed.wrapping_mul(37), 0x55, seed ^ 0xa5];
            let mut model = Structured::default();
            let mut d = BitDecoder::new(&coded);
            for _ in 0..200 {
                if model.decode(&mut d, &mut text).is_err() {
                    break;
                }
            }
        }
    }
}
