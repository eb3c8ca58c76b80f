//! How the model's symbols are packed on disk.

pub mod record_shapes;
