//! The writer a format's range decoder writes its text into: it cuts the text into records as
//! they arrive, parses each with the format's parser and hands it to the visitor, holding no
//! more than one unfinished record.

use std::io::{self, Write};

use metatf::container::IndexEntry;

use super::builtin::{Framing, Parser};
use super::value::{Fields, Item, Record};
use super::Visitor;
use crate::format::FormatError;
use crate::formats::malloc_bench::proto;

/// A [`Write`] that turns text into [`Item`]s.
pub(crate) struct RecordSink<'v, 'w, 'b> {
    parser: Parser,
    pending: Vec<u8>,
    /// Where the unconsumed bytes of `pending` start.
    start: usize,
    next_index: u64,
    /// Blocks whose start is still ahead, in order (empty ones included).
    blocks: &'b [IndexEntry],
    /// The number of the first of `blocks`: its position in the file's index.
    block_number: u64,
    visitor: &'v mut Visitor<'w>,
    /// The visitor's error, which stopped the decoder.
    pub(crate) failure: Option<FormatError>,
}

impl<'v, 'w, 'b> RecordSink<'v, 'w, 'b> {
    /// A sink whose first record is number `first`, of a file whose index is `blocks` (all of
    /// them, so that a block's position is its number).
    pub(crate) fn new(
        parser: Parser,
        first: u64,
        blocks: &'b [IndexEntry],
        visitor: &'v mut Visitor<'w>,
    ) -> Self {
        RecordSink {
            parser,
            pending: Vec::with_capacity(1 << 16),
            start: 0,
            next_index: first,
            blocks,
            block_number: 0,
            visitor,
            failure: None,
        }
    }

    /// The length of the next whole record at the start of `rest`, if it is all there.
    fn next_len(&self, rest: &[u8], at_end: bool) -> Option<usize> {
        if rest.is_empty() {
            return None;
        }
        let whole = match self.parser.framing() {
            Framing::Lines => memchr::memchr(b'\n', rest).map(|p| p + 1),
            Framing::Protobuf => proto::field_len(rest),
        };
        whole.or(at_end.then_some(rest.len()))
    }

    /// Visits every whole record buffered (and, `at_end`, the rest as the last one).
    fn drain(&mut self, at_end: bool) -> Result<(), FormatError> {
        while let Some(n) = self.next_len(&self.pending[self.start..], at_end) {
            let index = self.next_index;
            while let Some((b, rest)) = self.blocks.split_first() {
                if b.first_record > index {
                    break;
                }
                self.blocks = rest;
                let number = self.block_number;
                self.block_number += 1;
                if b.first_record.saturating_add(b.record_count) > index {
                    (self.visitor)(Item::Block {
                        index: number,
                        first_record: b.first_record,
                        record_count: b.record_count,
                    })?;
                }
            }
            let text = &self.pending[self.start..self.start + n];
            let mut fields = Fields::new();
            let record_type = self.parser.parse(text, &mut fields);
            (self.visitor)(Item::Record(Record {
                index,
                record_type,
                values: fields.as_slice(),
            }))?;
            self.start += n;
            self.next_index += 1;
        }
        // Keep the buffer the size of one record: move the unfinished tail to the front.
        if self.start > 0 && (self.start == self.pending.len() || self.start >= 1 << 16) {
            self.pending.drain(..self.start);
            self.start = 0;
        }
        Ok(())
    }

    /// Visits the last record, which has no line end; returns how many records were visited.
    pub(crate) fn finish(mut self, first: u64) -> Result<u64, FormatError> {
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        self.drain(true)?;
        Ok(self.next_index - first)
    }
}

impl Write for RecordSink<'_, '_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failure.is_some() {
            return Err(io::Error::other("stopped by the record visitor"));
        }
        self.pending.extend_from_slice(buf);
        if let Err(e) = self.drain(false) {
            let message = e.to_string();
            self.failure = Some(e);
            return Err(io::Error::other(message));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block numbers, first records and record numbers of `text` cut as wee_alloc records,
    /// with the file's index `blocks`, from record `first`.
    fn items(text: &[u8], blocks: &[IndexEntry], first: u64) -> Vec<(char, u64, u64)> {
        let mut seen = Vec::new();
        let mut visitor = |item: Item<'_>| {
            seen.push(match item {
                Item::Block {
                    index,
                    first_record,
                    ..
                } => ('b', index, first_record),
                Item::Record(r) => ('r', r.index, r.record_type as u64),
            });
            Ok(())
        };
        let mut sink = RecordSink::new(Parser::WeeAlloc, first, blocks, &mut visitor);
        sink.write_all(text).unwrap();
        sink.finish(first).unwrap();
        seen
    }

    fn entry(first_record: u64, record_count: u64) -> IndexEntry {
        IndexEntry {
            offset: 100 * first_record,
            first_record,
            record_count,
        }
    }

    #[test]
    fn blocks_are_named_by_their_number_not_their_first_record() {
        // Block 1 holds no record; block 2 starts at record 3.
        let blocks = [entry(0, 3), entry(3, 0), entry(3, 2)];
        let text = b"Alloc(1),\nAlloc(2),\nFree(0),\nAlloc(3),\nFree(1),\n";
        let got = items(text, &blocks, 0);
        let marks: Vec<_> = got.iter().filter(|i| i.0 == 'b').collect();
        assert_eq!(marks, [&('b', 0, 0), &('b', 2, 3)]);
        let records: Vec<u64> = got.iter().filter(|i| i.0 == 'r').map(|i| i.1).collect();
        assert_eq!(records, [0, 1, 2, 3, 4]);
        // From record 4 on: only block 2 is met, under its own number.
        let got = items(b"Free(1),\n", &blocks, 4);
        assert_eq!(got[0], ('b', 2, 3));
        assert_eq!(got[1].1, 4);
    }
}
