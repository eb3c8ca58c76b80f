//! Names generated code uses, by absolute path, so that it compiles under
//! `#![no_implicit_prelude]` and whatever the user's crate calls things. Not a public API.

pub use super::codec::{Decoder, Encoder, Stop};
pub use super::plan::FormatPlan;
pub use super::scalar::Scalar;
pub use super::spec::{FormatSpec, GroupSpec, RecordSpec};
pub use super::{Format, Record};
pub use crate::error::Error;
pub use metatf_dtd::Interpretation;
pub use std::option::Option;
pub use std::result::Result;
pub use std::sync::OnceLock;
pub use std::vec::Vec;

/// Turns the cached outcome of building a plan into what [`Format::plan`] returns.
pub fn plan_result(
    plan: &'static Result<FormatPlan, std::string::String>,
) -> Result<&'static FormatPlan, Error> {
    match plan {
        Ok(p) => Ok(p),
        Err(message) => Err(Error::Schema {
            message: message.clone(),
        }),
    }
}

/// The error a generated `decode` returns for a variant index it does not have.
pub fn unknown_variant(format: &str, variant: usize) -> Error {
    Error::invalid(format!(
        "format {format} has no record type number {variant}"
    ))
}

pub use std::string::String;

/// The spec of a format made of one group of records.
pub fn one_group(
    format: &'static str,
    tag_width: u8,
    section: Option<(&'static str, u8)>,
    source: Option<&'static str>,
    records: &[RecordSpec],
) -> FormatSpec {
    FormatSpec {
        format,
        tag_width,
        groups: std::vec![GroupSpec {
            section,
            records: records.to_vec(),
        }],
        source,
    }
}

/// The spec of a format whose variants are formats (`#[metatf(sections)]`): their groups in
/// variant order.
pub fn join(
    format: &'static str,
    tag_width: u8,
    source: Option<&'static str>,
    parts: &[FormatSpec],
) -> FormatSpec {
    FormatSpec {
        format,
        tag_width,
        groups: parts
            .iter()
            .flat_map(|p| p.groups.iter().cloned())
            .collect(),
        source,
    }
}
