//! The writer's choice of the order in which each record's fields are coded: the block's
//! predictors are chosen in walking order first ([`super::trials`]); then, if the fields
//! metered cheapest there do not already come first in every record, the predictors of the
//! records that order changes are chosen once more with each such record's fields from the
//! cheapest to the dearest ([`super::order::propose`]), and the order whose streams meter
//! fewer bits is kept. Only those records' streams are measured and metered again: the
//! others code the same under either order (their predictors read the values of whole
//! earlier records, and the fields of their own records in the same order). The block is
//! then coded once, with the order written in it, so the reader does no search. A block after
//! the first may skip all of this and take the previous block's choice ([`Kept`]).

use super::block::{encode_bytes, sampled_records, stream_costs, Coding};
use super::byte_stage::Stage;
use super::choice::Choice;
use super::engine::Carried;
use super::flat::FlatBlock;
use super::order::{propose, Orders};
use super::report::Costs;
use super::streams::Streams;
use super::tags::TagContext;
use super::trials::{self, Best};
use crate::universal::plan::Catalog;

/// The choice a block was coded with, kept for the next block ([`Carried`]): its predictors,
/// tag context and field order, and the bits per sampled record each stream metered with it
/// on that block's sample windows when it was chosen.
#[derive(Clone)]
pub(crate) struct Kept {
    choices: Vec<Choice>,
    tag_context: TagContext,
    orders: Orders,
    /// Per stream: metered bits per sampled record.
    bits: Vec<f64>,
    /// Blocks coded with it since it was chosen.
    pub(crate) reused: u32,
}

/// Most blocks in a row that reuse a choice before one is made afresh: the check compares
/// each block with the block the choice was made on, which a slow drift passes block after
/// block.
const MOST_REUSES: u32 = 3;
/// A kept choice is reused while it meters the new block's sampled records at most this many
/// times the bits per record it metered on the block it was chosen on, all streams together;
const REUSE_TOTAL: f64 = 1.03;
/// and each stream at most this many times its own bits per record then,
const REUSE_STREAM: f64 = 1.10;
/// plus this share of the whole record's bits then (a stream that takes a few bits may move by
/// many percent without mattering).
const REUSE_STREAM_SLACK: f64 = 0.01;

/// Whether `kept`, metered on `block`'s sampled records, codes them about as well as it
/// coded the block it was chosen on: then the block is coded with it and the search is
/// skipped. Also the bits it metered there, all streams together (`None` when not metered). Why: the search (measuring every candidate, metering the proposals) is most of the
/// writer's time, and the next block of a long trace of one program mostly wants the same
/// predictors; a block whose records meter dearer than that is chosen afresh.
#[allow(clippy::too_many_arguments)]
fn still_holds(
    kept: &Kept,
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    carried: &Carried,
) -> Result<(bool, Option<f64>), (u64, String)> {
    let taken = sampled_records(block.records);
    if kept.reused >= MOST_REUSES || taken == block.records {
        // A block that is not sampled is small enough to choose afresh.
        return Ok((false, None));
    }
    let all = vec![true; streams.len()];
    let costs = stream_costs(
        catalog,
        streams,
        block,
        &kept.choices,
        &all,
        kept.tag_context,
        section,
        declared,
        &kept.orders,
        carried,
    )?;
    let per_record: Vec<f64> = costs.streams.iter().map(|b| b / taken as f64).collect();
    let total: f64 = per_record.iter().sum();
    let was: f64 = kept.bits.iter().sum();
    let streams_hold = per_record
        .iter()
        .zip(&kept.bits)
        .all(|(&now, &then)| now <= then * REUSE_STREAM + was * REUSE_STREAM_SLACK);
    Ok((
        streams_hold && total <= was * REUSE_TOTAL,
        Some(costs.streams.iter().sum()),
    ))
}

/// Codes `block` with the predictors and field order that code it smallest (the DTD's `fixed`
/// predictors kept) and `stage`, its lists starting from `carried`, which then holds the lists
/// to carry into the next block; prints where the bytes went if the environment asks
/// ([`Costs::wanted`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_best(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    fixed: &[Option<Choice>],
    carried: &mut Carried,
    stage: Stage,
) -> Result<Vec<u8>, (u64, String)> {
    let previous = carried.choice.take();
    let (holds, previous_bits) = match &previous {
        Some(k) => still_holds(k, catalog, streams, block, section, declared, carried)?,
        None => (false, None),
    };
    let kept = match previous {
        Some(k) if holds => Kept {
            reused: k.reused + 1,
            ..k
        },
        // The search: the predictors and field order that code the block smallest.
        _ => {
            let n = streams.len();
            let plain = Orders::plain(catalog);
            let all = vec![true; n];
            let first = trials::choose_best(
                catalog, streams, block, section, declared, fixed, &plain, &all, carried,
            )?;
            let proposed = propose(catalog, streams, &first.bits);
            let first_bits = first.bits.clone();
            let (best, order, order_moved) = if proposed.is_plain() {
                (first, plain, None)
            } else {
                // The streams of the reordered records are chosen again; the others keep
                // their choice.
                let moved: Vec<bool> = (0..n)
                    .map(|s| proposed.of(streams.info[s].plan).is_some())
                    .collect();
                let kept: Vec<Option<Choice>> = (0..n)
                    .map(|s| {
                        if moved[s] {
                            fixed.get(s).cloned().flatten()
                        } else {
                            Some(first.choices[s].clone())
                        }
                    })
                    .collect();
                let second = trials::choose_best(
                    catalog, streams, block, section, declared, &kept, &proposed, &moved, carried,
                )?;
                let moved_bits =
                    |b: &Best| (0..n).filter(|&s| moved[s]).map(|s| b.bits[s]).sum::<f64>();
                if moved_bits(&second) < moved_bits(&first) {
                    let bits = second.bits.clone();
                    (second, proposed, Some((bits, moved)))
                } else {
                    (first, plain, None)
                }
            };
            // The reference a later block's check compares with: each stream's metered bits under
            // the kept order (the reordered streams' from the second trials).
            let taken = sampled_records(block.records) as f64;
            let bits: Vec<f64> = match &order_moved {
                Some((second, moved)) => (0..n)
                    .map(|s| if moved[s] { second[s] } else { first_bits[s] })
                    .collect(),
                None => first_bits,
            };
            let searched: f64 = bits.iter().sum();
            match (previous, previous_bits) {
                // The search proposes from estimates and meters a few proposals; the previous
                // block's choice, metered on this block's same records, may still code them
                // smaller, as estimates misjudge what the coder learns.
                (Some(k), Some(was)) if was < searched => Kept { reused: 0, ..k },
                _ => Kept {
                    bits: bits.iter().map(|b| b / taken).collect(),
                    choices: best.choices,
                    tag_context: best.tag_context,
                    orders: order,
                    reused: 0,
                },
            }
        }
    };
    // The metered bits per sampled record, for the whole block.
    let length_bits: Vec<f64> = kept.bits.iter().map(|b| b * block.records as f64).collect();
    let coding = Coding {
        catalog,
        streams,
        block,
        choices: &kept.choices,
        tag_context: kept.tag_context,
        section,
        declared,
        orders: &kept.orders,
    };
    // The byte streams first: they read the lists `carried` holds, which the range coding
    // then replaces with the lists to carry on.
    let by_bytes = match stage {
        Stage::Range => None,
        Stage::Bytes | Stage::Smallest => encode_bytes(&coding, carried)?,
    };
    let (bytes, costs) = match by_bytes {
        Some((bytes, next)) if stage == Stage::Bytes => {
            *carried = next;
            (bytes, None)
        }
        by_bytes => {
            let (range, costs) = super::ends_choice::encode(
                &coding,
                &length_bits,
                Costs::wanted(streams.len()).is_some(),
                carried,
            )?;
            match by_bytes {
                Some((bytes, next)) if bytes.len() < range.len() => {
                    *carried = next;
                    (bytes, None)
                }
                _ => (range, costs),
            }
        }
    };
    if let Some(costs) = costs {
        costs.print(catalog, streams, &kept.choices);
        for line in kept.orders.describe(catalog) {
            eprintln!("  coding order {line}");
        }
    }
    carried.choice = Some(kept);
    Ok(bytes)
}
