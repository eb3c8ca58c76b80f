//! What the allocation-trace formats share: the events they reduce to, the `TraceFormat`
//! written once over their event readers, and `validate` and `stats` over those events.

pub mod check;
#[cfg(test)]
pub(crate) mod encode_checks;
pub mod event;
pub mod format_impl;
pub mod placed;
pub mod stats;

pub use event::{AllocEvent, AllocKind};
