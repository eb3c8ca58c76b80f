//! The model engine: modelled blocks for the universal writer and reader.
//!
//! A field's *model interpretation* turns its value into a symbol given state shared by the
//! whole record stream of a block: per-field histories, tables keyed by other fields, live-object
//! recency lists, move-to-front lists ([`predict`]). Every scalar field of every record is a
//! stream ([`streams`]); per block, each stream gets the predictors that measure cheapest on
//! that block ([`choose`] ranks candidates on a sample, [`trials`] codes the block with the
//! best few and keeps each stream's smallest) unless the DTD fixes them (`field.model = ...;`,
//! [`fixed`]), written at the block's start as model metadata entries ([`choice`]).
//! Each value is then coded as the index of the first listed predictor that hits, else the
//! residual against the primary predictor, by an adaptive binary range coder ([`range`],
//! [`numbers`], [`coders`]). The layout is specified in docs/FORMAT.md ("Model engine").

mod block;
mod byte_stage;
mod choice;
mod choose;
mod coders;
mod counter;
mod deltas;
mod ending;
mod ends_choice;
mod engine;
mod fixed;
pub(crate) mod flat;
mod keyed;
mod live;
mod numbers;
mod order;
mod packed_tables;
mod predict;
mod range;
mod record_match;
mod reorder;
mod repeats;
mod report;
mod stack;
mod streams;
mod string_ends;
mod string_slots;
mod strings;
mod tags;
mod trials;
mod walk;

pub(crate) use block::decode as decode_block;
#[cfg(test)]
use block::{choose as choose_block, decode_alone, encode as encode_block};
pub use byte_stage::{Stage, PROPERTY_STAGE, STAGE_BYTES, STAGE_RANGE};
pub(crate) use choice::Choice;
pub(crate) use engine::Carried;
pub(crate) use fixed::fixed_choices;
pub(crate) use reorder::encode_best as encode_block_best;
pub(crate) use streams::Streams;

/// Header property naming the engine that coded the record streams.
pub const PROPERTY_ENGINE: &str = "engine";
/// Value of [`PROPERTY_ENGINE`] for blocks coded by this model engine.
pub const ENGINE_MODEL: &str = "model";
/// Records per modelled block unless the writer is told otherwise; a block also ends when its
/// values take 24 MiB (`FlatBlock::is_full`), which bounds the writer's memory (it holds a
/// block's records while measuring and coding them) and the reader's.
pub const MODEL_BLOCK_RECORDS: u64 = 1 << 20;

#[cfg(test)]
mod byte_stage_tests;
#[cfg(test)]
mod fixed_tests;
#[cfg(test)]
mod order_tests;
#[cfg(test)]
mod packed_tables_tests;
#[cfg(test)]
mod recent_tests;
#[cfg(test)]
mod record_match_tests;
#[cfg(test)]
mod repeats_tests;
#[cfg(test)]
mod stack_tests;
#[cfg(test)]
mod string_ends_tests;
#[cfg(test)]
mod string_key_tests;
#[cfg(test)]
mod string_model_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod top_tests;
