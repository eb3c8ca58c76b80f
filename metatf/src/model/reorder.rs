//! The writer's choice of the order in which each record's fields are coded: the block is
//! coded in walking order first ([`super::trials`]); then, if the fields coded cheapest there
//! do not already come first in every record, once more with each record's fields from the
//! cheapest to the dearest ([`super::order::propose`]), and the smaller coding is kept. The
//! order is written in the block, so the reader does no search.

use super::choice::Choice;
use super::flat::FlatBlock;
use super::order::{propose, Orders};
use super::report::Costs;
use super::streams::Streams;
use super::trials;
use crate::universal::plan::Catalog;

/// Codes `block` with the predictors and field order that code it smallest (the DTD's `fixed`
/// predictors kept); prints where the bytes went if the environment asks ([`Costs::wanted`]).
pub(crate) fn encode_best(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    fixed: &[Option<Choice>],
) -> Result<Vec<u8>, (u64, String)> {
    let plain = Orders::plain(catalog);
    let mut best = trials::encode_best(catalog, streams, block, section, declared, fixed, &plain)?;
    let mut order = plain;
    let proposed = propose(catalog, streams, &best.1.streams);
    if !proposed.is_plain() {
        let other =
            trials::encode_best(catalog, streams, block, section, declared, fixed, &proposed)?;
        if other.0.len() < best.0.len() {
            best = other;
            order = proposed;
        }
    }
    let (bytes, costs, choices) = best;
    if Costs::wanted(0).is_some() {
        costs.print(catalog, streams, &choices);
        for line in order.describe(catalog) {
            eprintln!("  coding order {line}");
        }
    }
    Ok(bytes)
}
