//! What a block's container sections hold beside the text's records: the per-field byte
//! streams the model writes, and the name files stored with the trace.

pub mod names;
pub mod streams;
