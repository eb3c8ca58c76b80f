//! Allocation traces: HATF 1.0 native, glibc mtrace, Android memory_replay, malloc-bench, wee_alloc.

pub mod allocation_format;
pub mod archive_check;
pub mod bit_coder;
pub mod blocks;
pub mod check;
pub mod context_mix;
#[cfg(test)]
mod encode_checks;
mod ended_block;
pub(crate) mod entries;
pub mod event;
pub mod hatf10_dtd;
pub mod huge_pages;
mod kept_records;
pub mod line_chunks;
pub mod lzma_alone;
pub mod malloc_bench;
pub mod memory_replay;
pub mod model;
pub mod mtrace;
pub mod native;
pub mod paper;
pub mod placed;
pub mod raw_store;
pub mod spin_recv;
pub mod stats;
pub mod text_lines;
pub mod text_num;
pub mod text_out;
mod text_sink;
pub mod wee_alloc;

pub use event::{AllocEvent, AllocKind};
