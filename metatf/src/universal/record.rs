//! Dynamic records: what the universal reader returns and the universal writer takes.

use serde::Serialize;

/// The value of one field of a dynamic record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Value {
    /// A scalar field's value (after its interpretation is applied).
    Uint(u64),
    /// A byte-string field (`vfield` data).
    Bytes(Vec<u8>),
    /// A repeated group: one inner list of values per repetition.
    List(Vec<Vec<Value>>),
}

/// One record of a trace, described by the schema rather than by a Rust type. The default is
/// an empty record for [`super::UniversalReader::read_record`] to fill.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DynRecord {
    /// The section the record appears in (`None` before the first section record). Set by the
    /// reader; the writer tracks sections itself and ignores it.
    pub section: Option<u8>,
    /// The record's name in the schema.
    pub name: String,
    /// The record's tag value.
    pub tag: u64,
    /// The record's fields in declaration order, tag excluded, composites flattened.
    /// A `metadata` record has `[record tag, field position, property code, values...]`.
    pub fields: Vec<Value>,
}

/// What the universal reader meets in a trace: the start of a block, or a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A new container block begins.
    Block {
        /// The block's number.
        index: u64,
        /// Records in the block.
        record_count: u64,
    },
    /// The next record.
    Record(DynRecord),
}

/// What [`super::UniversalReader::read_event`] read: an [`Event`] whose record was read into
/// the caller's [`DynRecord`] rather than handed over in a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A new container block begins.
    Block {
        /// The block's number.
        index: u64,
        /// Records in the block.
        record_count: u64,
    },
    /// The next record, now in the caller's record.
    Record,
}
