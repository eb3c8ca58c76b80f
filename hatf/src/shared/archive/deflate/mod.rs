//! Rebuilding a deflate stream byte for byte from its text (preflate): splitting it into
//! pieces, analysing and rebuilding them in bounded child processes, and guarding preflate's
//! panics. The malloc-bench and memory_replay zip front ends store their archives this way.

pub mod analysis_process;
pub mod bounded_child;
pub mod gzip_split;
pub mod piece_stream;
pub mod preflate_guard;
pub mod rebuild_process;
