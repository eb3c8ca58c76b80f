//! What the allocation-trace formats share: the events they reduce to, and `validate` and
//! `stats` over those events (which `shared::format_parts` gives each such format).

pub mod check;
#[cfg(test)]
pub(crate) mod encode_checks;
pub mod event;
pub mod placed;
pub mod stats;

pub use event::{AllocEvent, AllocKind};
