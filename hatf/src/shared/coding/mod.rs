//! Entropy coders the formats store modelled streams with.

pub mod bit_coder;
pub mod context_mix;
pub mod lzma_alone;
