//! The text side of a block: reading a block of lines for the parsing workers, printing
//! decoded records, and writing each block's text at its place in the output file.

pub(in crate::internal::formats::et) mod block_text;
#[cfg(unix)]
pub(in crate::internal::formats::et) mod positioned;
pub mod print;
