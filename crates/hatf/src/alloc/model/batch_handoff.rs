//! The threaded decode of [`super::pipeline`]: a worker thread runs the model and hands its
//! batches of records to the caller's thread, which reads and decompresses the blocks and
//! writes the text; the two share the printing.
//!
//! Which thread should print depends on the trace and the machine: writing `mtrace` text out
//! costs the caller's thread about as much as the model and the printing cost the worker,
//! while `memory_replay` records are slow to model and quick to print and write (measured on
//! systemui, with the worker only modelling: caller 39 ms of CPU, worker 30; on perl-hash,
//! with the worker printing everything: caller 40, worker 35). So each thread has a sink, and
//! the worker prints each batch itself unless it has so far used more CPU time than the
//! caller's thread, in which case it leaves the batch to the caller: the two threads end up
//! about as busy. (CPU time, not time spent waiting: on a loaded machine a thread also waits
//! for a processor after it is woken, which would count as idle.) The sink that does not
//! print a batch follows it, which costs a few instructions a record. The worker's text goes
//! to the caller's thread, which writes it in order with its own at each
//! [`super::pipeline::flush_point`].
//!
//! Memory stays bounded: at most [`super::pipeline::IN_FLIGHT`] blocks are handed over at a
//! time and at most [`QUEUED`] messages (batches or pieces of text) wait.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use metatf::container::{Block, ContainerReader};

use super::pipeline::{
    check_count, model_error, stopped, BlockModel, Drain, Feeder, Gather, HandOff, Msg, RecordSink,
    SinkMaker, Stop, IN_FLIGHT,
};
use super::{KindTable, Layout, ModelRecord};
use crate::alloc::spin_recv::{recv_spinning, SPIN};
use crate::format::FormatError;

/// Messages the worker may send ahead of the caller's thread.
const QUEUED: usize = 16;
/// Batches between two readings of the worker's CPU time (the decisions in between use the
/// last one: a few hundred microseconds old).
const CLOCK_EVERY: u64 = 4;

/// Decodes every remaining block of `reader` into the sinks `make_sink` makes, the model on a
/// worker thread; returns the number of records. With a `pattern` (for tests), the worker
/// prints batch `k` when bit `k % 64` of it is set, instead of as the threads' CPU times say.
pub fn decode_blocks<'a, R: Read, K: KindTable + Sync + ?Sized>(
    reader: &mut ContainerReader<R>,
    kinds: &K,
    layout: Layout,
    file: &str,
    output: &'a mut dyn Write,
    make_sink: &SinkMaker<'a>,
    pattern: Option<u64>,
) -> Result<u64, FormatError> {
    let busy = &Busy::new(pattern);
    std::thread::scope(|scope| {
        let (block_tx, block_rx) = mpsc::channel::<Arc<Block>>();
        let (msg_tx, msg_rx) = mpsc::sync_channel::<Msg>(QUEUED);
        let (spare_tx, spare_rx) = mpsc::channel::<Vec<ModelRecord>>();
        let (text_spare_tx, text_spare_rx) = mpsc::channel::<Vec<u8>>();
        let drain = HandOff {
            full: msg_tx.clone(),
            spare: text_spare_rx,
        };
        scope.spawn(move || {
            let mut sink = make_sink(Drain::HandOff(drain));
            let channels = WorkerChannels {
                blocks: &block_rx,
                out: &msg_tx,
                spare: &spare_rx,
                busy,
            };
            worker(kinds, layout, sink.as_mut(), &channels);
        });
        let mut sink = make_sink(Drain::Gather(Gather {
            out: output,
            pending: Vec::new(),
            spare: text_spare_tx,
        }));
        // The channel ends are moved in, so they close when this returns, even early: the
        // worker then stops at its next send or receive and the scope can join it.
        drive(
            reader,
            file,
            sink.as_mut(),
            block_tx,
            msg_rx,
            spare_tx,
            busy,
        )
    })
}

/// The worker's ends of the channels.
struct WorkerChannels<'c> {
    blocks: &'c mpsc::Receiver<Arc<Block>>,
    out: &'c mpsc::SyncSender<Msg>,
    spare: &'c mpsc::Receiver<Vec<ModelRecord>>,
    busy: &'c Busy,
}

/// The CPU time each thread has used in the decode so far, in nanoseconds.
struct Busy {
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
}

/// [`Busy::caller_at`] while the caller's thread waits.
const WAITING: u64 = u64::MAX;

impl Busy {
    fn new(pattern: Option<u64>) -> Self {
        Busy {
            caller: AtomicU64::new(0),
            caller_at: AtomicU64::new(WAITING),
            worker: AtomicU64::new(0),
            start: Instant::now(),
            pattern,
            batches: AtomicU64::new(0),
        }
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
    fn worker_prints(&self, worker: u64) -> bool {
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

/// CPU time used by the calling thread, in nanoseconds; 0 where it cannot be read (then the
/// worker prints every batch).
fn thread_cpu_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec, which `t` is, and reads nothing else.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            let secs = u64::try_from(t.tv_sec).unwrap_or(0);
            let nanos = u64::try_from(t.tv_nsec).unwrap_or(0);
            return secs.saturating_mul(1_000_000_000).saturating_add(nanos);
        }
    }
    0
}

/// The worker: decodes the blocks it is handed, in order, into batches, prints those it has
/// time for into `sink`, and sends every batch on.
fn worker<K: KindTable + ?Sized>(
    kinds: &K,
    layout: Layout,
    sink: &mut dyn RecordSink,
    ch: &WorkerChannels<'_>,
) {
    let mut model = BlockModel::new(layout);
    let mut batch = Vec::new();
    // False once the worker's sink failed: the caller's sink, which has seen the same
    // records, then fails on the same one and reports it; the worker only models from then on.
    let mut sink_ok = true;
    let mut printing = false;
    let (mut batches, mut cpu) = (0u64, 0u64);
    for block in ch.blocks {
        sink_ok = sink_ok && sink.block_start(&block).is_ok();
        let mut done = 0u64;
        let result = model.batches(kinds, &block, &mut batch, &mut |b| {
            // The CPU clock is read every few batches: a read is a system call (about 0.6 µs
            // here), once a batch 1 % of a memory-replay model's time.
            if batches.is_multiple_of(CLOCK_EVERY) {
                cpu = thread_cpu_ns();
            }
            batches += 1;
            let print = sink_ok && ch.busy.worker_prints(cpu);
            if sink_ok {
                // The text of the batches printed here goes before that of the next batch
                // the caller prints.
                let switching = printing && !print;
                let followed = if switching { sink.flush() } else { Ok(()) }
                    .and_then(|()| sink.records(&block, done, b, print));
                if followed.is_err() {
                    sink_ok = false;
                    // Only the text of whole batches before this one is held: send it.
                    let _ = sink.flush();
                }
            }
            printing = print && sink_ok;
            // Hand the batch itself over and decode the next into a spare one: no copy.
            let mut v = ch.spare.try_recv().unwrap_or_default();
            std::mem::swap(&mut v, b);
            done += v.len() as u64;
            // A closed channel means the caller stopped: stop too.
            ch.out
                .send(Msg::Records(v, printing))
                .map_err(|_| FormatError {
                    file: String::new(),
                    position: String::new(),
                    message: "the caller stopped".to_string(),
                })
        });
        let last = match result {
            Ok(()) => {
                sink_ok = sink_ok && sink.block_end(&block).is_ok();
                Msg::End
            }
            Err(Stop::Model(m)) => {
                if sink_ok {
                    let _ = sink.flush();
                }
                Msg::Failed(m)
            }
            Err(Stop::Sink(_)) => return,
        };
        let failed = matches!(last, Msg::Failed(_));
        if ch.out.send(last).is_err() || failed {
            return;
        }
    }
}

/// The caller's side: reads blocks, hands them to the worker, gives its batches to the sink
/// (to print or to follow) and its text to the sink's drain.
fn drive<R: Read>(
    reader: &mut ContainerReader<R>,
    file: &str,
    sink: &mut dyn RecordSink,
    blocks: mpsc::Sender<Arc<Block>>,
    msgs: mpsc::Receiver<Msg>,
    spare: mpsc::Sender<Vec<ModelRecord>>,
    busy: &Busy,
) -> Result<u64, FormatError> {
    // The caller's thread counts from here, the worker from its start; the time spent
    // polling for messages is not work.
    let start = thread_cpu_ns();
    let mut polled = 0u64;
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
            let msg = match msgs.try_recv() {
                Ok(msg) => msg,
                Err(mpsc::TryRecvError::Disconnected) => return Err(stopped(file)),
                Err(mpsc::TryRecvError::Empty) => {
                    busy.caller_waits(thread_cpu_ns().saturating_sub(start + polled));
                    // Polled first: a parked caller costs the worker a wake-up per batch.
                    let (msg, spun) = recv_spinning(&msgs, SPIN);
                    polled += u64::try_from(spun.as_nanos()).unwrap_or(u64::MAX);
                    busy.caller_works();
                    msg.map_err(|_| stopped(file))?
                }
            };
            match msg {
                Msg::Records(v, printed) => {
                    sink.records(&block, done, &v, !printed)?;
                    done += v.len() as u64;
                    // The worker may have stopped; then the batch is simply dropped.
                    let _ = spare.send(v);
                }
                Msg::Text(text) => sink.take_printed(text),
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

    #[test]
    fn thread_cpu_time_grows_with_work() {
        let before = thread_cpu_ns();
        let mut x = 1u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
        }
        std::hint::black_box(x);
        if cfg!(unix) {
            assert!(thread_cpu_ns() > before);
        }
    }
}
