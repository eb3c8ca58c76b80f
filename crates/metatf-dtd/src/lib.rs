//! The Meta-TF DTD language: parsing, validation, the resolved schema model, formatting.
#![warn(missing_docs)]

pub mod model;

pub use model::{FieldDef, FieldKind, Interpretation, RecordDef, Schema, Section};
