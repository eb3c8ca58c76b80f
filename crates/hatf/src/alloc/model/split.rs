//! The model encoder with its address half on a worker thread.
//!
//! An encoder's address half (the live blocks and the address predictor: a table lookup that
//! misses the cache for nearly every record) needs only the records themselves, not anything
//! the site half computes (see `halves.rs`). So the caller's thread runs the site half and
//! hands the records, in batches, to a worker that runs the address half into streams of its
//! own; at the end of a block the worker's streams are swapped into the block's. The streams
//! are the same bytes as [`State::encode`] writes, whatever the thread count: each stream is
//! written by one half only, in record order.
//!
//! A block's end does not wait for the worker: the caller goes on with the next block's
//! records while the worker finishes the block's last batches, and writes the block once its
//! address streams are back (packing it then, while the worker is busy with the next block).
//! Before, the two threads took turns at each block end: the caller waited for the worker's
//! queue to drain, then the worker for the caller to pack the block.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::halves::{AddrHalf, SiteHalf};
use super::shapes::Packer;
use super::{stream, KindTable, ModelRecord, State, Streams};
use crate::format::FormatError;

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
    /// The current block's streams (the site half's; all of them when inline).
    streams: Streams,
    /// The block [`ModelEncoder::end_block`] ended, until [`ModelEncoder::clear_ended`]: its
    /// streams, complete once the worker's address streams are in.
    ended: Option<Ended>,
    /// Streams of a block written out, kept for their memory.
    spare_streams: Option<Streams>,
    /// Packs the ended block's symbols into shapes ([`ModelEncoder::packed_sections`]).
    shapes: Packer,
}

/// A block whose records are all encoded.
struct Ended {
    streams: Streams,
    /// The address streams are in `streams` (always, when the model is not split).
    complete: bool,
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
        /// The address streams of the ended block, when they came while handing over a batch.
        arrived: Option<Box<Streams>>,
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
                    arrived: None,
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
            ended: None,
            spare_streams: None,
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
                arrived,
                ..
            } => {
                sites.encode(&self.kinds, r, &mut self.streams);
                batch.push(*r);
                if batch.len() >= BATCH && hand_over(batch, jobs, replies, spares, arrived).is_err()
                {
                    // Closed: `finish_block` fails on its own send.
                    jobs.take();
                }
            }
        }
    }

    /// Ends the block: the next record starts a new one, with a fresh model. When the model
    /// is split, the worker may still be encoding the block's last records: the caller goes
    /// on with the next block meanwhile, and writes this one once [`ModelEncoder::ended_block`]
    /// says it is complete. The block ended before must have been cleared
    /// ([`ModelEncoder::clear_ended`]).
    pub fn end_block(&mut self) -> Result<(), String> {
        if self.ended.is_some() {
            return Err("a block ended before the previous one was written".to_string());
        }
        let next = self.spare_streams.take().unwrap_or_default();
        let streams = std::mem::replace(&mut self.streams, next);
        let complete = match &mut self.mode {
            Mode::Inline(state) => {
                state.restart_for_block();
                true
            }
            Mode::Split {
                sites,
                batch,
                jobs,
                replies,
                spares,
                arrived,
                ..
            } => {
                if !batch.is_empty() {
                    hand_over(batch, jobs, replies, spares, arrived)?;
                }
                // The worker's streams for the next block: empty ones, from a block written
                // before when there was one, so their memory is reused.
                let mut next = Box::<Streams>::default();
                for n in ADDR_STREAMS {
                    let n = n as usize;
                    next.bytes[n] = std::mem::take(&mut self.streams.bytes[n]);
                }
                send(jobs, Job::EndBlock(next))?;
                sites.clear();
                false
            }
        };
        self.ended = Some(Ended { streams, complete });
        Ok(())
    }

    /// True when the block [`ModelEncoder::end_block`] ended is complete, waiting for the
    /// worker to finish it when `wait`; false when no block ended or it is not complete yet.
    pub fn ended_block(&mut self, wait: bool) -> Result<bool, String> {
        let Some(ended) = &mut self.ended else {
            return Ok(false);
        };
        if ended.complete {
            return Ok(true);
        }
        let Mode::Split {
            replies,
            spares,
            arrived,
            ..
        } = &mut self.mode
        else {
            return Ok(true);
        };
        while arrived.is_none() {
            let reply = if wait {
                replies.recv().map_err(|_| stopped())?
            } else {
                match replies.try_recv() {
                    Ok(reply) => reply,
                    Err(mpsc::TryRecvError::Empty) => return Ok(false),
                    Err(mpsc::TryRecvError::Disconnected) => return Err(stopped()),
                }
            };
            match reply {
                Reply::Spare(v) => spares.push(v),
                Reply::Block(s) => *arrived = Some(s),
            }
        }
        if let Some(mut addrs) = arrived.take() {
            for n in ADDR_STREAMS {
                let n = n as usize;
                ended.streams.bytes[n] = std::mem::take(&mut addrs.bytes[n]);
            }
        }
        ended.complete = true;
        Ok(true)
    }

    /// The complete ended block's streams ([`ModelEncoder::ended_block`] said so).
    pub fn ended_streams(&self) -> Result<&Streams, String> {
        match &self.ended {
            Some(Ended {
                streams,
                complete: true,
            }) => Ok(streams),
            _ => Err("no complete block to write".to_string()),
        }
    }

    /// Packs the complete ended block's symbols into shapes (layout `alloc-model-4`): returns
    /// its model sections ([`Packer::sections`]).
    pub fn packed_sections(&mut self) -> Result<Vec<(u8, &[u8])>, String> {
        let streams = match &self.ended {
            Some(Ended {
                streams,
                complete: true,
            }) => streams,
            _ => return Err("no complete block to write".to_string()),
        };
        self.shapes.pack(&self.kinds, streams)?;
        Ok(self.shapes.sections(streams))
    }

    /// Forgets the ended block once the caller wrote it; its memory serves a later block.
    pub fn clear_ended(&mut self) {
        if let Some(mut ended) = self.ended.take() {
            ended.streams.clear();
            self.spare_streams = Some(ended.streams);
        }
    }

    /// Ends the block and waits until it is complete: returns all its streams (for the caller
    /// to write, then [`ModelEncoder::clear_ended`]).
    pub fn finish_block(&mut self) -> Result<&Streams, String> {
        self.end_block()?;
        self.ended_block(true)?;
        self.ended_streams()
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
    arrived: &mut Option<Box<Streams>>,
) -> Result<(), String> {
    let next = take_spare(replies, spares, arrived);
    let full = std::mem::replace(batch, next);
    send(jobs, Job::Records(full))
}

/// A spare batch vector: one the worker sent back, or a new one. The address streams of an
/// ended block, should they come, are kept in `arrived`.
fn take_spare(
    replies: &Receiver<Reply>,
    spares: &mut Vec<Vec<ModelRecord>>,
    arrived: &mut Option<Box<Streams>>,
) -> Vec<ModelRecord> {
    while let Ok(reply) = replies.try_recv() {
        match reply {
            Reply::Spare(v) => spares.push(v),
            Reply::Block(s) => *arrived = Some(s),
        }
    }
    let mut v = spares.pop().unwrap_or_else(|| Vec::with_capacity(BATCH));
    v.clear();
    v
}

/// The error of a [`ModelEncoder`] that failed (its address thread stopped) while encoding
/// `file`.
pub fn model_error(file: &str, message: String) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: String::new(),
        message,
    }
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
                enc.clear_ended();
                assert_eq!(enc.pending(), 0);
            }
        }
    }

    #[test]
    fn a_block_ends_while_the_next_is_encoded() {
        let recs = records(5 * BATCH + 321);
        let cut = 2 * BATCH + 99;
        let mut expected = Vec::new();
        let mut state = State::for_block();
        for part in [&recs[..cut], &recs[cut..]] {
            let mut s = Streams::default();
            for r in part {
                state.encode(&MtraceKinds, r, &mut s);
            }
            state.restart_for_block();
            expected.push(s.bytes);
        }
        for threads in [1, 2] {
            let mut enc = ModelEncoder::new(MtraceKinds, threads);
            assert!(!enc.ended_block(false).unwrap(), "nothing ended yet");
            for r in &recs[..cut] {
                enc.encode(r);
            }
            enc.end_block().unwrap();
            // A second end before the first block is written is refused.
            assert!(enc.end_block().is_err());
            // The next block's records go on while the first may still be in the worker.
            for r in &recs[cut..] {
                enc.encode(r);
                let _ = enc.ended_block(false).unwrap();
            }
            assert!(enc.ended_block(true).unwrap());
            assert_eq!(
                enc.ended_streams().unwrap().bytes,
                expected[0],
                "threads {threads}"
            );
            enc.clear_ended();
            assert!(enc.ended_streams().is_err());
            enc.end_block().unwrap();
            assert!(enc.ended_block(true).unwrap());
            assert_eq!(
                enc.ended_streams().unwrap().bytes,
                expected[1],
                "threads {threads}"
            );
        }
    }
}
