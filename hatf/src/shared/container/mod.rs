//! The blocks of a container the block model writes: writing and reading them, the block an
//! encoder holds back, and the typed records read from a range of blocks.

pub mod block_cursors;
pub mod blocks;
pub(crate) mod ended_block;
pub(crate) mod entries;
pub(crate) mod kept_records;
pub mod layout;
