//! The records of Elephant Tracks files straight from the model's decoder: the typed records
//! it decodes are handed on as they are, never printed and parsed back (the text round trip
//! was most of the time of an export); lines the encoder stored as text are parsed as the
//! format's line parser parses them.

use std::ops::Range;

use metatf::container::Block;

use super::builtin;
use super::value::{Fields, Item, Record};
use super::Visitor;
use crate::format::FormatError;
use crate::formats::et::line::Record as EtRecord;
use crate::formats::et::model::RecordSink;
use crate::formats::et::records::{visit_records, BlockVisitor};
use crate::seek::ReadSeek;

/// Visits records `range` of the Elephant Tracks file `input`.
pub(crate) fn read(
    input: &mut dyn ReadSeek,
    name: &str,
    range: Range<u64>,
    visitor: &mut Visitor<'_>,
) -> Result<u64, FormatError> {
    let mut visit = Visit {
        visitor,
        keep: 0..0,
        first_record: 0,
        next: 0,
        failure: None,
    };
    visit_records(input, name, range.start, range.end, &mut |_| {}, &mut visit)
}

/// Hands the wanted records of each block to the visitor.
struct Visit<'v, 'w> {
    visitor: &'v mut Visitor<'w>,
    /// The records of the block wanted, counted within it.
    keep: Range<u64>,
    /// Number in the file of the block's first record.
    first_record: u64,
    /// The next record's number within the block.
    next: u64,
    /// The visitor's error: the rest of the block is decoded, not visited.
    failure: Option<FormatError>,
}

impl Visit<'_, '_> {
    /// Visits the block's next record (of type `record_type` with `fields`), if it is wanted.
    fn visit(&mut self, record_type: usize, fields: &Fields<'_>) {
        let k = self.next;
        self.next += 1;
        if self.failure.is_some() || !self.keep.contains(&k) {
            return;
        }
        let record = Record {
            index: self.first_record.saturating_add(k),
            record_type,
            values: fields.as_slice(),
        };
        if let Err(e) = (self.visitor)(Item::Record(record)) {
            self.failure = Some(e);
        }
    }
}

impl RecordSink for Visit<'_, '_> {
    #[inline]
    fn record(&mut self, r: &EtRecord) {
        if self.failure.is_some() || !self.keep.contains(&self.next) {
            self.next += 1;
            return;
        }
        let mut fields = Fields::new();
        let record_type = builtin::et_record(r, &mut fields);
        self.visit(record_type, &fields);
    }

    fn text(&mut self, bytes: &[u8], _newline: bool) {
        let mut fields = Fields::new();
        let record_type = builtin::et(bytes, &mut fields);
        self.visit(record_type, &fields);
    }
}

impl BlockVisitor for Visit<'_, '_> {
    fn begin(&mut self, block: &Block, keep: Range<u64>) -> Result<(), FormatError> {
        self.keep = keep;
        self.first_record = block.first_record;
        self.next = 0;
        (self.visitor)(Item::Block {
            index: block.index,
            first_record: block.first_record,
            record_count: block.record_count,
        })
    }

    fn end(&mut self) -> Result<(), FormatError> {
        self.failure.take().map_or(Ok(()), Err)
    }
}
