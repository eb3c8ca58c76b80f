//! Decoding a container's blocks into batches of typed model records, handed in file order to
//! a [`RecordSink`] (the text renderer of a front end), whose text goes to a [`Drain`].
//!
//! Writing the text out (the kernel's copy into the page cache) costs about as much as the
//! model and the printing together, and it must happen on the caller's thread, which owns the
//! output. So with two threads or more, a worker thread runs the model and the sink, and hands
//! each full text buffer back to the caller's thread, which reads and decompresses the blocks
//! and writes the text: the two halves of a decode overlap whatever the block size. (Or, for
//! formats whose records are slow to model and print, the worker runs only the model and the
//! caller's thread prints too: `batch_handoff.rs`.) Memory
//! stays bounded: at most [`IN_FLIGHT`] blocks are handed to the worker at a time and at most
//! [`QUEUED`] text buffers wait. The sink sees the same batches, in the same order, whatever
//! the thread count, so the output is the same; errors are reported for the first damaged
//! record in file order, as when reading on one thread.

use std::io::{Read, Write};
use std::sync::mpsc;
use std::sync::Arc;

use metatf::container::{Block, ContainerReader};

use super::{shapes, KindTable, Layout, ModelRecord, State};
use crate::alloc::blocks::{container_error, write_error};
use crate::alloc::text_out::{Filled, TextOut};
use crate::format::FormatError;

/// Records per batch: big enough that handing a batch over costs nothing per record, small
/// enough that a batch (40 bytes a record) stays in the second-level cache between the model
/// writing it and the sink reading it (at 2^13 records, the stores into the batch were a tenth
/// of the model's time).
pub const BATCH: usize = 1 << 11;
/// Text buffers the worker may fill ahead of the writing thread.
const QUEUED: usize = 4;
/// Blocks handed to the worker and not yet finished by the sink.
pub(super) const IN_FLIGHT: usize = 2;

/// What a front end does with the decoded records of a block.
pub trait RecordSink {
    /// Called before the records of `block` (also for a block without records).
    fn block_start(&mut self, block: &Block) -> Result<(), FormatError>;
    /// The next `records` of `block`; `first` counts the block's records before them.
    fn records(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
    ) -> Result<(), FormatError>;
    /// Called after the last records of `block`, once their count was checked.
    fn block_end(&mut self, block: &Block) -> Result<(), FormatError>;
}

/// The model's state across the blocks of one file.
pub struct BlockModel {
    layout: Layout,
    state: State,
    batch: Vec<ModelRecord>,
}

impl BlockModel {
    /// A model for a file of `layout`.
    pub fn new(layout: Layout) -> Self {
        BlockModel {
            layout,
            state: State::fresh(layout),
            batch: Vec::new(),
        }
    }

    /// Decodes every record of `block` (the next block of the file, unless blocks are
    /// independent) into `sink` on the caller's thread.
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
        let result = self.batches(kinds, block, &mut batch, &mut |b| {
            let n = b.len() as u64;
            sink.records(block, done, b)?;
            done += n;
            Ok(())
        });
        self.batch = batch;
        match result {
            Ok(()) => {}
            Err(Stop::Sink(e)) => return Err(e),
            Err(Stop::Model(e)) => return Err(model_error(file, block, done, e)),
        }
        check_count(file, block, done)?;
        sink.block_end(block)
    }

    /// Decodes `block` batch by batch into `batch`, calling `emit` with each full batch and
    /// the last one (`emit` may swap the vector for another, whose contents are dropped). A
    /// model error comes back with the records decoded before it emitted.
    pub(super) fn batches<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        block: &Block,
        batch: &mut Vec<ModelRecord>,
        emit: &mut dyn FnMut(&mut Vec<ModelRecord>) -> Result<(), FormatError>,
    ) -> Result<(), Stop> {
        if self.layout.independent() {
            self.state.restart_for_block();
        }
        let mut c = shapes::block_cursors(self.layout, block);
        loop {
            batch.clear();
            let decoded = self.state.decode_into(kinds, &mut c, batch, BATCH);
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
}

/// Why decoding a block stopped early.
pub(super) enum Stop {
    /// The model could not decode the next record (the message).
    Model(String),
    /// The sink failed.
    Sink(FormatError),
}

pub(super) fn model_error(file: &str, block: &Block, done: u64, message: String) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: format!("block {} record {}", block.index, block.first_record + done),
        message,
    }
}

pub(super) fn check_count(file: &str, block: &Block, done: u64) -> Result<(), FormatError> {
    if done == block.record_count {
        return Ok(());
    }
    Err(FormatError {
        file: file.to_string(),
        position: format!("block {} record {}", block.index, block.first_record + done),
        message: format!(
            "the block holds {done} records, its header says {}",
            block.record_count
        ),
    })
}

/// Where a sink's text goes.
pub enum Drain<'o> {
    /// Written to the output on the sink's own thread.
    Direct(&'o mut dyn Write),
    /// Handed, buffer by buffer, to the thread that owns the output.
    HandOff(HandOff),
}

/// The worker's end of the text channel (see [`Drain::HandOff`]).
pub struct HandOff {
    full: mpsc::SyncSender<Msg>,
    spare: mpsc::Receiver<Vec<u8>>,
}

impl Drain<'_> {
    /// Sends the text of `text` on its way and empties it.
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
        }
    }
}

/// What the worker tells the writing thread.
enum Msg {
    /// Text to write, in order.
    Text(Filled),
    /// The oldest unfinished block is done: its record count, or why it failed.
    Block(Result<u64, FormatError>),
}

/// Makes the sink for a decode from where its text goes.
pub type SinkMaker<'a> = dyn Fn(Drain<'a>) -> Box<dyn RecordSink + 'a> + Sync + 'a;

/// Which thread prints the records when the model has a worker thread (see
/// `batch_handoff.rs` for why it depends on the format).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printing {
    /// The worker prints; the caller's thread only reads blocks and writes text.
    OnWorker,
    /// The caller's thread prints the batches the worker decodes, and writes.
    OnCaller,
}

/// Decodes every remaining block of `reader` into the sink `make_sink` makes, whose text goes
/// to `output`; the model (and the sink, as `printing` says) on a worker thread when
/// `threads` > 1. Returns the number of records. `layout` is the file's. The caller flushes
/// `output`.
#[allow(clippy::too_many_arguments)]
pub fn decode_blocks<'a, R: Read, K: KindTable + Sync + ?Sized>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    layout: Layout,
    threads: usize,
    printing: Printing,
    file: &str,
    output: &'a mut dyn Write,
    make_sink: &SinkMaker<'a>,
) -> Result<u64, FormatError> {
    if threads > 1 && printing == Printing::OnCaller {
        let mut sink = make_sink(Drain::Direct(output));
        return super::batch_handoff::decode_blocks(reader, kinds, layout, file, sink.as_mut());
    }
    if threads <= 1 {
        let mut sink = make_sink(Drain::Direct(output));
        let mut model = BlockModel::new(layout);
        let mut records = 0u64;
        while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
            model.block(kinds, &block, file, sink.as_mut())?;
            records += block.record_count;
        }
        return Ok(records);
    }
    std::thread::scope(|scope| {
        let (block_tx, block_rx) = mpsc::channel::<Arc<Block>>();
        let (msg_tx, msg_rx) = mpsc::sync_channel::<Msg>(QUEUED);
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<u8>>();
        let drain = HandOff {
            full: msg_tx.clone(),
            spare: spare_rx,
        };
        scope.spawn(move || {
            let mut sink = make_sink(Drain::HandOff(drain));
            worker(kinds, layout, file, sink.as_mut(), &block_rx, &msg_tx);
        });
        // The channel ends are moved in, so they close when this returns, even early: the
        // worker then stops at its next send or receive and the scope can join it.
        drive(reader, file, output, block_tx, msg_rx, spare_tx)
    })
}

/// The worker: decodes the blocks it is handed, in order, into the sink, and says how each
/// ended; stops after the first failure.
fn worker<K: KindTable + ?Sized>(
    kinds: &K,
    layout: Layout,
    file: &str,
    sink: &mut dyn RecordSink,
    blocks: &mpsc::Receiver<Arc<Block>>,
    out: &mpsc::SyncSender<Msg>,
) {
    let mut model = BlockModel::new(layout);
    for block in blocks {
        let result = model
            .block(kinds, &block, file, sink)
            .map(|()| block.record_count);
        let failed = result.is_err();
        // A closed channel means the writing side stopped: stop too.
        if out.send(Msg::Block(result)).is_err() || failed {
            return;
        }
    }
}

/// Reads the blocks and hands each to the worker: the part of a threaded decode's calling side
/// that does not depend on which thread prints.
pub(super) struct Feeder<'r, R: Read> {
    reader: &'r mut ContainerReader<R>,
    blocks: mpsc::Sender<Arc<Block>>,
    /// A read error, returned once the blocks before it are written.
    read_error: Option<FormatError>,
    ended: bool,
    /// The worker stops after a failed block: its message says why and comes before its
    /// channel closes, so a block it can no longer take is simply not handed over.
    worker_gone: bool,
}

impl<'r, R: Read> Feeder<'r, R> {
    /// A feeder of `reader`'s blocks to the worker at the other end of `blocks`.
    pub(super) fn new(
        reader: &'r mut ContainerReader<R>,
        blocks: mpsc::Sender<Arc<Block>>,
    ) -> Self {
        Feeder {
            reader,
            blocks,
            read_error: None,
            ended: false,
            worker_gone: false,
        }
    }

    /// The next block, also handed to the worker; `None` at the end of the file, after a read
    /// error, or once the worker has stopped.
    pub(super) fn next(&mut self, file: &str) -> Option<Arc<Block>> {
        if self.ended || self.read_error.is_some() || self.worker_gone {
            return None;
        }
        match self.reader.next_block() {
            Ok(Some(block)) => {
                let block = Arc::new(block);
                match self.blocks.send(Arc::clone(&block)) {
                    Ok(()) => Some(block),
                    Err(_) => {
                        self.worker_gone = true;
                        None
                    }
                }
            }
            Ok(None) => {
                self.ended = true;
                None
            }
            Err(e) => {
                self.read_error = Some(container_error(file, e));
                None
            }
        }
    }

    /// How the decode ends once every block handed over is done: `records` decoded, the read
    /// error, or an error when the worker stopped without saying why.
    pub(super) fn finish(self, file: &str, records: u64) -> Result<u64, FormatError> {
        match self.read_error {
            Some(e) => Err(e),
            None if self.worker_gone => Err(stopped(file)),
            None => Ok(records),
        }
    }
}

/// The error for a worker thread that stopped without saying why.
pub(super) fn stopped(file: &str) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: String::new(),
        message: "the decoding thread stopped unexpectedly".to_string(),
    }
}

/// The writing side: reads blocks, hands them to the worker, writes the text it sends back.
fn drive<R: Read>(
    reader: &mut ContainerReader<R>,
    file: &str,
    output: &mut dyn Write,
    blocks: mpsc::Sender<Arc<Block>>,
    msgs: mpsc::Receiver<Msg>,
    spare: mpsc::Sender<Vec<u8>>,
) -> Result<u64, FormatError> {
    let mut feeder = Feeder::new(reader, blocks);
    let mut in_flight = 0usize;
    let mut records = 0u64;
    loop {
        while in_flight < IN_FLIGHT && feeder.next(file).is_some() {
            in_flight += 1;
        }
        if in_flight == 0 {
            return feeder.finish(file, records);
        }
        match msgs.recv().map_err(|_| stopped(file))? {
            Msg::Text(text) => {
                output
                    .write_all(text.text())
                    .map_err(|e| write_error(file, e))?;
                // The worker may have stopped; then the buffer is simply dropped.
                let _ = spare.send(text.into_buffer());
            }
            Msg::Block(result) => {
                records += result?;
                in_flight -= 1;
            }
        }
    }
}
