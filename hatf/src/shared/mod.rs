//! What several formats share, one of each, named for what it is.

pub mod stats_schema;
pub mod zip_entry;
