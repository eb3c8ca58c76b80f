//! The writer's choice of the order in which each record's fields are coded: the block's
//! predictors are chosen in walking order first ([`super::trials`]); then, if the fields
//! metered cheapest there do not already come first in every record, the predictors of the
//! records that order changes are chosen once more with each such record's fields from the
//! cheapest to the dearest ([`super::order::propose`]), and the order whose streams meter
//! fewer bits is kept. Only those records' streams are measured and metered again: the
//! others code the same under either order (their predictors read the values of whole
//! earlier records, and the fields of their own records in the same order). The block is
//! then coded once, with the order written in it, so the reader does no search.

use super::block::encode_costed;
use super::choice::Choice;
use super::engine::Carried;
use super::flat::FlatBlock;
use super::order::{propose, Orders};
use super::report::Costs;
use super::streams::Streams;
use super::trials::{self, Best};
use crate::universal::plan::Catalog;

/// Codes `block` with the predictors and field order that code it smallest (the DTD's `fixed`
/// predictors kept), its lists starting from `carried`, which then holds the lists to carry
/// into the next block; prints where the bytes went if the environment asks
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
) -> Result<Vec<u8>, (u64, String)> {
    let n = streams.len();
    let plain = Orders::plain(catalog);
    let all = vec![true; n];
    let first = trials::choose_best(
        catalog, streams, block, section, declared, fixed, &plain, &all, carried,
    )?;
    let proposed = propose(catalog, streams, &first.bits);
    let (best, order) = if proposed.is_plain() {
        (first, plain)
    } else {
        // The streams of the reordered records are chosen again; the others keep their choice.
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
        let moved_bits = |b: &Best| (0..n).filter(|&s| moved[s]).map(|s| b.bits[s]).sum::<f64>();
        if moved_bits(&second) < moved_bits(&first) {
            (second, proposed)
        } else {
            (first, plain)
        }
    };
    let (bytes, costs) = encode_costed(
        catalog,
        streams,
        block,
        &best.choices,
        best.tag_context,
        section,
        declared,
        &order,
        Costs::wanted(n),
        carried,
    )?;
    if let Some(costs) = costs {
        costs.print(catalog, streams, &best.choices);
        for line in order.describe(catalog) {
            eprintln!("  coding order {line}");
        }
    }
    Ok(bytes)
}
