//! Decoding a container's blocks into batches of typed model records, handed in file order to
//! a [`RecordSink`] (the text renderer of a front end).
//!
//! The model decodes one record after another, but what is done with the records (printing
//! them as text) needs only the records. With two threads or more, the model runs on a worker
//! thread, a batch ahead, while the caller's thread hands batches to the sink: the two halves
//! of a decode overlap whatever the block size. Memory stays bounded: at most two blocks are
//! handed to the worker at a time and at most [`QUEUED`] batches of [`BATCH`] records wait.
//! The sink sees the same batches, in the same order, whatever the thread count, so the output
//! is the same; errors are reported for the first damaged record in file order, as when reading
//! on one thread.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc;
use std::sync::Arc;

use metatf::container::{Block, ContainerReader};

use super::{Cursors, KindTable, Layout, ModelRecord, State};
use crate::alloc::blocks::{self, container_error};
use crate::format::FormatError;

/// Records per batch: big enough that handing a batch over costs nothing per record, small
/// enough that a batch (40 bytes a record) stays in the second-level cache between the model
/// writing it and the sink reading it (at 2^13 records, the stores into the batch were a tenth
/// of the model's time).
pub const BATCH: usize = 1 << 11;
/// Batches the worker may decode ahead of the sink.
const QUEUED: usize = 32;
/// Blocks handed to the worker and not yet finished by the sink.
const IN_FLIGHT: usize = 2;

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
    fn batches<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        block: &Block,
        batch: &mut Vec<ModelRecord>,
        emit: &mut dyn FnMut(&mut Vec<ModelRecord>) -> Result<(), FormatError>,
    ) -> Result<(), Stop> {
        if self.layout.independent() {
            self.state.restart_for_block();
        }
        let sections: [&[u8]; super::stream::COUNT] =
            std::array::from_fn(|i| blocks::section(block, i as u8));
        let mut c = Cursors::new(sections);
        loop {
            batch.clear();
            let decoded = self.state.decode_into(kinds, &mut c, batch, BATCH);
            match decoded {
                Ok(more) => {
                    if !batch.is_empty() {
                        emit(batch).map_err(Stop::Sink)?;
                    }
                    if !more {
                        return Ok(());
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
enum Stop {
    /// The model could not decode the next record (the message).
    Model(String),
    /// The sink failed.
    Sink(FormatError),
}

fn model_error(file: &str, block: &Block, done: u64, message: String) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: format!("block {} record {}", block.index, block.first_record + done),
        message,
    }
}

fn check_count(file: &str, block: &Block, done: u64) -> Result<(), FormatError> {
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

/// What the worker tells the sink's thread.
enum Msg {
    /// The next records of the oldest unfinished block.
    Records(Vec<ModelRecord>),
    /// The model failed on the record after those sent for the block.
    Failed(String),
    /// The block's records are all sent.
    End,
}

/// Decodes every remaining block of `reader` into `sink`, the model on a worker thread when
/// `threads` > 1; returns the number of records. `layout` is the file's.
pub fn decode_blocks<R: Read, K: KindTable + Sync + ?Sized>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    layout: Layout,
    threads: usize,
    file: &str,
    sink: &mut dyn RecordSink,
) -> Result<u64, FormatError> {
    if threads <= 1 {
        let mut model = BlockModel::new(layout);
        let mut records = 0u64;
        while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
            model.block(kinds, &block, file, sink)?;
            records += block.record_count;
        }
        return Ok(records);
    }
    std::thread::scope(|scope| {
        let (block_tx, block_rx) = mpsc::channel::<Arc<Block>>();
        let (msg_tx, msg_rx) = mpsc::sync_channel::<Msg>(QUEUED);
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<ModelRecord>>();
        scope.spawn(move || worker(kinds, layout, &block_rx, &msg_tx, &spare_rx));
        // The channel ends are moved in, so they close when this returns, even early: the
        // worker then stops at its next send or receive and the scope can join it.
        drive(reader, file, sink, block_tx, msg_rx, spare_tx)
    })
}

/// The worker: decodes the blocks it is handed, in order, into batches.
fn worker<K: KindTable + ?Sized>(
    kinds: &K,
    layout: Layout,
    blocks: &mpsc::Receiver<Arc<Block>>,
    out: &mpsc::SyncSender<Msg>,
    spare: &mpsc::Receiver<Vec<ModelRecord>>,
) {
    let mut model = BlockModel::new(layout);
    let mut batch = Vec::new();
    for block in blocks {
        let result = model.batches(kinds, &block, &mut batch, &mut |b| {
            // Hand the batch itself over and decode the next into a spare one: no copy.
            let mut v = spare.try_recv().unwrap_or_default();
            std::mem::swap(&mut v, b);
            // A closed channel means the sink's side stopped: stop too.
            out.send(Msg::Records(v)).map_err(|_| FormatError {
                file: String::new(),
                position: String::new(),
                message: "the sink stopped".to_string(),
            })
        });
        let last = match result {
            Ok(()) => Msg::End,
            Err(Stop::Model(m)) => Msg::Failed(m),
            Err(Stop::Sink(_)) => return,
        };
        let failed = matches!(last, Msg::Failed(_));
        if out.send(last).is_err() || failed {
            return;
        }
    }
}

/// The sink's side: reads blocks, hands them to the worker, gives its batches to the sink.
fn drive<R: Read>(
    reader: &mut ContainerReader<R>,
    file: &str,
    sink: &mut dyn RecordSink,
    blocks: mpsc::Sender<Arc<Block>>,
    msgs: mpsc::Receiver<Msg>,
    spare: mpsc::Sender<Vec<ModelRecord>>,
) -> Result<u64, FormatError> {
    let mut in_flight: VecDeque<Arc<Block>> = VecDeque::new();
    // A read error is returned once the blocks before it are written.
    let mut read_error: Option<FormatError> = None;
    let mut records = 0u64;
    let stopped = || FormatError {
        file: file.to_string(),
        position: String::new(),
        message: "the decoding thread stopped unexpectedly".to_string(),
    };
    loop {
        while in_flight.len() < IN_FLIGHT && read_error.is_none() {
            match reader.next_block() {
                Ok(Some(block)) => {
                    let block = Arc::new(block);
                    blocks.send(Arc::clone(&block)).map_err(|_| stopped())?;
                    in_flight.push_back(block);
                }
                Ok(None) => break,
                Err(e) => read_error = Some(container_error(file, e)),
            }
        }
        let Some(block) = in_flight.front().map(Arc::clone) else {
            return match read_error {
                Some(e) => Err(e),
                None => Ok(records),
            };
        };
        sink.block_start(&block)?;
        let mut done = 0u64;
        loop {
            match msgs.recv().map_err(|_| stopped())? {
                Msg::Records(v) => {
                    sink.records(&block, done, &v)?;
                    done += v.len() as u64;
                    // The worker may have stopped; then the batch is simply dropped.
                    let _ = spare.send(v);
                }
                Msg::Failed(m) => return Err(model_error(file, &block, done, m)),
                Msg::End => break,
            }
        }
        check_count(file, &block, done)?;
        sink.block_end(&block)?;
        records += block.record_count;
        in_flight.pop_front();
    }
}
