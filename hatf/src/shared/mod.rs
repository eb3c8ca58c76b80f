//! What several formats share, one of each, named for what it is.

pub mod allocation;
pub mod allocation_model;
pub mod archive;
pub mod coding;
pub mod container;
pub mod format_parts;
pub mod huge_pages;
pub mod key_table;
pub mod live_set;
pub mod stats_schema;
pub mod text;
pub mod threads;
