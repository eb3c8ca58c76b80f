//! The records of a container the block model wrote, typed as their format types them and
//! handed over without being printed (a printed line parsed back was half the time of an
//! export): each format says how its records become entries ([`EntryReader`]), this file
//! keeps the wanted ones and hands them to an [`EntrySink`].

use std::ops::Range;

use metatf::container::Block;

use super::kept_records::{self, KeepingSink};
use crate::alloc::model::pipeline::RecordSink;
use crate::alloc::model::{KindTable, ModelRecord};
use crate::alloc::text_out::Filled;
use crate::format::FormatError;
use crate::seek::{Note, ReadSeek};

/// What [`visit_records`] hands the records to, each typed as an `E`.
pub(crate) trait EntrySink<E> {
    /// A block begins; its wanted records follow.
    fn block(&mut self, block: &Block) -> Result<(), FormatError>;
    /// Record `index` (counted in the file) is `entry`.
    fn entry(&mut self, index: u64, entry: E) -> Result<(), FormatError>;
}

/// How one format turns the model's records into its entries: the tables and stream cursors
/// its printing decoder keeps, read the same way.
pub(crate) trait EntryReader {
    /// One record, typed; it may borrow from the block and from the reader's tables.
    type Entry<'e>;

    /// A block begins: its tables and streams start afresh (every block decodes on its own).
    fn block_start(&mut self);

    /// Reads `records` of `block`, the first of them record `first` of the block, handing
    /// each to `hand` with its number in the block. Every record is read (the streams are
    /// followed); `hand` keeps the wanted ones.
    fn records<H>(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
        hand: &mut H,
    ) -> Result<(), FormatError>
    where
        H: for<'e> FnMut(u64, Self::Entry<'e>) -> Result<(), FormatError>;
}

/// Decodes records `range` of the container `input` of format `format` (only the blocks that
/// hold them) with `reader` into `sink`; returns how many were handed over.
#[allow(clippy::too_many_arguments)]
pub(crate) fn visit_records<K, R, S>(
    input: &mut dyn ReadSeek,
    format: &str,
    file: &str,
    range: Range<u64>,
    note: Note<'_>,
    kinds: &K,
    reader: R,
    sink: &mut S,
) -> Result<u64, FormatError>
where
    K: KindTable,
    R: EntryReader,
    S: for<'e> EntrySink<R::Entry<'e>> + ?Sized,
{
    let mut typed = Typed {
        reader,
        sink,
        keep: 0..0,
    };
    kept_records::decode_kept(input, format, file, range, note, kinds, &mut typed)
}

/// The model's records read by a format's [`EntryReader`], the wanted ones handed over.
struct Typed<'s, R, S: ?Sized> {
    reader: R,
    sink: &'s mut S,
    /// The records of the block (counted from its first) handed over.
    keep: Range<u64>,
}

impl<R, S> KeepingSink for Typed<'_, R, S>
where
    R: EntryReader,
    S: for<'e> EntrySink<R::Entry<'e>> + ?Sized,
{
    fn keep(&mut self, keep: Range<u64>) {
        self.keep = keep;
    }
}

impl<R, S> RecordSink for Typed<'_, R, S>
where
    R: EntryReader,
    S: for<'e> EntrySink<R::Entry<'e>> + ?Sized,
{
    fn block_start(&mut self, block: &Block) -> Result<(), FormatError> {
        self.reader.block_start();
        if self.keep.start < self.keep.end {
            self.sink.block(block)?;
        }
        Ok(())
    }

    fn records(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
        _print: bool,
    ) -> Result<(), FormatError> {
        let Self { reader, sink, keep } = self;
        reader.records(block, first, records, &mut |k, entry| {
            if keep.contains(&k) {
                sink.entry(block.first_record + k, entry)
            } else {
                Ok(())
            }
        })
    }

    // One thread decodes and hands over every record: nothing is printed elsewhere.
    fn take_printed(&mut self, _text: Filled) {}

    fn flush(&mut self) -> Result<(), FormatError> {
        Ok(())
    }

    fn block_end(&mut self, _block: &Block) -> Result<(), FormatError> {
        Ok(())
    }
}
