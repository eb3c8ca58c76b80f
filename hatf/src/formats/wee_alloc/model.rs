//! The record stream of the `wee-alloc-cm-4` layout (docs/FORMAT.md §6.1, `wee-alloc`): one
//! byte per line in the common case, so the context mixer sees whole records as single symbols
//! and predicts each from the records before it.
//!
//! First byte of a record:
//! - `0..=99`: `Alloc` of the size with that number (sizes are numbered in order of first
//!   appearance, the first 100 of a block);
//! - `100`: `Alloc` of a size without a number, varint size follows;
//! - `101..=116`: `Free` of the live allocation whose index is the previous `Free`'s index plus
//!   d, d = −8…−1, 1…8 in that order (traces often free neighbours in a row);
//! - `117..=236`: `Free` of the live allocation of rank `b − 117` (0 = newest live);
//! - `237`: `Free` of rank ≥ 120, varint `rank − 120` follows;
//! - `238`: `Free` of an index that is not live, varint index follows;
//! - `239` / `240`: a line kept verbatim with / without its `\n`, varint length and bytes follow.
//!
//! The encoder uses the first form that applies, in the order listed.

use crate::shared::live_set::LiveSet;
use metatf::varint::{put_u64, Cursor};

const SIZES: usize = 100;
const ALLOC_NEW: u8 = 100;
const FREE_NEAR: u8 = 101;
const NEAR: i64 = 8;
const FREE_BASE: u8 = 117;
const RANKS: usize = 120;
const FREE_FAR: u8 = 237;
const FREE_MISS: u8 = 238;
const VERBATIM: u8 = 239;
const VERBATIM_LAST: u8 = 240;

/// A decoded record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    /// `Alloc(size),`
    Alloc(u64),
    /// `Free(index),`
    Free(u64),
    /// A line kept as its bytes; `true` when it ended with `\n`.
    Verbatim(&'a [u8], bool),
}

/// What encoder and decoder both track.
#[derive(Debug, Default)]
pub struct RecordModel {
    live: LiveSet,
    /// Sizes in order of first appearance (the first [`SIZES`]); a size keeps its symbol for
    /// the whole block, so repeated stretches of a trace give repeated bytes.
    sizes: Vec<u64>,
    allocs: u64,
    last_freed: Option<u64>,
}

impl RecordModel {
    /// The state before the first line.
    pub fn new() -> Self {
        RecordModel::default()
    }

    /// Appends `r` to `out`.
    pub fn encode(&mut self, r: Record<'_>, out: &mut Vec<u8>) {
        match r {
            Record::Alloc(size) => {
                match self.sizes.iter().position(|&s| s == size) {
                    Some(i) => out.push(i as u8),
                    None => {
                        out.push(ALLOC_NEW);
                        put_u64(out, size);
                    }
                }
                self.allocated(size);
            }
            Record::Free(index) => {
                let near = self.last_freed.and_then(|l| near_symbol(l, index));
                match (near, self.live.remove(index.wrapping_add(1))) {
                    (Some(b), Some(_)) => out.push(b),
                    (_, Some(rank)) if rank < RANKS => out.push(FREE_BASE + rank as u8),
                    (_, Some(rank)) => {
                        out.push(FREE_FAR);
                        put_u64(out, (rank - RANKS) as u64);
                    }
                    (_, None) => {
                        out.push(FREE_MISS);
                        put_u64(out, index);
                    }
                }
                self.freed(index);
            }
            Record::Verbatim(text, terminated) => {
                out.push(if terminated { VERBATIM } else { VERBATIM_LAST });
                put_u64(out, text.len() as u64);
                out.extend_from_slice(text);
            }
        }
    }

    fn allocated(&mut self, size: u64) {
        if self.sizes.len() < SIZES && !self.sizes.contains(&size) {
            self.sizes.push(size);
        }
        // Allocation n is stored as n + 1 so that no live key is 0.
        self.allocs += 1;
        self.live.insert(self.allocs);
    }

    /// Reads the next record from `c`.
    pub fn decode<'a>(&mut self, c: &mut Cursor<'a>) -> Result<Record<'a>, String> {
        let b = c.byte()?;
        Ok(match b {
            0..ALLOC_NEW => {
                let size = self
                    .sizes
                    .get(usize::from(b))
                    .copied()
                    .ok_or_else(|| format!("size symbol {b} but only fewer sizes seen"))?;
                self.allocated(size);
                Record::Alloc(size)
            }
            ALLOC_NEW => {
                let size = c.u64()?;
                self.allocated(size);
                Record::Alloc(size)
            }
            FREE_NEAR..FREE_BASE => {
                let index = self
                    .last_freed
                    .and_then(|l| near_index(l, b))
                    .filter(|&i| self.live.remove(i.wrapping_add(1)).is_some())
                    .ok_or_else(|| format!("free symbol {b} names no live allocation"))?;
                self.freed(index)
            }
            FREE_BASE..FREE_FAR => self.free_rank(usize::from(b - FREE_BASE))?,
            FREE_FAR => {
                let far = usize::try_from(c.u64()?).unwrap_or(usize::MAX);
                self.free_rank(far.saturating_add(RANKS))?
            }
            FREE_MISS => {
                let index = c.u64()?;
                self.freed(index)
            }
            VERBATIM | VERBATIM_LAST => {
                let n = usize::try_from(c.u64()?).map_err(|_| "verbatim line too long")?;
                Record::Verbatim(c.take(n)?, b == VERBATIM)
            }
            _ => return Err(format!("unknown record byte {b}")),
        })
    }

    fn free_rank(&mut self, rank: usize) -> Result<Record<'static>, String> {
        let key = self
            .live
            .remove_rank(rank)
            .ok_or_else(|| format!("free of live rank {rank} but {} are live", self.live.len()))?;
        Ok(self.freed(key - 1))
    }

    fn freed(&mut self, index: u64) -> Record<'static> {
        self.last_freed = Some(index);
        Record::Free(index)
    }
}

/// The near-free symbol for freeing `index` after `last`, if the distance is ±1…±8.
fn near_symbol(last: u64, index: u64) -> Option<u8> {
    let d = (index as i64).wrapping_sub(last as i64);
    match d {
        -8..=-1 => Some(FREE_NEAR + (d + NEAR) as u8),
        1..=8 => Some(FREE_NEAR + (d + NEAR - 1) as u8),
        _ => None,
    }
}

/// Inverse of [`near_symbol`].
fn near_index(last: u64, symbol: u8) -> Option<u64> {
    let k = i64::from(symbol - FREE_NEAR);
    let d = if k < NEAR { k - NEAR } else { k - NEAR + 1 };
    Some(last.wrapping_add(d as u64))
}

/// Records of every shape both codings of a block distinguish (shared by their tests).
#[cfg(test)]
pub(super) fn sample_records() -> Vec<Record<'static>> {
    let mut recs = vec![Record::Alloc(8), Record::Alloc(8), Record::Alloc(1 << 40)];
    for i in 0..300u64 {
        recs.push(Record::Alloc(i % 150));
    }
    recs.push(Record::Free(0)); // oldest: rank ≥ 120
    recs.push(Record::Free(302)); // newest
    recs.push(Record::Free(301)); // near: −1
    recs.push(Record::Free(296)); // near: −5 (a rank for the structured coding)
    recs.push(Record::Free(297)); // near: +1
    recs.push(Record::Free(0)); // not live any more
    recs.push(Record::Free(u64::MAX));
    recs.push(Record::Verbatim(b"Alloc(05),", true));
    recs.push(Record::Verbatim(b"Free(1)", false));
    recs.push(Record::Alloc(u64::MAX));
    recs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_shape_round_trips() {
        let recs = sample_records();
        let mut m = RecordModel::new();
        let mut out = Vec::new();
        for &r in &recs {
            m.encode(r, &mut out);
        }
        let mut m = RecordModel::new();
        let mut c = Cursor::new(&out, "records");
        for &r in &recs {
            assert_eq!(m.decode(&mut c).unwrap(), r);
        }
        assert!(c.is_empty());
        // Damage is an error, not a panic.
        assert!(RecordModel::new()
            .decode(&mut Cursor::new(&[5], "r"))
            .is_err());
        assert!(RecordModel::new()
            .decode(&mut Cursor::new(&[130], "r"))
            .is_err());
        assert!(RecordModel::new()
            .decode(&mut Cursor::new(&[105], "r"))
            .is_err());
        assert!(RecordModel::new()
            .decode(&mut Cursor::new(&[250], "r"))
            .is_err());
    }
}
