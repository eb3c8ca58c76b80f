//! Decoding a container's blocks into batches of typed model records, handed in file order to
//! a [`RecordSink`] (the text renderer of a front end), whose text goes to a [`Drain`].
//!
//! With two threads or more, a worker thread runs the model while the caller's thread reads
//! and decompresses the blocks and writes the text, and the printing is shared between the two
//! as each has time for it (`decode_worker.rs`). The text is written at the same points
//! whatever the thread count ([`flush_point`]), so a decode that fails writes the same text
//! before its error on one thread or several.

use std::io::{Read, Write};
use std::sync::mpsc;
use std::sync::Arc;

use metatf::container::{Block, ContainerReader};

use crate::format::FormatError;
use crate::shared::allocation_model::{
    packing::record_shapes, Cursors, KindTable, ModelRecord, State,
};
use crate::shared::container::blocks::{self, check_record_count, container_error};
use crate::shared::text::out::{Filled, TextOut};
use crate::shared::threads::read_end::ReadEnd;
use crate::shared::threads::worker_pool::caught;

/// Records per batch: big enough that handing a batch over costs nothing per record, small
/// enough that a batch (40 bytes a record) stays in the second-level cache between the model
/// writing it and the sink reading it (at 2^13 records, the stores into the batch would be a
/// tenth of the model's time).
pub const BATCH: usize = 1 << 11;
/// Text is written after every this many records of a block (four batches: a few hundred
/// kilobytes of text, which stays in the cache between being printed and being copied out)
/// and at the block's end.
pub const FLUSH_RECORDS: u64 = 4 * BATCH as u64;
/// Blocks handed to the worker and not yet finished by the sink.
pub(in crate::internal::shared::allocation_model) const IN_FLIGHT: usize = 2;

/// True when a sink that has printed the first `records` records of a block sends its text
/// on (see [`FLUSH_RECORDS`]); the end of the block is one too. Sinks flush there and only
/// there (and when [`Drain::HandOff`] needs it), so the text written before a failure does not
/// depend on the thread count.
#[inline]
pub fn flush_point(records: u64) -> bool {
    records.is_multiple_of(FLUSH_RECORDS)
}

/// What a front end does with the decoded records of a block.
///
/// A threaded decode has one sink on each thread, and each sees every record: it prints those
/// it is given with `print`, and only follows the others (reads what they take from the
/// block's other streams, such as a new thread's id), so that it can print any record after
/// them.
pub trait RecordSink {
    /// Called before the records of `block` (also for a block without records).
    fn block_start(&mut self, block: &Block) -> Result<(), FormatError>;
    /// The next `records` of `block`; `first` counts the block's records before them. Prints
    /// them when `print`, else only follows them. On an error, none of their text is kept.
    /// Flushes at a [`flush_point`].
    fn records(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
        print: bool,
    ) -> Result<(), FormatError>;
    /// Takes `text`, printed by the other sink of a threaded decode for the records that
    /// follow those whose text this sink holds, to be written after it.
    fn take_printed(&mut self, text: Filled);
    /// Sends the text held on its way.
    fn flush(&mut self) -> Result<(), FormatError>;
    /// Called after the last records of `block`, once their count was checked; flushes.
    fn block_end(&mut self, block: &Block) -> Result<(), FormatError>;
}

/// The model's state across the blocks of one file.
pub struct BlockModel {
    state: State,
    batch: Vec<ModelRecord>,
}

impl Default for BlockModel {
    fn default() -> Self {
        BlockModel::new()
    }
}

impl BlockModel {
    /// A model for a file's blocks.
    pub fn new() -> Self {
        BlockModel {
            state: State::for_decoding(),
            batch: Vec::new(),
        }
    }

    /// Decodes every record of `block` into `sink` on the caller's thread.
    pub fn block<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        block: &Block,
        file: &str,
        sink: &mut dyn RecordSink,
    ) -> Result<(), FormatError> {
        sink.block_start(block)?;
        let mut batch = std::mem::take(&mut self.batch);
        let mut done = 0u64;
        let result = caught(
            || {
                self.batches(kinds, block, &mut batch, &mut |b| {
                    let n = b.len() as u64;
                    sink.records(block, done, b, true)?;
                    done += n;
                    Ok(())
                })
            },
            panicked,
        );
        self.batch = batch;
        match result {
            Ok(()) => {}
            Err(Stop::Sink(e)) => return Err(e),
            Err(Stop::Model(e)) => return Err(model_error(file, block, done, e)),
        }
        check_record_count(file, block, done)?;
        sink.block_end(block)
    }

    /// Decodes `block` batch by batch into `batch`, calling `emit` with each full batch and
    /// the last one (`emit` may swap the vector for another, whose contents are dropped). A
    /// model error comes back with the records decoded before it emitted.
    pub(in crate::internal::shared::allocation_model) fn batches<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        block: &Block,
        batch: &mut Vec<ModelRecord>,
        emit: &mut dyn FnMut(&mut Vec<ModelRecord>) -> Result<(), FormatError>,
    ) -> Result<(), Stop> {
        self.state.restart_for_block();
        let mut c = record_shapes::block_cursors(block);
        decode_batches(&mut self.state, kinds, &mut c, batch, emit)
    }

    /// The model's state.
    pub(in crate::internal::shared::allocation_model) fn state(&mut self) -> &mut State {
        &mut self.state
    }
}

/// What [`BlockModel::batches`] does once it has its cursors: decodes the rest of their block
/// with `state`.
pub(in crate::internal::shared::allocation_model) fn decode_batches<K: KindTable + ?Sized>(
    state: &mut State,
    kinds: &K,
    c: &mut Cursors<'_>,
    batch: &mut Vec<ModelRecord>,
    emit: &mut dyn FnMut(&mut Vec<ModelRecord>) -> Result<(), FormatError>,
) -> Result<(), Stop> {
    loop {
        batch.clear();
        let decoded = state.decode_into(kinds, c, batch, BATCH);
        match decoded {
            Ok(more) => {
                if !batch.is_empty() {
                    emit(batch).map_err(Stop::Sink)?;
                }
                if !more {
                    return c.finish().map_err(Stop::Model);
                }
            }
            Err(e) => {
                if !batch.is_empty() {
                    emit(batch).map_err(Stop::Sink)?;
                }
                return Err(Stop::Model(e.message));
            }
        }
    }
}

/// The failure of a block whose decoding panicked. [`caught`] turns the panic
/// into this, so that it is reported as that block's error, with the records before it, on
/// one thread or several: a worker that died instead would leave the caller's thread with
/// nothing to say but that the thread stopped, and one thread would abort the program.
pub(in crate::internal::shared::allocation_model) fn panicked() -> Stop {
    Stop::Model("the decoder failed unexpectedly on this record (an internal error)".to_string())
}

/// Why decoding a block stopped early.
pub(in crate::internal::shared::allocation_model) enum Stop {
    /// The model could not decode the next record (the message).
    Model(String),
    /// The sink failed.
    Sink(FormatError),
}

pub(in crate::internal::shared::allocation_model) fn model_error(
    file: &str,
    block: &Block,
    done: u64,
    message: String,
) -> FormatError {
    blocks::record_error(file, block, block.first_record + done, message)
}

/// Where a sink's text goes.
pub enum Drain<'o> {
    /// Written to the output on the sink's own thread.
    Direct(&'o mut dyn Write),
    /// Handed, buffer by buffer, to the thread that owns the output (the worker's sink of a
    /// threaded decode).
    HandOff(HandOff),
    /// Written to the output with the text the other thread printed (the caller's sink of a
    /// threaded decode).
    Gather(Gather<'o>),
}

/// The worker's end of the text channel (see [`Drain::HandOff`]).
pub struct HandOff {
    pub(in crate::internal::shared::allocation_model) full: mpsc::SyncSender<Msg>,
    pub(in crate::internal::shared::allocation_model) spare: mpsc::Receiver<Vec<u8>>,
}

/// The output of a threaded decode's caller, with the worker's text waiting to be written
/// (see [`Drain::Gather`]).
pub struct Gather<'o> {
    pub(in crate::internal::shared::allocation_model) out: &'o mut dyn Write,
    /// The worker's text, in order, to be written before the sink's own.
    pub(in crate::internal::shared::allocation_model) pending: Vec<Filled>,
    /// Where written buffers go back to the worker.
    pub(in crate::internal::shared::allocation_model) spare: mpsc::Sender<Vec<u8>>,
}

impl Drain<'_> {
    /// Sends the text of `text` on its way (after any text taken from the other thread) and
    /// empties it.
    pub fn drain(&mut self, text: &mut TextOut) -> std::io::Result<()> {
        match self {
            Drain::Direct(w) => text.write_to(*w),
            Drain::HandOff(h) => {
                if text.is_empty() {
                    return Ok(());
                }
                let spare = h.spare.try_recv().unwrap_or_default();
                let full = text.swap_out(spare);
                h.full.send(Msg::Text(full)).map_err(|_| {
                    std::io::Error::new(
                        std::io::ErrorKind::BrokenPipe,
                        "the writing thread stopped",
                    )
                })
            }
            Drain::Gather(g) => {
                for piece in g.pending.drain(..) {
                    g.out.write_all(piece.text())?;
                    // The worker may have stopped; then the buffer is simply dropped.
                    let _ = g.spare.send(piece.into_buffer());
                }
                text.write_to(g.out)
            }
        }
    }

    /// Takes `printed`, text printed elsewhere that comes after `text`: kept as it is while
    /// `text` is empty (the usual case: the worker prints runs of whole intervals between
    /// [`flush_point`]s), else copied after it.
    pub fn take_printed(&mut self, text: &mut TextOut, printed: Filled) {
        match self {
            Drain::Gather(g) if text.is_empty() => g.pending.push(printed),
            Drain::Gather(g) => {
                text.push(printed.text());
                let _ = g.spare.send(printed.into_buffer());
            }
            Drain::Direct(_) | Drain::HandOff(_) => text.push(printed.text()),
        }
    }
}

/// What the worker of a threaded decode tells the caller's thread, in order.
pub(in crate::internal::shared::allocation_model) enum Msg {
    /// The next records of the oldest unfinished block, and whether the worker printed them.
    Records(Vec<ModelRecord>, bool),
    /// Text the worker printed, for records sent before this message.
    Text(Filled),
    /// The model failed on the record after those sent for the block.
    Failed(String),
    /// The block's records are all sent.
    End,
}

/// Makes the sink for a decode from where its text goes.
pub type SinkMaker<'a> = dyn Fn(Drain<'a>) -> Box<dyn RecordSink + 'a> + Sync + 'a;

/// Decodes every remaining block of `reader` into the sink `make_sink` makes, whose text goes
/// to `output`; the model on a worker thread when `threads` > 1, the printing shared between
/// it and the caller's thread. Returns the number of records. The caller
/// flushes `output`.
pub fn decode_blocks<'a, R: Read, K: KindTable + Sync + ?Sized>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    threads: usize,
    file: &str,
    output: &'a mut dyn Write,
    make_sink: &SinkMaker<'a>,
) -> Result<u64, FormatError> {
    if threads > 1 {
        return crate::shared::allocation_model::threads::decode_worker::decode_blocks(
            reader, kinds, file, output, make_sink, None,
        );
    }
    let mut sink = make_sink(Drain::Direct(output));
    let mut model = BlockModel::new();
    let mut records = 0u64;
    while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
        model.block(kinds, &block, file, sink.as_mut())?;
        records += block.record_count;
    }
    Ok(records)
}

/// [`decode_blocks`] on two threads, the worker printing batch `k` when bit `k % 64` of
/// `pattern` is set: for tests of the shared printing, whose choices otherwise depend on
/// timing.
#[cfg(test)]
pub(crate) fn decode_blocks_sharing<'a, R: Read, K: KindTable + Sync + ?Sized>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    file: &str,
    output: &'a mut dyn Write,
    make_sink: &SinkMaker<'a>,
    pattern: u64,
) -> Result<u64, FormatError> {
    crate::shared::allocation_model::threads::decode_worker::decode_blocks(
        reader,
        kinds,
        file,
        output,
        make_sink,
        Some(pattern),
    )
}

/// Encodes `text` with `format` and decodes it with [`decode_blocks_sharing`] and each of a
/// few patterns, the sinks made by `make_sink`; every decode must give `text` back.
#[cfg(test)]
pub(crate) fn check_sharing<K: KindTable + Sync + ?Sized>(
    format: &dyn crate::format::TraceFormat,
    kinds: &K,
    make_sink: &(dyn for<'a> Fn(Drain<'a>) -> Box<dyn RecordSink + 'a> + Sync),
    text: &[u8],
) {
    let options = crate::format::EncodeOptions {
        input_name: "t".into(),
        keep_bad_lines: true,
        ..crate::format::EncodeOptions::default()
    };
    let mut bin = Vec::new();
    format.encode(&mut &text[..], &mut bin, &options).unwrap();
    for pattern in [
        0,
        u64::MAX,
        0x5555_5555_5555_5555,
        0x0f0f_3c3c_00ff_ff00,
        0x9e37_79b9_7f4a_7c15,
    ] {
        let mut reader =
            crate::shared::container::blocks::open(&bin[..], format.name(), "t").unwrap();
        let mut out = Vec::new();
        let records = decode_blocks_sharing(
            &mut reader,
            kinds,
            "t",
            &mut out,
            &|d| make_sink(d),
            pattern,
        )
        .unwrap();
        assert!(records > 8 * BATCH as u64);
        assert!(out == text, "pattern {pattern:#x}: text differs");
    }
}

/// Reads the blocks and hands each to the worker (as a message `T`): the calling side of a
/// threaded decode.
pub(in crate::internal::shared::allocation_model) struct Feeder<'r, R: Read, T = Arc<Block>> {
    reader: &'r mut ContainerReader<R>,
    blocks: mpsc::Sender<T>,
    /// Closed at the end of the file or a read error, which is returned once the blocks
    /// before it are written.
    input: ReadEnd<FormatError>,
    /// The worker stops after a failed block: its message says why and comes before its
    /// channel closes, so a block it can no longer take is simply not handed over.
    worker_gone: bool,
}
impl<'r, R: Read, T: From<Arc<Block>>> Feeder<'r, R, T> {
    /// A feeder of `reader`'s blocks to the worker at the other end of `blocks`.
    pub(in crate::internal::shared::allocation_model) fn new(
        reader: &'r mut ContainerReader<R>,
        blocks: mpsc::Sender<T>,
    ) -> Self {
        Feeder {
            reader,
            blocks,
            input: ReadEnd::default(),
            worker_gone: false,
        }
    }

    /// The next block, also handed to the worker; `None` at the end of the file, after a read
    /// error, or once the worker has stopped.
    pub(in crate::internal::shared::allocation_model) fn next(
        &mut self,
        file: &str,
    ) -> Option<Arc<Block>> {
        if self.worker_gone {
            return None;
        }
        let reader = &mut self.reader;
        let block = Arc::new(
            self.input
                .read(|| reader.next_block().map_err(|e| container_error(file, e)))?,
        );
        match self.blocks.send(T::from(Arc::clone(&block))) {
            Ok(()) => Some(block),
            Err(_) => {
                self.worker_gone = true;
                None
            }
        }
    }

    /// How the decode ends once every block handed over is done: `records` decoded, the read
    /// error, or an error when the worker stopped without saying why.
    pub(in crate::internal::shared::allocation_model) fn finish(
        mut self,
        file: &str,
        records: u64,
    ) -> Result<u64, FormatError> {
        match self.input.take_error() {
            Some(e) => Err(e),
            None if self.worker_gone => Err(stopped(file)),
            None => Ok(records),
        }
    }
}

/// The error for a worker thread that stopped without saying why.
pub(in crate::internal::shared::allocation_model) fn stopped(file: &str) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: String::new(),
        message: "the decoding thread stopped unexpectedly".to_string(),
    }
}
