//! Archives a trace arrives in: reading zip entries, storing compressed input byte for byte,
//! and checking an archive rebuilt from its parts.

pub mod deflate;
pub mod raw_store;
pub mod rebuilt_check;
pub mod zip_entry;
