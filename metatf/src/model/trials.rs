//! The writer's final say on a block's predictors: the sampled costs rank the candidates, but
//! only roughly (a sample, and residuals costed by a fixed table rather than by the adaptive
//! models that code them). So the block's streams are coded with each choice [`choose`]
//! proposes, the exact bits of every stream are read off the coder's probabilities
//! ([`stream_costs`]), and each stream keeps the choice that coded it smallest (the first
//! proposal on a tie). A stream's bits depend only on its own predictors (they read
//! the values of other streams, never how those were coded), so the per-stream best of the
//! trials codes the block as small as the sum of those bits says (up to the tables' size,
//! which all choices set together). The byte strings are coded once, in the final coding:
//! their model does not depend on the choice ([`stream_costs`]).
//! Memory stays that of coding one block; the time grows by one coding of the streams per
//! distinct proposal, for the streams whose choice it changes.

use super::block::{choose_ordered, encode_costed, stream_costs};
use super::choice::Choice;
use super::flat::FlatBlock;
use super::order::Orders;
use super::report::Costs;
use super::streams::Streams;
use crate::universal::plan::Catalog;

/// A block's coding, the bits each item class took in it, and the predictors it was coded with.
pub(crate) type Best = (Vec<u8>, Costs, Vec<Choice>);

/// Chooses predictors for `block` (the DTD's `fixed` ones kept) with its records' fields
/// coded in `orders`: codes its streams with each proposed choice, and returns its coding with
/// each stream's cheapest proposal, the bits each item class took, and that choice. So a
/// stream's choice does not depend on which other streams the DTD fixes.
pub(crate) fn encode_best(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    fixed: &[Option<Choice>],
    orders: &Orders,
) -> Result<Best, (u64, String)> {
    let chosen = choose_ordered(catalog, streams, block, section, declared, fixed, orders)?;
    // Per stream: the fewest bits any proposal spent on it, and that proposal's choice.
    let mut best: Vec<(f64, Choice)> = vec![(f64::INFINITY, Choice::default()); streams.len()];
    for (i, p) in chosen.proposals.iter().enumerate() {
        // A stream whose choice an earlier proposal had costs what it cost then: only the
        // streams with a new choice are coded.
        let new: Vec<bool> = (0..streams.len())
            .map(|s| chosen.proposals[..i].iter().all(|q| q[s] != p[s]))
            .collect();
        if !new.contains(&true) {
            continue;
        }
        let costs = stream_costs(
            catalog,
            streams,
            block,
            p,
            &new,
            chosen.tag_context,
            section,
            declared,
            orders,
        )?;
        for (s, b) in best.iter_mut().enumerate().filter(|&(s, _)| new[s]) {
            let bits = costs.streams.get(s).copied().unwrap_or(0.0);
            if bits < b.0 {
                *b = (bits, p[s].clone());
            }
        }
    }
    let merged: Vec<Choice> = best.into_iter().map(|(_, c)| c).collect();
    let (bytes, costs) = encode_costed(
        catalog,
        streams,
        block,
        &merged,
        chosen.tag_context,
        section,
        declared,
        orders,
        Some(Costs::new(streams.len())),
    )?;
    Ok((bytes, costs.unwrap_or_else(|| Costs::new(0)), merged))
}
