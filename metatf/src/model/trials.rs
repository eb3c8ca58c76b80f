//! The writer's final say on a block's predictors: the sampled costs rank the candidates, but
//! only roughly (a sample, and residuals costed by a fixed table rather than by the adaptive
//! models that code them). So the block's streams are coded with each choice [`choose`]
//! proposes, the exact bits of every stream are read off the coder's probabilities
//! ([`stream_costs`]), and each stream keeps the choice that coded it smallest (the first
//! proposal on a tie). A stream's bits depend only on its own predictors (they read
//! the values of other streams, never how those were coded), so the per-stream best of the
//! trials codes the block as small as the sum of those bits says (up to the tables' size,
//! which all choices set together). The trials meter the streams only: the tags and byte
//! strings are coded once, in the final coding, as their models do not depend on the choice.
//! Memory stays that of coding one block; the time grows by one metering of the streams per
//! distinct proposal, for the streams whose choice it changes. A large block is metered on
//! the records its candidates were first measured on ([`super::block`]'s sample windows), not
//! all of them: metering every record took about a third of the writer's time.

use super::block::{choose_ordered, stream_costs};
use super::choice::Choice;
use super::engine::Carried;
use super::flat::FlatBlock;
use super::order::Orders;
use super::streams::Streams;
use super::tags::TagContext;
use crate::universal::plan::Catalog;

/// The writer's choice for a block under one field order.
pub(crate) struct Best {
    /// Per stream: its cheapest proposal.
    pub(crate) choices: Vec<Choice>,
    /// Per stream: the bits that proposal coded it in; 0 for the streams not asked for.
    pub(crate) bits: Vec<f64>,
    /// The tag context the measurement chose.
    pub(crate) tag_context: TagContext,
}

/// Chooses predictors for `block` (the DTD's `fixed` ones kept) with its records' fields
/// coded in `orders`: meters the streams that `wanted` names with each proposed choice, and
/// returns per stream the cheapest proposal with its bits. So a stream's choice does not
/// depend on which other streams the DTD fixes. The streams not wanted keep the first
/// proposal (the only one for a fixed stream) and are not metered.
#[allow(clippy::too_many_arguments)]
pub(crate) fn choose_best(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    fixed: &[Option<Choice>],
    orders: &Orders,
    wanted: &[bool],
    carried: &Carried,
) -> Result<Best, (u64, String)> {
    let chosen = choose_ordered(
        catalog, streams, block, section, declared, fixed, orders, carried,
    )?;
    let is_wanted = |s: usize| wanted.get(s).copied().unwrap_or(false);
    // Per stream: the fewest bits any proposal spent on it, and that proposal's choice.
    let mut best: Vec<(f64, Choice)> = (0..streams.len())
        .map(|s| (f64::INFINITY, chosen.proposals[0][s].clone()))
        .collect();
    for (i, p) in chosen.proposals.iter().enumerate() {
        // A stream whose choice an earlier proposal had costs what it cost then: only the
        // streams with a new choice are coded.
        let new: Vec<bool> = (0..streams.len())
            .map(|s| is_wanted(s) && chosen.proposals[..i].iter().all(|q| q[s] != p[s]))
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
            carried,
        )?;
        for (s, b) in best.iter_mut().enumerate().filter(|&(s, _)| new[s]) {
            let bits = costs.streams.get(s).copied().unwrap_or(0.0);
            if bits < b.0 {
                *b = (bits, p[s].clone());
            }
        }
    }
    let (bits, choices) = best
        .into_iter()
        .map(|(b, c)| (if b.is_finite() { b } else { 0.0 }, c))
        .unzip();
    Ok(Best {
        choices,
        bits,
        tag_context: chosen.tag_context,
    })
}

/// Codes `block` with the choice [`choose_best`] makes under `orders`, every stream metered.
#[cfg(test)]
pub(crate) fn encode_best(
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    fixed: &[Option<Choice>],
    orders: &Orders,
) -> Result<Vec<u8>, (u64, String)> {
    let all = vec![true; streams.len()];
    let best = choose_best(
        catalog,
        streams,
        block,
        section,
        declared,
        fixed,
        orders,
        &all,
        &Carried::default(),
    )?;
    let coding = super::block::Coding {
        catalog,
        streams,
        block,
        choices: &best.choices,
        tag_context: best.tag_context,
        section,
        declared,
        orders,
    };
    let (bytes, _, _) =
        super::block::encode_ended(&coding, &streams.all_ends(), None, &Carried::default())?;
    Ok(bytes)
}
