//! The sink that prints the model's records as a format's text, shared by the formats whose
//! blocks the model decodes: it holds the text buffer, sends it on at flush points and block
//! ends, drops the text of a batch that failed, and keeps the records a range asks for; the
//! format's [`BatchPrinter`] prints the lines.

use std::io::{BufWriter, Read, Write};
use std::ops::Range;

use metatf::container::Block;

use crate::format::{DecodeOptions, FormatError};
use crate::seek::{Note, ReadSeek};
use crate::shared::allocation_model::threads::decode_pipeline::{self, Drain, RecordSink};
use crate::shared::allocation_model::{KindTable, ModelRecord};
use crate::shared::container::block_cursors::{BlockCursors, SideStreams, StreamsAt};
use crate::shared::container::blocks::{self, write_error};
use crate::shared::container::kept_records::{self, KeepingSink};
use crate::shared::text::out::{Filled, TextOut};

/// How one format prints batches of the model's records. `Default` gives the printer of a
/// file's start, with empty tables.
pub(crate) trait BatchPrinter: Default + 'static {
    /// The format whose files it prints (the header's `format`).
    const FORMAT: &'static str;
    /// The kind codes of the format's records.
    type Kinds: KindTable + Sync;
    /// The kind codes of the format's records.
    const KINDS: Self::Kinds;
    /// The block's streams read besides the records: the format's own (call sites, thread
    /// ids) and the verbatim lines.
    const SIDE_STREAMS: SideStreams;

    /// A block begins: its tables start afresh (every block decodes on its own).
    fn block_start(&mut self);

    /// Prints into `text` the records of `records` (the first of them record `first` of the
    /// block) whose numbers in the block are in `keep`, and follows the others, reading the
    /// side streams through `cursors`. With `ALL` every one is in `keep`, so that none needs
    /// its own test (the common case, a whole block, compiled on its own).
    fn print_run<const ALL: bool>(
        &mut self,
        text: &mut TextOut,
        cursors: &mut BlockCursors<'_, '_>,
        first: u64,
        records: &[ModelRecord],
        keep: &Range<u64>,
    ) -> Result<(), FormatError>;
}

/// Prints decoded records as text with a format's [`BatchPrinter`].
pub(crate) struct TextSink<'f, 'o, P> {
    file: &'f str,
    out: Drain<'o>,
    /// The records of each block (counted from its first) whose text is written.
    keep: Range<u64>,
    text: TextOut,
    /// Where the current block's side streams have been read up to.
    streams_at: StreamsAt,
    printer: P,
}

/// Bytes of text a sink's buffer starts with room for: the lines between two flush points
/// ([`decode_pipeline::flush_point`]) and a batch's worth of room; it grows for longer ones.
const TEXT_ROOM: usize = 1 << 20;

impl<'f, 'o, P: BatchPrinter> TextSink<'f, 'o, P> {
    /// A sink printing with a new `P` into a buffer sent on through `out`; errors name `file`.
    pub(crate) fn new(file: &'f str, out: Drain<'o>) -> Self {
        TextSink {
            file,
            out,
            keep: 0..u64::MAX,
            text: TextOut::new(TEXT_ROOM),
            streams_at: StreamsAt::default(),
            printer: P::default(),
        }
    }
}

/// Reads a whole allocation-model container of `P`'s format and writes its text as `P` prints
/// it; returns the number of records. The model runs on a worker thread when
/// `options.threads` > 1. This is the whole decoder of every format whose blocks the model
/// decodes and a [`BatchPrinter`] prints.
pub(crate) fn decode<P: BatchPrinter>(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut reader = blocks::open(input, P::FORMAT, file)?;
    reader.set_threads(options.threads);
    blocks::check_layout(reader.header(), file)?;
    // No buffer of its own: the text goes out in pieces of hundreds of kilobytes.
    let lines = decode_pipeline::decode_blocks(
        &mut reader,
        &P::KINDS,
        options.threads,
        file,
        output,
        &|drain| Box::new(TextSink::<P>::new(file, drain)),
    )?;
    output.flush().map_err(|e| write_error(file, e))?;
    Ok(lines)
}

/// Reads only records `range` of such a container (the blocks that hold them, see
/// [`crate::seek::decode_records`]) and writes their text; returns how many were written.
pub(crate) fn decode_range<P: BatchPrinter>(
    input: &mut dyn ReadSeek,
    output: &mut dyn Write,
    options: &DecodeOptions,
    range: Range<u64>,
    note: Note<'_>,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut out = BufWriter::with_capacity(1 << 16, output);
    let mut sink = TextSink::<P>::new(file, Drain::Direct(&mut out));
    let written =
        kept_records::decode_kept(input, P::FORMAT, file, range, note, &P::KINDS, &mut sink)?;
    drop(sink);
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(written)
}

impl<P: BatchPrinter> KeepingSink for TextSink<'_, '_, P> {
    fn keep(&mut self, keep: Range<u64>) {
        self.keep = keep;
    }
}

/// No record: what a batch that is only followed keeps.
const NONE: Range<u64> = 0..0;

impl<P: BatchPrinter> RecordSink for TextSink<'_, '_, P> {
    fn block_start(&mut self, _block: &Block) -> Result<(), FormatError> {
        self.printer.block_start();
        self.streams_at = StreamsAt::default();
        Ok(())
    }

    fn records(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
        print: bool,
    ) -> Result<(), FormatError> {
        let keep = if print { &self.keep } else { &NONE };
        // Every record of the batch is kept when printing a whole block (the common case).
        let end = first.saturating_add(records.len() as u64);
        let all = print && keep.start <= first && end <= keep.end;
        let start = self.text.len();
        let mut cursors = BlockCursors::new(block, self.file, P::SIDE_STREAMS, self.streams_at);
        let text = &mut self.text;
        let printed = if all {
            self.printer
                .print_run::<true>(text, &mut cursors, first, records, keep)
        } else {
            self.printer
                .print_run::<false>(text, &mut cursors, first, records, keep)
        };
        if let Err(e) = printed {
            self.text.truncate(start);
            return Err(e);
        }
        self.streams_at = cursors.streams_at();
        if decode_pipeline::flush_point(end) {
            self.flush()?;
        }
        Ok(())
    }

    fn take_printed(&mut self, text: Filled) {
        self.out.take_printed(&mut self.text, text);
    }

    fn flush(&mut self) -> Result<(), FormatError> {
        self.out
            .drain(&mut self.text)
            .map_err(|e| write_error(self.file, e))
    }

    fn block_end(&mut self, _block: &Block) -> Result<(), FormatError> {
        self.flush()
    }
}
