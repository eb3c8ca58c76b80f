//! Which lengths a block codes with their strings (docs/FORMAT.md §7, "Strings with their
//! ends"), chosen by measurement.
//!
//! Why a choice: a string's end coded among its bytes costs little where the bytes show it
//! (a line that ends in `) = 0`), but a length coded on its own may be predicted from other
//! fields (a call's name gives the length of its arguments), and it narrows the dictionary to
//! strings of that length. Which wins is a fact of the trace: fields of long, varied strings
//! code smaller with their ends, fields of a few names repeated (system call names) with their
//! lengths. So the writer codes the block with every endable length coded with its string,
//! and meanwhile reads per field what the ends cost: the end bits, the dictionary symbols
//! among strings of any length, the strings coded byte by byte that a dictionary of their
//! length would have found, against the symbols that dictionary would have coded (metered)
//! and the lengths' bits that the block's trials metered. Where the lengths measure cheaper
//! by more than [`RECODE_SHARE`] of the block, it codes the block again with those fields'
//! lengths on their own and keeps the smaller coding. Why not code every block both ways:
//! the strings take most of a coding's time, so a second coding of every block would nearly
//! double the writer's time. The reader reads the choice from the block
//! ([`super::coders::Models::decode_setup`]) and does no search.

use super::block::{encode_ended, Coding, Ended};
use super::engine::Carried;
use super::report::Costs;
use super::streams::Streams;

/// Codes `coding`'s block (see [`encode_ended`]), choosing which lengths are coded with their
/// strings, given the bits each stream takes when coded on its own (`length_bits`, an
/// estimate for the whole block); `carried` as there. Gives the costs of the coding kept when
/// `report` is set.
pub(crate) fn encode(
    coding: &Coding<'_>,
    length_bits: &[f64],
    report: bool,
    carried: &mut Carried,
) -> Result<(Vec<u8>, Option<Costs>), (u64, String)> {
    let streams = coding.streams;
    let n = streams.len();
    let endable = streams.all_ends();
    // Every coding seeds from `carried` as it is and hands back its own lists to carry, so
    // `carried` is replaced once, by the coding kept.
    let code = |ended: &[bool], costs: bool| -> Result<Ended, (u64, String)> {
        encode_ended(coding, ended, costs.then(|| Costs::new(n)), carried)
    };
    if !endable.contains(&true) {
        let (bytes, costs, next) = code(&[], report)?;
        *carried = next;
        return Ok((bytes, costs));
    }
    let ends = code(&endable, true)?;
    let (mixed, gain) = match &ends.1 {
        Some(c) => keep_ends(streams, c, length_bits),
        None => (endable.clone(), 0.0),
    };
    let mut kept = ends;
    if gain / 8.0 > RECODE_SHARE * kept.0.len() as f64 {
        let other = code(&mixed, report)?;
        // The smaller coding; the one with every end on a tie.
        if other.0.len() < kept.0.len() {
            kept = other;
        }
    }
    let (bytes, costs, next) = kept;
    *carried = next;
    Ok((bytes, costs.filter(|_| report)))
}

/// The share of a block's coded bytes that the lengths must measure cheaper by before the
/// block is coded again with them ([`encode`]): an estimate is not worth a second coding's
/// time for less.
const RECODE_SHARE: f64 = 0.01;

/// Per stream: whether it is an endable length to code with its string, by what the coding
/// with every end spent (`ends`) against `length_bits`, the bits each length stream takes on
/// its own; and the bits the others are estimated to spare.
fn keep_ends(streams: &Streams, ends: &Costs, length_bits: &[f64]) -> (Vec<bool>, f64) {
    let n = streams.len();
    let mut gain = 0.0;
    let mut keep = vec![false; n];
    for (f, st) in &ends.ends {
        let lengths: Vec<usize> = (0..n)
            .filter(|&s| streams.string_of(s) == Some(*f))
            .collect();
        let length: f64 = lengths
            .iter()
            .map(|&s| length_bits.get(s).copied().unwrap_or(0.0))
            .sum();
        let spared = st.ends + st.rank_any + st.missed - st.rank_same - length;
        if spared > 0.0 {
            gain += spared;
        } else {
            for s in lengths {
                keep[s] = true;
            }
        }
    }
    // An endable field with no string in the block keeps its ends.
    for (s, k) in keep.iter_mut().enumerate() {
        if streams.endable(s)
            && !ends
                .ends
                .iter()
                .any(|(f, _)| streams.string_of(s) == Some(*f))
        {
            *k = true;
        }
    }
    (keep, gain)
}
