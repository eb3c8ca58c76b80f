//! The universal (schema-driven) codec: reads and writes any trace whose DTD is known, as
//! [`DynRecord`]s, without generated code.
//!
//! Layout in the container: the record stream — every record's tag and fields, metadata,
//! comment and section records included, in trace order — is container section 0 of each
//! block (element width 0). Each value section `s` referenced by `sectionOffset s` or
//! `sectionStride s k` is container section `s` of the same block, an array of unsigned
//! elements of the block's chosen width. Value sections are block-local: element indices count
//! from the block's first element, and `sectionStride` cursors restart at 0 in every block.
//! Records never span blocks.

pub(crate) mod modelled;
pub(crate) mod plan;
mod reader;
mod record;
pub(crate) mod values;
mod writer;

pub(crate) use reader::section_name as section_label;
pub use reader::UniversalReader;
pub use record::{DynRecord, Event, Step, Value};
pub use writer::UniversalWriter;

/// Container section number holding the record stream (never a DTD section number, which are 1–255).
pub const RECORD_SECTION: u8 = 0;
/// Records per block the writer uses unless told otherwise.
pub const DEFAULT_BLOCK_RECORDS: u64 = 1 << 16;

/// Records per block a writer (universal or typed) starts with: the model engine's own bound
/// ([`crate::model::MODEL_BLOCK_RECORDS`]) for modelled blocks, else [`DEFAULT_BLOCK_RECORDS`].
pub(crate) fn block_records(modelled: bool) -> u64 {
    if modelled {
        crate::model::MODEL_BLOCK_RECORDS
    } else {
        DEFAULT_BLOCK_RECORDS
    }
}
/// Most fields (counting repetitions) the reader decodes in one record.
pub const MAX_LEAVES_PER_RECORD: usize = 1 << 20;
/// Most fields the reader decodes per byte of a block (record stream plus value sections),
/// beyond [`MAX_LEAVES_PER_RECORD`]: zero-width fields cost no bytes, so this bounds the work a
/// damaged block can cause.
pub const FIELDS_PER_BYTE: usize = 64;

#[cfg(test)]
mod tests;
