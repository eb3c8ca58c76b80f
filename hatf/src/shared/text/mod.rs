//! Text traces: reading lines (whole or in chunks on worker threads), spelling numbers, and the
//! buffers and sinks decoders print into.

pub mod line_chunks;
pub mod line_reader;
pub mod lines;
pub mod numbers;
pub mod out;
pub(crate) mod sink;
