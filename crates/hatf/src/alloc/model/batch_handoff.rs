//! The other threaded decode of [`super::pipeline`]: the worker runs only the model and hands
//! its batches of records to the caller's thread, which prints them and writes the text.
//!
//! Which thread prints decides the balance of a two-thread decode: `mtrace` text is cheap to
//! print and its model light, so printing goes to the worker and the caller's thread only
//! writes; `memory_replay` records take longer to model and to print (decimal thread ids and
//! sizes), and printing them on the caller's thread keeps the two threads even (measured on
//! surfaceflinger: the worker took 71 % of the samples when it printed too, 46 % when not).
//! Memory stays bounded: at most [`super::pipeline::IN_FLIGHT`] blocks are handed over at a
//! time and at most [`QUEUED`] batches wait.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc;
use std::sync::Arc;

use metatf::container::{Block, ContainerReader};

use super::pipeline::{
    check_count, model_error, stopped, BlockModel, Feeder, RecordSink, Stop, IN_FLIGHT,
};
use super::{KindTable, Layout, ModelRecord};
use crate::format::FormatError;

/// Batches the worker may decode ahead of the printing thread.
const QUEUED: usize = 32;

/// What the worker tells the printing thread.
enum Msg {
    /// The next records of the oldest unfinished block.
    Records(Vec<ModelRecord>),
    /// The model failed on the record after those sent for the block.
    Failed(String),
    /// The block's records are all sent.
    End,
}

/// Decodes every remaining block of `reader` into `sink`, the model on a worker thread;
/// returns the number of records.
pub fn decode_blocks<R: Read, K: KindTable + Sync + ?Sized>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    layout: Layout,
    file: &str,
    sink: &mut dyn RecordSink,
) -> Result<u64, FormatError> {
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
            // A closed channel means the printing side stopped: stop too.
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

/// The printing side: reads blocks, hands them to the worker, gives its batches to the sink.
fn drive<R: Read>(
    reader: &mut ContainerReader<R>,
    file: &str,
    sink: &mut dyn RecordSink,
    blocks: mpsc::Sender<Arc<Block>>,
    msgs: mpsc::Receiver<Msg>,
    spare: mpsc::Sender<Vec<ModelRecord>>,
) -> Result<u64, FormatError> {
    let mut feeder = Feeder::new(reader, blocks);
    let mut in_flight: VecDeque<Arc<Block>> = VecDeque::new();
    let mut records = 0u64;
    loop {
        while in_flight.len() < IN_FLIGHT {
            match feeder.next(file) {
                Some(block) => in_flight.push_back(block),
                None => break,
            }
        }
        let Some(block) = in_flight.front().map(Arc::clone) else {
            return feeder.finish(file, records);
        };
        sink.block_start(&block)?;
        let mut done = 0u64;
        loop {
            match msgs.recv().map_err(|_| stopped(file))? {
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
