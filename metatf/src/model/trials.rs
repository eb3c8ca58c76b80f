//! The writer's final say on a block's predictors: the sampled costs rank the candidates, but
//! only roughly (a sample, and residuals costed by a fixed table rather than by the adaptive
//! models that code them). So the block is coded whole with each choice [`choose`] proposes,
//! the exact bits of every stream are read off the coder, and each stream keeps the choice
//! that coded it smallest. A stream's bits depend only on its own predictors (they read the
//! values of other streams, never how those were coded), so the per-stream best of the trials
//! codes the block as small as the sum of those bits says (up to the tables' size, which all
//! choices set together).
//! Memory stays that of coding one block; the time grows by one coding per distinct trial.

use super::block::{choose_ordered, encode_costed};
use super::choice::Choice;
use super::flat::FlatBlock;
use super::order::Orders;
use super::report::Costs;
use super::streams::Streams;
use crate::universal::plan::Catalog;

/// A block's coding, the bits each item class took in it, and the predictors it was coded with.
pub(crate) type Best = (Vec<u8>, Costs, Vec<Choice>);

/// Chooses predictors for `block` (the DTD's `fixed` ones kept) with its records' fields
/// coded in `orders`: codes it with each proposed choice, and returns its coding with each
/// stream's cheapest proposal, the bits each item class took, and that choice. So a stream's
/// choice does not depend on which other streams the DTD fixes.
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
    let mut trials: Vec<Vec<Choice>> = vec![chosen.choices];
    for t in chosen.alternative.into_iter().chain(chosen.others) {
        if !trials.contains(&t) {
            trials.push(t);
        }
    }
    let code = |choices: &[Choice]| {
        encode_costed(
            catalog,
            streams,
            block,
            choices,
            chosen.tag_context,
            section,
            declared,
            orders,
            Some(Costs::new(streams.len())),
        )
        .map(|(bytes, costs)| (bytes, costs.unwrap_or_else(|| Costs::new(0))))
    };
    // Per stream: the fewest bits any trial spent on it, and that trial's choice.
    let mut best: Vec<(f64, Choice)> = vec![(f64::INFINITY, Choice::default()); streams.len()];
    let mut coded = Vec::new();
    for t in &trials {
        let (bytes, costs) = code(t)?;
        for (s, b) in best.iter_mut().enumerate() {
            let bits = costs.streams.get(s).copied().unwrap_or(0.0);
            if bits < b.0 {
                *b = (bits, t[s].clone());
            }
        }
        coded.push((bytes, costs));
    }
    let merged: Vec<Choice> = best.into_iter().map(|(_, c)| c).collect();
    let (bytes, costs) = match trials.iter().position(|t| *t == merged) {
        Some(i) => coded.swap_remove(i),
        None => code(&merged)?,
    };
    Ok((bytes, costs, merged))
}
