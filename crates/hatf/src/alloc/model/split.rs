//! The model encoder with its address half on a worker thread.
//!
//! An encoder's address half (the live blocks and the address predictor: a table lookup that
//! misses the cache for nearly every record) needs only the records themselves, not anything
//! the site half computes (see `halves.rs`). So the caller's thread runs the site half and
//! hands the records, in batches, to a worker that runs the address half into streams of its
//! own; at the end of a block the worker's streams are swapped into the block's. The streams
//! are the same bytes as [`State::encode`] writes, whatever the thread count: each stream is
//! written by one half only, in record order.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::halves::{AddrHalf, SiteHalf};
use super::shapes::Packer;
use super::{stream, KindTable, ModelRecord, State, Streams};

/// Records per batch handed to the worker.
const BATCH: usize = 1 << 12;
/// Batches the caller may run ahead of the worker (bounds memory: 40 bytes a record).
const QUEUED: usize = 8;
/// How many records ahead the worker asks for a record's live-block entry.
const PREFETCH_AHEAD: usize = 16;

/// The streams the address half writes.
const ADDR_STREAMS: [u8; 5] = [
    stream::FREE,
    stream::FREE_MISS,
    stream::ADDR,
    stream::ADDR_MISS,
    stream::RELIVE,
];

/// What the caller sends the worker.
enum Job {
    /// Records to encode, in order.
    Records(Vec<ModelRecord>),
    /// The block ends: send back its streams, then start a fresh block into these (empty)
    /// ones.
    EndBlock(Box<Streams>),
}

/// What the worker sends back.
enum Reply {
    /// A batch, encoded, for reuse.
    Spare(Vec<ModelRecord>),
    /// The address streams of the block that ended.
    Block(Box<Streams>),
}

/// The model's encoder for files whose blocks each start a fresh model (what the text
/// encoders write): [`State::for_block`] at each block, its address half on a worker thread
/// when more than one thread may be used.
pub struct ModelEncoder<K: KindTable + Send + Sync + Copy + 'static> {
    kinds: K,
    mode: Mode,
    /// The block's streams (all of them once [`ModelEncoder::finish_block`] returned).
    streams: Streams,
    /// Packs the block's symbols into shapes ([`ModelEncoder::finish_packed_block`]).
    shapes: Packer,
}

enum Mode {
    /// Both halves on the caller's thread.
    Inline(Box<State>),
    /// The site half here, the address half on `worker`.
    Split {
        sites: Box<SiteHalf>,
        batch: Vec<ModelRecord>,
        /// `None` once the worker has stopped (closed when dropped).
        jobs: Option<SyncSender<Job>>,
        replies: Receiver<Reply>,
        spares: Vec<Vec<ModelRecord>>,
        worker: Option<JoinHandle<()>>,
    },
}

impl<K: KindTable + Send + Sync + Copy + 'static> ModelEncoder<K> {
    /// An encoder for records of `kinds`, splitting the model over two threads when
    /// `threads` > 1.
    pub fn new(kinds: K, threads: usize) -> Self {
        let mode = if threads > 1 {
            let (sites, addrs) = State::for_block().split();
            let (jobs, job_rx) = mpsc::sync_channel::<Job>(QUEUED);
            let (reply_tx, replies) = mpsc::channel::<Reply>();
            let worker = std::thread::Builder::new()
                .name("hatf-model-addresses".to_string())
                .spawn(move || work(kinds, addrs, &job_rx, &reply_tx))
                .ok();
            match worker {
                Some(worker) => Mode::Split {
                    sites: Box::new(sites),
                    batch: Vec::with_capacity(BATCH),
                    jobs: Some(jobs),
                    replies,
                    spares: Vec::new(),
                    worker: Some(worker),
                },
                // No thread to be had: run inline, with the same output.
                None => Mode::Inline(Box::new(State::for_block())),
            }
        } else {
            Mode::Inline(Box::new(State::for_block()))
        };
        ModelEncoder {
            kinds,
            mode,
            streams: Streams::default(),
            shapes: Packer::default(),
        }
    }

    /// Starts fetching what encoding a record at `addr`, a few records from now, will look up
    /// (a hint only; the worker prefetches for itself when the model is split).
    #[inline]
    pub fn prefetch_block(&self, addr: u64) {
        if let Mode::Inline(state) = &self.mode {
            state.prefetch_block(addr);
        }
    }

    /// Encodes `r` as the block's next record. (Should the worker have stopped, the records
    /// are dropped and [`ModelEncoder::finish_block`] says so.)
    #[inline]
    pub fn encode(&mut self, r: &ModelRecord) {
        match &mut self.mode {
            Mode::Inline(state) => state.encode(&self.kinds, r, &mut self.streams),
            Mode::Split {
                sites,
                batch,
                jobs,
                replies,
                spares,
                ..
            } => {
                sites.encode(&self.kinds, r, &mut self.streams);
                batch.push(*r);
                if batch.len() >= BATCH && hand_over(batch, jobs, replies, spares).is_err() {
                    // Closed: `finish_block` fails on its own send.
                    jobs.take();
                }
            }
        }
    }

    /// Ends the block: returns all its streams (for the caller to write, then
    /// [`ModelEncoder::clear_block`]); the model restarts for the next block.
    pub fn finish_block(&mut self) -> Result<&Streams, String> {
        match &mut self.mode {
            Mode::Inline(state) => state.restart_for_block(),
            Mode::Split {
                sites,
                batch,
                jobs,
                replies,
                spares,
                ..
            } => {
                if !batch.is_empty() {
                    hand_over(batch, jobs, replies, spares)?;
                }
                // The worker's streams for the next block: the previous block's address
                // streams, emptied by `clear_block` with their memory kept.
                let mut next = Box::<Streams>::default();
                for n in ADDR_STREAMS {
                    let n = n as usize;
                    next.bytes[n] = std::mem::take(&mut self.streams.bytes[n]);
                }
                send(jobs, Job::EndBlock(next))?;
                let mut addrs = loop {
                    match replies.recv() {
                        Ok(Reply::Spare(v)) => spares.push(v),
                        Ok(Reply::Block(s)) => break s,
                        Err(_) => return Err(stopped()),
                    }
                };
                for n in ADDR_STREAMS {
                    let n = n as usize;
                    self.streams.bytes[n] = std::mem::take(&mut addrs.bytes[n]);
                }
                sites.clear();
            }
        }
        Ok(&self.streams)
    }

    /// Ends the block as [`ModelEncoder::finish_block`] does and packs its symbols into shapes
    /// (layout `alloc-model-4`): returns the block's model sections ([`Packer::sections`]).
    pub fn finish_packed_block(&mut self) -> Result<Vec<(u8, &[u8])>, String> {
        self.finish_block()?;
        self.shapes.pack(&self.kinds, &self.streams)?;
        Ok(self.shapes.sections(&self.streams))
    }

    /// Empties the streams after the caller wrote the block [`ModelEncoder::finish_block`]
    /// or [`ModelEncoder::finish_packed_block`] returned.
    pub fn clear_block(&mut self) {
        self.streams.clear();
    }

    /// Records of the current block not yet handed over: for tests.
    #[cfg(test)]
    fn pending(&self) -> usize {
        match &self.mode {
            Mode::Inline(_) => 0,
            Mode::Split { batch, .. } => batch.len(),
        }
    }
}

impl<K: KindTable + Send + Sync + Copy + 'static> Drop for ModelEncoder<K> {
    fn drop(&mut self) {
        if let Mode::Split { jobs, worker, .. } = &mut self.mode {
            // Closing the channel stops the worker.
            jobs.take();
            if let Some(w) = worker.take() {
                let _ = w.join();
            }
        }
    }
}

/// Sends `batch` to the worker and starts the next one in a spare vector.
fn hand_over(
    batch: &mut Vec<ModelRecord>,
    jobs: &Option<SyncSender<Job>>,
    replies: &Receiver<Reply>,
    spares: &mut Vec<Vec<ModelRecord>>,
) -> Result<(), String> {
    let next = take_spare(replies, spares);
    let full = std::mem::replace(batch, next);
    send(jobs, Job::Records(full))
}

/// A spare batch vector: one the worker sent back, or a new one.
fn take_spare(replies: &Receiver<Reply>, spares: &mut Vec<Vec<ModelRecord>>) -> Vec<ModelRecord> {
    while let Ok(reply) = replies.try_recv() {
        match reply {
            Reply::Spare(v) => spares.push(v),
            // Only sent after an `EndBlock`, which `finish_block` waits for.
            Reply::Block(_) => {}
        }
    }
    let mut v = spares.pop().unwrap_or_else(|| Vec::with_capacity(BATCH));
    v.clear();
    v
}

fn send(jobs: &Option<SyncSender<Job>>, job: Job) -> Result<(), String> {
    jobs.as_ref()
        .ok_or_else(stopped)?
        .send(job)
        .map_err(|_| stopped())
}

fn stopped() -> String {
    "the model's address thread stopped".to_string()
}

/// The worker: the address half over the batches it is sent, block after block.
fn work<K: KindTable>(
    kinds: K,
    mut addrs: AddrHalf,
    jobs: &Receiver<Job>,
    replies: &mpsc::Sender<Reply>,
) {
    let mut streams = Box::<Streams>::default();
    for job in jobs {
        match job {
            Job::Records(batch) => {
                for (i, r) in batch.iter().enumerate() {
                    if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
                        addrs.prefetch(ahead.addr);
                        if ahead.old != 0 {
                            addrs.prefetch(ahead.old);
                        }
                    }
                    addrs.encode(&kinds, r, &mut streams);
                }
                if replies.send(Reply::Spare(batch)).is_err() {
                    return;
                }
            }
            Job::EndBlock(next) => {
                let done = std::mem::replace(&mut streams, next);
                addrs.clear_for_block();
                if replies.send(Reply::Block(done)).is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::mtrace::kinds::{self, MtraceKinds};

    /// Allocations and frees over a narrow address range, some at live addresses.
    fn records(n: usize) -> Vec<ModelRecord> {
        let mut x = 5u64;
        let mut live: Vec<u64> = Vec::new();
        let mut out = Vec::new();
        for i in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let site = (i as u32).min(((x >> 30) % 5) as u32);
            if x.is_multiple_of(3) && !live.is_empty() {
                let k = (x >> 20) as usize % live.len();
                out.push(ModelRecord {
                    kind: kinds::FREE,
                    site,
                    addr: live.swap_remove(k),
                    ..ModelRecord::default()
                });
            } else {
                let addr = 0x4000 + ((x >> 12) % 2048) * 16;
                live.push(addr);
                out.push(ModelRecord {
                    kind: kinds::MALLOC,
                    site,
                    size: (x >> 50) % 200,
                    addr,
                    ..ModelRecord::default()
                });
            }
        }
        out
    }

    #[test]
    fn split_and_inline_write_the_streams_of_the_state() {
        let recs = records(3 * BATCH + 17);
        // Blocks of uneven length, ending mid-batch and on a batch boundary.
        let cuts = [0, 1000, BATCH + 1000, 3 * BATCH, recs.len()];
        let mut expected = Vec::new();
        let mut state = State::for_block();
        for w in cuts.windows(2) {
            let mut s = Streams::default();
            for r in &recs[w[0]..w[1]] {
                state.encode(&MtraceKinds, r, &mut s);
            }
            state.restart_for_block();
            expected.push(s.bytes);
        }
        for threads in [1, 2] {
            let mut enc = ModelEncoder::new(MtraceKinds, threads);
            for (w, want) in cuts.windows(2).zip(&expected) {
                for r in &recs[w[0]..w[1]] {
                    enc.encode(r);
                }
                let got = enc.finish_block().unwrap();
                assert_eq!(&got.bytes, want, "threads {threads}, block {w:?}");
                enc.clear_block();
                assert_eq!(enc.pending(), 0);
            }
        }
    }
}
