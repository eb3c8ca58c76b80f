//! The threaded decode of [`crate::shared::allocation_model::threads::decode_pipeline`]: a worker thread runs the model and hands its
//! batches of records to the caller's thread, which reads and decompresses the blocks and
//! writes the text; the two share the printing.
//!
//! Which thread should print depends on the trace and the machine: writing `mtrace` text out
//! costs the caller's thread about as much as the model and the printing cost the worker,
//! while `memory_replay` records are slow to model and quick to print and write, so neither a
//! fixed "worker prints" nor "caller prints" keeps both threads equally busy on every trace.
//! So each thread has a sink, and the worker prints each batch itself unless it has so far
//! used more CPU time than the caller's thread, in which case it leaves the batch to the
//! caller: the two threads end up about as busy. (CPU time, not time spent waiting: on a loaded machine a thread also waits
//! for a processor after it is woken, which would count as idle.) The sink that does not
//! print a batch follows it, which costs a few instructions a record. The worker's text goes
//! to the caller's thread, which writes it in order with its own at each
//! [`crate::shared::allocation_model::threads::decode_pipeline::flush_point`].
//!
//! Memory stays bounded: at most [`crate::shared::allocation_model::threads::decode_pipeline::IN_FLIGHT`] blocks are handed over at a
//! time and at most [`QUEUED`] messages (batches or pieces of text) wait.
//!
//! Shaped files (layout `alloc-model-4`, what the encoders write) start with the model's
//! site half on the caller's thread instead (`shaped_decode.rs`), which uses the two sides of
//! the printing here ([`Printer`], [`WorkerOut`]) and, once the site half has moved to the
//! worker, the loops here ([`drive`], [`model_blocks`]).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use metatf::container::{Block, ContainerReader};

use crate::format::FormatError;
use crate::shared::allocation_model::threads::decode_pipeline::{
    model_error, panicked, stopped, BlockModel, Drain, Feeder, Gather, HandOff, Msg, RecordSink,
    SinkMaker, Stop, IN_FLIGHT,
};
use crate::shared::allocation_model::{KindTable, ModelRecord};
use crate::shared::container::blocks::check_record_count;
use crate::shared::threads::cpu_time::thread_cpu_ns;
use crate::shared::threads::spin_recv::recv_counted;
use crate::shared::threads::worker_pool::caught;

/// Messages the worker may send ahead of the caller's thread.
pub(in crate::internal::shared::allocation_model) const QUEUED: usize = 16;
/// Batches between two readings of the worker's CPU time (the decisions in between use the
/// last one: a few hundred microseconds old).
const CLOCK_EVERY: u64 = 4;

/// Decodes every remaining block of `reader` into the sinks `make_sink` makes, the model on a
/// worker thread; returns the number of records. With a `pattern` (for tests), the worker
/// prints batch `k` when bit `k % 64` of it is set, instead of as the threads' CPU times say.
pub fn decode_blocks<'a, R: Read, K: KindTable + Sync + ?Sized>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    file: &str,
    output: &'a mut dyn Write,
    make_sink: &SinkMaker<'a>,
    pattern: Option<u64>,
) -> Result<u64, FormatError> {
    #[allow(unused_mut)]
    let mut busy = Busy::new(pattern);
    #[cfg(test)]
    {
        busy.hand_over_at = HAND_OVER_AT.with(std::cell::Cell::get);
    }
    let busy = &busy;
    // (Tests that force when the site half moves use it whatever the kinds.)
    if kinds.sites_ahead() || busy.hand_over_at.is_some() {
        return crate::shared::allocation_model::threads::shaped_decode::decode_blocks(
            reader, kinds, file, output, make_sink, busy,
        );
    }
    std::thread::scope(|scope| {
        let (block_tx, block_rx) = mpsc::channel::<Arc<Block>>();
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<ModelRecord>>();
        let (worker_text, caller_text) = text_sides(output);
        scope.spawn(move || {
            let WorkerText { drain, to_caller } = worker_text;
            let mut sink = make_sink(Drain::HandOff(drain));
            let channels = WorkerChannels {
                blocks: &block_rx,
                out: &to_caller,
                spare: &spare_rx,
                busy,
            };
            worker(kinds, sink.as_mut(), &channels);
        });
        let mut sink = make_sink(Drain::Gather(caller_text.drain));
        // The channel ends are moved in, so they close when this returns, even early: the
        // worker then stops at its next send or receive and the scope can join it.
        let mut printer = Printer::new(sink.as_mut(), caller_text.from_worker, busy, file);
        drive(Feeder::new(reader, block_tx), &mut printer, &spare_tx)
    })
}

/// The worker's side of a threaded decode's text: where its sink hands text over, and the
/// channel of its messages (batches, text) to the caller's thread.
pub(in crate::internal::shared::allocation_model) struct WorkerText {
    pub(in crate::internal::shared::allocation_model) drain: HandOff,
    pub(in crate::internal::shared::allocation_model) to_caller: mpsc::SyncSender<Msg>,
}

/// The caller's side: its sink's output, with the worker's text to write in order, and the
/// worker's messages.
pub(in crate::internal::shared::allocation_model) struct CallerText<'o> {
    pub(in crate::internal::shared::allocation_model) drain: Gather<'o>,
    pub(in crate::internal::shared::allocation_model) from_worker: mpsc::Receiver<Msg>,
}

/// Connects a worker's text to the caller's `output`: at most [`QUEUED`] messages wait, and
/// the buffers written go back to the worker for its next text. (Both threaded decodes, this
/// file's and `shaped_decode.rs`'s, share it.)
pub(in crate::internal::shared::allocation_model) fn text_sides(
    output: &mut dyn Write,
) -> (WorkerText, CallerText<'_>) {
    let (to_caller, from_worker) = mpsc::sync_channel::<Msg>(QUEUED);
    let (spare_tx, spare_rx) = mpsc::channel::<Vec<u8>>();
    let worker = WorkerText {
        drain: HandOff {
            full: to_caller.clone(),
            spare: spare_rx,
        },
        to_caller,
    };
    let caller = CallerText {
        drain: Gather {
            out: output,
            pending: Vec::new(),
            spare: spare_tx,
        },
        from_worker,
    };
    (worker, caller)
}

#[cfg(test)]
thread_local! {
    /// For tests of `shaped_decode.rs`, the [`Busy::hand_over_at`] of the decodes this thread
    /// starts.
    pub(in crate::internal::shared::allocation_model) static HAND_OVER_AT: std::cell::Cell<Option<u64>> = const {
        std::cell::Cell::new(None)
    };
}

/// The worker's ends of the channels.
struct WorkerChannels<'c> {
    blocks: &'c mpsc::Receiver<Arc<Block>>,
    out: &'c mpsc::SyncSender<Msg>,
    spare: &'c mpsc::Receiver<Vec<ModelRecord>>,
    busy: &'c Busy,
}

/// The CPU time each thread has used in the decode so far, in nanoseconds.
pub(in crate::internal::shared::allocation_model) struct Busy {
    /// The caller's CPU time when it last said...
    caller: AtomicU64,
    /// ...at this time after `start` (its CPU time grows with the time since, while it
    /// works), or [`WAITING`] while it waits for a message (its CPU time does not grow).
    caller_at: AtomicU64,
    worker: AtomicU64,
    start: Instant,
    /// For tests: bit `k % 64` says whether the worker prints batch `k` (of the decode).
    pattern: Option<u64>,
    batches: AtomicU64,
    /// For tests of `shaped_decode.rs`: the site half moves to the worker before the site half
    /// of batch `hand_over_at` (counted from 0 over the decode), in place of when the threads'
    /// CPU times say.
    pub(in crate::internal::shared::allocation_model) hand_over_at: Option<u64>,
}

/// [`Busy::caller_at`] while the caller's thread waits.
const WAITING: u64 = u64::MAX;

impl Busy {
    pub(in crate::internal::shared::allocation_model) fn new(pattern: Option<u64>) -> Self {
        Busy {
            caller: AtomicU64::new(0),
            caller_at: AtomicU64::new(WAITING),
            worker: AtomicU64::new(0),
            start: Instant::now(),
            pattern,
            batches: AtomicU64::new(0),
            hand_over_at: None,
        }
    }

    /// The worker's CPU time when it last said (see [`Self::worker_prints`]).
    pub(in crate::internal::shared::allocation_model) fn worker_cpu(&self) -> u64 {
        self.worker.load(Ordering::Relaxed)
    }

    /// Nanoseconds since `start`.
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(WAITING - 1)
    }

    /// The caller's thread is about to wait, having used `cpu` nanoseconds.
    fn caller_waits(&self, cpu: u64) {
        self.caller.store(cpu, Ordering::Relaxed);
        self.caller_at.store(WAITING, Ordering::Relaxed);
    }

    /// The caller's thread works again.
    fn caller_works(&self) {
        self.caller_at.store(self.now(), Ordering::Relaxed);
    }

    /// True when the worker, having used `worker` nanoseconds, should print its next batch:
    /// it has not used more than the caller's thread (whose CPU time is counted as growing
    /// while it works: it may be in the middle of a long write).
    pub(in crate::internal::shared::allocation_model) fn worker_prints(&self, worker: u64) -> bool {
        if let Some(pattern) = self.pattern {
            let k = self.batches.fetch_add(1, Ordering::Relaxed);
            return pattern >> (k % 64) & 1 == 1;
        }
        self.worker.store(worker, Ordering::Relaxed);
        let mut caller = self.caller.load(Ordering::Relaxed);
        let at = self.caller_at.load(Ordering::Relaxed);
        if at != WAITING {
            caller = caller.saturating_add(self.now().saturating_sub(at));
        }
        worker <= caller
    }
}

/// The worker: decodes the blocks it is handed, in order, into batches, prints those it has
/// time for into `sink`, and sends every batch on.
fn worker<K: KindTable + ?Sized>(kinds: &K, sink: &mut dyn RecordSink, ch: &WorkerChannels<'_>) {
    let mut out = WorkerOut::new(sink, ch.out, ch.busy);
    model_blocks(
        kinds,
        &mut BlockModel::new(),
        ch.blocks.iter(),
        &mut out,
        ch.spare,
    );
}

/// The worker's loop: decodes `blocks` with `model`, handing each batch to `out`, the batch
/// vectors the caller's thread is done with coming back through `spare`.
///
/// Not a job of the shared worker pool: one model decodes every block in order and hands on
/// a block in batches as it goes, where the pool's workers each take whole items on their
/// own. Only the pool's [`caught`] applies: a panic ends the block with an error.
pub(in crate::internal::shared::allocation_model) fn model_blocks<K: KindTable + ?Sized>(
    kinds: &K,
    model: &mut BlockModel,
    blocks: impl Iterator<Item = Arc<Block>>,
    out: &mut WorkerOut<'_>,
    spare: &mpsc::Receiver<Vec<ModelRecord>>,
) {
    let mut batch = Vec::new();
    for block in blocks {
        out.block_start(&block);
        let result = caught(
            || {
                model.batches(kinds, &block, &mut batch, &mut |b| {
                    out.swap_over(&block, b, spare)
                })
            },
            panicked,
        );
        if !out.block_end(&block, result) {
            return;
        }
    }
}

/// The worker's side of the printing: prints the batches it has time for (see [`Busy`]) into
/// its sink, follows the others, and hands every batch on to the caller's thread.
pub(in crate::internal::shared::allocation_model) struct WorkerOut<'w> {
    sink: &'w mut dyn RecordSink,
    out: &'w mpsc::SyncSender<Msg>,
    busy: &'w Busy,
    /// False once the sink failed: the caller's sink, which has seen the same records, then
    /// fails on the same one and reports it; the worker only models from then on.
    sink_ok: bool,
    /// True when the sink printed the last batch.
    printing: bool,
    /// Batches handed over, and the worker's CPU time when last read.
    batches: u64,
    cpu: u64,
    /// CPU time the worker spent waiting for work, which is not work (see [`Busy`]).
    polled: u64,
    /// Records of the current block handed over.
    done: u64,
}

impl<'w> WorkerOut<'w> {
    pub(in crate::internal::shared::allocation_model) fn new(
        sink: &'w mut dyn RecordSink,
        out: &'w mpsc::SyncSender<Msg>,
        busy: &'w Busy,
    ) -> Self {
        WorkerOut {
            sink,
            out,
            busy,
            sink_ok: true,
            printing: false,
            batches: 0,
            cpu: 0,
            polled: 0,
            done: 0,
        }
    }

    /// The worker spent `ns` nanoseconds of CPU time waiting for work.
    pub(in crate::internal::shared::allocation_model) fn polled(&mut self, ns: u64) {
        self.polled = self.polled.saturating_add(ns);
    }

    /// Called before the batches of `block`.
    pub(in crate::internal::shared::allocation_model) fn block_start(&mut self, block: &Block) {
        self.sink_ok = self.sink_ok && self.sink.block_start(block).is_ok();
        self.done = 0;
    }

    /// Prints the next records of `block`, `v`, or only follows them, and hands them over;
    /// an error when the caller has stopped.
    pub(in crate::internal::shared::allocation_model) fn hand_over(
        &mut self,
        block: &Block,
        v: Vec<ModelRecord>,
    ) -> Result<(), FormatError> {
        // The CPU clock is read every few batches: a read is a system call, which once a
        // batch would be a visible share of a short batch's model time.
        if self.batches.is_multiple_of(CLOCK_EVERY) {
            self.cpu = thread_cpu_ns().saturating_sub(self.polled);
        }
        self.batches += 1;
        let print = self.sink_ok && self.busy.worker_prints(self.cpu);
        if self.sink_ok {
            // The text of the batches printed here goes before that of the next batch the
            // caller prints.
            let switching = self.printing && !print;
            let followed = if switching { self.sink.flush() } else { Ok(()) }
                .and_then(|()| self.sink.records(block, self.done, &v, print));
            if followed.is_err() {
                self.sink_ok = false;
                // Only the text of whole batches before this one is held: send it.
                let _ = self.sink.flush();
            }
        }
        self.printing = print && self.sink_ok;
        self.done += v.len() as u64;
        // A closed channel means the caller stopped: stop too.
        self.out
            .send(Msg::Records(v, self.printing))
            .map_err(|_| FormatError {
                file: String::new(),
                position: String::new(),
                message: "the caller stopped".to_string(),
            })
    }

    /// [`Self::hand_over`] for the batch the model decoded into `b`, which gets a spare vector
    /// from `spare` (or a new one) to decode the next batch into: no copy.
    pub(in crate::internal::shared::allocation_model) fn swap_over(
        &mut self,
        block: &Block,
        b: &mut Vec<ModelRecord>,
        spare: &mpsc::Receiver<Vec<ModelRecord>>,
    ) -> Result<(), FormatError> {
        let v = std::mem::replace(b, spare.try_recv().unwrap_or_default());
        self.hand_over(block, v)
    }

    /// Called when the model stopped decoding `block`, with why; false when the worker stops
    /// (the model failed, or the caller stopped).
    pub(in crate::internal::shared::allocation_model) fn block_end(
        &mut self,
        block: &Block,
        result: Result<(), Stop>,
    ) -> bool {
        let last = match result {
            Ok(()) => {
                self.sink_ok = self.sink_ok && self.sink.block_end(block).is_ok();
                Msg::End
            }
            Err(Stop::Model(m)) => {
                if self.sink_ok {
                    let _ = self.sink.flush();
                }
                Msg::Failed(m)
            }
            Err(Stop::Sink(_)) => return false,
        };
        let failed = matches!(last, Msg::Failed(_));
        self.out.send(last).is_ok() && !failed
    }
}

/// The caller's side: reads blocks, hands them to the worker (through `feeder`), gives its
/// batches to the sink (to print or to follow) and its text to the sink's drain, and sends
/// the batch vectors back through `spare`.
pub(in crate::internal::shared::allocation_model) fn drive<R: Read, T: From<Arc<Block>>>(
    mut feeder: Feeder<'_, R, T>,
    printer: &mut Printer<'_>,
    spare: &mpsc::Sender<Vec<ModelRecord>>,
) -> Result<u64, FormatError> {
    loop {
        while printer.blocks.len() < IN_FLIGHT {
            match feeder.next(printer.file) {
                Some(block) => printer.blocks.push_back(block),
                None => break,
            }
        }
        if printer.blocks.is_empty() {
            return feeder.finish(printer.file, printer.records);
        }
        if let Some(v) = printer.next()? {
            // The worker may have stopped; then the batch is simply dropped.
            let _ = spare.send(v);
        }
    }
}

/// The caller's side of the printing: takes the worker's messages about the blocks handed to
/// it, in order, and gives their batches to the sink (to print or to follow) and the worker's
/// text to the sink's drain.
pub(in crate::internal::shared::allocation_model) struct Printer<'p> {
    sink: &'p mut dyn RecordSink,
    msgs: mpsc::Receiver<Msg>,
    busy: &'p Busy,
    pub(in crate::internal::shared::allocation_model) file: &'p str,
    /// The blocks handed to the worker and not yet finished, oldest first.
    pub(in crate::internal::shared::allocation_model) blocks: VecDeque<Arc<Block>>,
    /// True once the sink was told of the start of the oldest block.
    started: bool,
    /// Records of the oldest block given to the sink.
    done: u64,
    /// Records of the blocks finished.
    pub(in crate::internal::shared::allocation_model) records: u64,
    /// The caller's CPU time when the decode started, and the CPU time it has spent waiting
    /// for messages since (not work).
    start: u64,
    polled: u64,
}

impl<'p> Printer<'p> {
    pub(in crate::internal::shared::allocation_model) fn new(
        sink: &'p mut dyn RecordSink,
        msgs: mpsc::Receiver<Msg>,
        busy: &'p Busy,
        file: &'p str,
    ) -> Self {
        Printer {
            sink,
            msgs,
            busy,
            file,
            blocks: VecDeque::new(),
            started: false,
            done: 0,
            records: 0,
            // The caller's thread counts from here, the worker from its start.
            start: thread_cpu_ns(),
            polled: 0,
        }
    }

    /// Takes the worker's next message, waiting for it; gives back the vector of a batch it
    /// gave to the sink, to be used again.
    pub(in crate::internal::shared::allocation_model) fn next(
        &mut self,
    ) -> Result<Option<Vec<ModelRecord>>, FormatError> {
        let msg = self.receive()?;
        let Some(block) = self.blocks.front() else {
            return Err(stopped(self.file));
        };
        if !self.started {
            self.sink.block_start(block)?;
            self.started = true;
        }
        match msg {
            Msg::Records(v, printed) => {
                self.sink.records(block, self.done, &v, !printed)?;
                self.done += v.len() as u64;
                return Ok(Some(v));
            }
            Msg::Text(text) => self.sink.take_printed(text),
            Msg::Failed(m) => return Err(model_error(self.file, block, self.done, m)),
            Msg::End => {
                check_record_count(self.file, block, self.done)?;
                self.sink.block_end(block)?;
                self.records += block.record_count;
                (self.started, self.done) = (false, 0);
                self.blocks.pop_front();
            }
        }
        Ok(None)
    }

    /// The caller's CPU time in the decode so far, not counting its waits (a system call).
    pub(in crate::internal::shared::allocation_model) fn cpu(&self) -> u64 {
        thread_cpu_ns().saturating_sub(self.start + self.polled)
    }

    /// The worker's next message, waited for.
    fn receive(&mut self) -> Result<Msg, FormatError> {
        let (busy, counted) = (self.busy, self.start + self.polled);
        // Polled first: a parked caller costs the worker a wake-up per batch. The processor
        // time that takes is not work (its wall time is not either: on a loaded machine the
        // thread also waits for a processor).
        let (msg, waited) = recv_counted(&self.msgs, |cpu| {
            busy.caller_waits(cpu.saturating_sub(counted));
        });
        if let Some(waited) = waited {
            self.polled += waited;
            busy.caller_works();
        }
        msg.map_err(|_| stopped(self.file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_prints_unless_it_has_been_busier() {
        let busy = Busy::new(None);
        assert!(busy.worker_prints(0));
        assert!(!busy.worker_prints(10));
        busy.caller_waits(10);
        assert!(busy.worker_prints(10));
        assert_eq!(busy.worker.load(Ordering::Relaxed), 10);
        let patterned = Busy::new(Some(0b101));
        let printed: Vec<bool> = (0..4).map(|_| patterned.worker_prints(0)).collect();
        assert_eq!(printed, [true, false, true, false]);
        // A caller at work is counted as busy for the time since it started again.
        busy.caller_works();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(busy.worker_prints(1_000_000));
        busy.caller_waits(20);
        assert!(!busy.worker_prints(1_000_000));
    }
}
