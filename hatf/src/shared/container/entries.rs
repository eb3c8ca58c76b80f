//! The records of a container the block model wrote, typed as their format types them and
//! handed over without being printed (a printed line parsed back was half the time of an
//! export): each format says how its records become entries ([`EntryReader`]), this file
//! keeps the wanted ones and hands them to an [`EntrySink`].

use std::ops::Range;

use metatf::container::Block;

use crate::format::FormatError;
use crate::seek::{Note, ReadSeek};
use crate::shared::allocation_model::threads::decode_pipeline::RecordSink;
use crate::shared::allocation_model::{KindTable, ModelRecord};
use crate::shared::container::block_cursors::{BlockCursors, SideStreams, StreamsAt};
use crate::shared::container::kept_records::{self, KeepingSink};
use crate::shared::text::out::Filled;

/// What [`visit_records`] hands the records to, each typed as an `E`.
pub(crate) trait EntrySink<E> {
    /// A block begins; its wanted records follow.
    fn block(&mut self, block: &Block) -> Result<(), FormatError>;
    /// Record `index` (counted in the file) is `entry`.
    fn entry(&mut self, index: u64, entry: E) -> Result<(), FormatError>;
}

/// How one format turns the model's records into its entries: the tables its printing
/// decoder keeps, and the side streams it reads, read the same way.
pub(crate) trait EntryReader {
    /// One record, typed; it may borrow from the block and from the reader's tables.
    type Entry<'e>
    where
        Self: 'e;

    /// The block's side streams the records read.
    const SIDE_STREAMS: SideStreams;

    /// A block begins: its tables start afresh (every block decodes on its own).
    fn block_start(&mut self);

    /// Reads record `r`, record `k` of its block, following the side streams in `cursors`.
    fn entry<'e, 'b: 'e>(
        &'e mut self,
        cursors: &mut BlockCursors<'b, '_>,
        k: u64,
        r: &ModelRecord,
    ) -> Result<Self::Entry<'e>, FormatError>;
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
        file,
        streams_at: StreamsAt::default(),
    };
    kept_records::decode_kept(input, format, file, range, note, kinds, &mut typed)
}

/// The model's records read by a format's [`EntryReader`], the wanted ones handed over.
struct Typed<'s, 'f, R, S: ?Sized> {
    reader: R,
    sink: &'s mut S,
    /// The records of the block (counted from its first) handed over.
    keep: Range<u64>,
    file: &'f str,
    /// Where the block's side streams have been read up to.
    streams_at: StreamsAt,
}

impl<R, S> KeepingSink for Typed<'_, '_, R, S>
where
    R: EntryReader,
    S: for<'e> EntrySink<R::Entry<'e>> + ?Sized,
{
    fn keep(&mut self, keep: Range<u64>) {
        self.keep = keep;
    }
}

impl<R, S> RecordSink for Typed<'_, '_, R, S>
where
    R: EntryReader,
    S: for<'e> EntrySink<R::Entry<'e>> + ?Sized,
{
    fn block_start(&mut self, block: &Block) -> Result<(), FormatError> {
        self.reader.block_start();
        self.streams_at = StreamsAt::default();
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
        // Every record is read (the side streams are followed); the wanted ones are handed over.
        let mut cursors = BlockCursors::new(block, self.file, R::SIDE_STREAMS, self.streams_at);
        for (k, r) in (first..).zip(records) {
            let entry = self.reader.entry(&mut cursors, k, r)?;
            if self.keep.contains(&k) {
                self.sink.entry(block.first_record + k, entry)?;
            }
        }
        self.streams_at = cursors.streams_at();
        Ok(())
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
