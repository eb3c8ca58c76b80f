//! Which declared ending relations a block bears out.
//!
//! [`Streams::enders`] reads from the DTD alone that a record naming only a subset of another's
//! fields may end the values the other creates (a free ends an allocation). Whether it does is
//! a fact of the trace: a method entry's receiver has the fields of an exception record's
//! receiver and a subset of its names, but names the objects of every call, not the few an
//! exception named. The automatic choice asks this module, per block, whether an ender's
//! values were created before in the block by the streams it ends, and trusts the declared
//! relation only where they mostly were. Only the writer's choice of candidates depends on it,
//! so files stay readable whatever it finds.

use super::block::FlatReader;
use super::flat::FlatBlock;
use super::order::Orders;
use super::streams::Streams;
use super::walk::{walk, Side};
use crate::universal::plan::Catalog;
use std::collections::HashSet;

/// One value in `1 << SAMPLE_SHIFT` (by a hash of the value, so an ender's value and its
/// creator's are sampled alike) is looked at: bounds the sets to a fraction of the block.
const SAMPLE_SHIFT: u32 = 4;
/// Most sampled created values held: with 2^20 records of a few fields each, about a tenth of
/// a block's values at most, a few MiB.
const MAX_HELD: usize = 1 << 18;

fn sampled(v: u64) -> bool {
    v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SAMPLE_SHIFT) == 0
}

/// What a block holds of the streams' declared ending relations.
#[derive(Default)]
pub(crate) struct Ending {
    /// Per stream: whether it is an ender ([`Streams::enders`]) whose sampled values in the
    /// block were, at least half of them, earlier values of a stream it ends. A stream with no
    /// sampled values in the block bears out nothing.
    pub(crate) bears: Vec<bool>,
    /// Per stream: whether it has a value in the block.
    pub(crate) present: Vec<bool>,
}

impl Ending {
    pub(crate) fn bears(&self, s: usize) -> bool {
        self.bears.get(s).copied().unwrap_or(false)
    }

    pub(crate) fn present(&self, s: usize) -> bool {
        self.present.get(s).copied().unwrap_or(false)
    }
}

/// Reads `block` for what it holds of the ending relations ([`Ending`]).
pub(crate) fn bears_out(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    orders: &Orders,
) -> Ending {
    let n = streams.len();
    // ends[t]: the streams whose values stream t may end.
    let mut ends: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut creates = vec![false; n];
    for (s, creator) in creates.iter_mut().enumerate() {
        for t in streams.enders(s) {
            ends[t].push(s);
            *creator = true;
        }
    }
    let mut side = Counting {
        input: FlatReader::new(block),
        ends,
        creates,
        held: HashSet::new(),
        values: vec![0; n],
        hits: vec![0; n],
        present: vec![false; n],
    };
    // A block the writer buffered walks whole; on an error nothing is borne out.
    if walk(
        catalog,
        streams,
        &mut side,
        block.records,
        section,
        declared,
        orders,
    )
    .is_err()
    {
        return Ending::default();
    }
    Ending {
        bears: (0..n)
            .map(|t| side.values[t] > 0 && 2 * side.hits[t] >= side.values[t])
            .collect(),
        present: side.present,
    }
}

/// Reads a flat block and counts, per ender, its sampled values and those a stream it ends
/// created before; notes which streams have values.
struct Counting<'a> {
    input: FlatReader<'a>,
    ends: Vec<Vec<usize>>,
    creates: Vec<bool>,
    held: HashSet<(usize, u64)>,
    values: Vec<u64>,
    hits: Vec<u64>,
    present: Vec<bool>,
}

impl Counting<'_> {
    fn observe(&mut self, s: usize, v: u64) {
        if s >= self.ends.len() {
            return;
        }
        self.present[s] = true;
        if !sampled(v) {
            return;
        }
        if !self.ends[s].is_empty() {
            self.values[s] += 1;
            if self.ends[s].iter().any(|&c| self.held.contains(&(c, v))) {
                self.hits[s] += 1;
            }
        }
        if self.creates[s] && self.held.len() < MAX_HELD {
            self.held.insert((s, v));
        }
    }
}

impl Side for Counting<'_> {
    fn tag(&mut self, _: &Catalog, _: usize) -> Result<u64, String> {
        self.input.word()
    }

    fn scalar(&mut self, s: usize) -> Result<u64, String> {
        let v = self.input.word()?;
        self.observe(s, v);
        Ok(v)
    }

    fn open(&mut self, n: usize) -> Result<(), String> {
        self.input.open(n)
    }

    fn scalar_at(&mut self, s: usize, slot: usize) -> Result<u64, String> {
        let v = self.input.word_at(slot)?;
        self.observe(s, v);
        Ok(v)
    }

    fn close(&mut self, n: usize) {
        self.input.close(n);
    }

    fn bytes(&mut self, _: u64, len: u64, _: Option<usize>) -> Result<(), String> {
        self.input.bytes(len).map(|_| ())
    }

    fn meta_count(&mut self) -> Result<u64, String> {
        self.input.word()
    }

    fn meta_value(&mut self, _: u64) -> Result<u64, String> {
        self.input.word()
    }

    fn end_record(&mut self) {}

    fn budget(&mut self) -> &mut u64 {
        &mut self.input.budget
    }
}
