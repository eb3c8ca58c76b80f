//! The Meta-TF runtime: field interpretations, metadata records, the container, the universal codec.
#![warn(missing_docs)]

pub use metatf_derive::MetaTf;
pub use metatf_dtd as dtd;
