//! The model encoder with its address half on a worker thread.
//!
//! An encoder's address half (the live blocks and the address predictor: a table lookup that
//! misses the cache for nearly every record) needs only the records themselves, not anything
//! the site half computes (see `prediction/site_and_address.rs`). So the caller's thread runs the site half and
//! hands the records, in batches, to a worker that runs the address half into streams of its
//! own; at the end of a block the worker's streams are swapped into the block's. The streams
//! are the same bytes as [`State::encode`] writes, whatever the thread count: each stream is
//! written by one half only, in record order.
//!
//! A block's end does not wait for the worker: the caller goes on with the next block's
//! records while the worker finishes the block's last batches, and writes the block once its
//! address streams are back (packing it then, while the worker is busy with the next block),
//! so neither thread waits for the other at a block end.
//!
//! The caller packs a block into shapes as it goes, not all at its end: the worker hands back
//! the address and free symbols of each batch with the batch, and packing is one pass in
//! record order ([`Packer::pack_part`]), so only the last batch is left to pack once the
//! block's address streams are back, rather than the whole block while the caller has
//! nothing else to do.
//!
//! The sections of an ended block that only the site half writes are final at once
//! ([`ModelEncoder::site_sections`]): the text encoders have them compressed while the worker
//! finishes the block. The first batches are small, so the worker starts soon after the first
//! records; the worker clears a finished block's state only when the next block's records
//! come, so the block's streams go back without waiting for it, and the last block's state is
//! never cleared.

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::format::FormatError;
use crate::shared::allocation_model::packing::record_shapes::Packer;
use crate::shared::allocation_model::prediction::site_and_address::{AddrHalf, SiteHalf};
use crate::shared::allocation_model::{stream, KindTable, ModelRecord, State, Streams};

/// Records per batch handed to the worker.
const BATCH: usize = 1 << 12;
/// Records of the first batch: the worker has nothing to do until it comes, so it is
/// handed over early (a 4,096-record batch is about a third of a millisecond of the caller's
/// work); each next batch is twice as large, up to [`BATCH`]. Batch sizes never reach the
/// output.
const FIRST_BATCH: usize = 1 << 8;
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

/// The sections of a block that only the site half writes ([`ModelEncoder::site_sections`]).
const SITE_STREAMS: [u8; 3] = [stream::SITE_MISS, stream::SIZE_MISS, stream::EXTRA];

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
    /// A batch, encoded, for reuse, with its records' symbols to pack.
    Spare(Vec<ModelRecord>, Part),
    /// The address streams of the block that ended (those of [`Part`]s only since the last
    /// part).
    Block(Box<Streams>),
}

/// The address and free symbols of a batch's records (stream [`stream::ADDR`] and
/// [`stream::FREE`] since the previous part).
struct Part {
    records: usize,
    addr: Vec<u8>,
    free: Vec<u8>,
}

/// What the worker sent back that the caller has not used yet.
#[derive(Default)]
struct Returned {
    spares: Vec<Vec<ModelRecord>>,
    /// The address streams of the ended block, when they came while handing over a batch.
    arrived: Option<Box<Streams>>,
    /// Parts of the block after the ended one, come before the ended one was written.
    queued: VecDeque<Part>,
    /// Why packing a part failed (reported when the block is written).
    failed: Option<String>,
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
    /// Packs the ended block's symbols into shapes ([`ModelEncoder::packed_sections`]); when
    /// the model is split, packs each block's batches as they come back from the worker.
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
        /// Records at which `batch` is handed over (growing from [`FIRST_BATCH`] to
        /// [`BATCH`]).
        limit: usize,
        /// The processor has the write prefetch of [`prefetch_for_write`].
        write_hint: bool,
        /// `None` once the worker has stopped (closed when dropped).
        jobs: Option<SyncSender<Job>>,
        replies: Receiver<Reply>,
        returned: Returned,
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
                    limit: FIRST_BATCH,
                    write_hint: can_prefetch_for_write(),
                    jobs: Some(jobs),
                    replies,
                    returned: Returned::default(),
                    worker: Some(worker),
                },
                // No thread to be had: run inline, with the same output.
                None => Mode::Inline(Box::new(State::for_block())),
            }
        } else {
            Mode::Inline(Box::new(State::for_block()))
        };
        let mut shapes = Packer::default();
        shapes.start(&kinds);
        ModelEncoder {
            kinds,
            mode,
            streams: Streams::default(),
            ended: None,
            spare_streams: None,
            shapes,
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
    /// are dropped and [`ModelEncoder::end_block`] says so.)
    ///
    /// Always inlined: a call per record (the caller's loop keeps its state in registers
    /// across it) cost about 25 instructions a record.
    #[inline(always)]
    pub fn encode(&mut self, r: &ModelRecord) {
        let ModelEncoder {
            kinds,
            mode,
            streams,
            ..
        } = self;
        let full = match mode {
            Mode::Inline(state) => {
                state.encode(kinds, r, streams);
                false
            }
            Mode::Split {
                sites,
                batch,
                limit,
                write_hint,
                ..
            } => {
                sites.encode(kinds, r, streams);
                prefetch_for_write(batch, *write_hint);
                batch.push(*r);
                batch.len() >= *limit
            }
        };
        if full {
            self.hand_over_full();
        }
    }

    /// Hands the full batch over to the worker (out of line: once per batch, and the record
    /// loop stays short).
    #[inline(never)]
    fn hand_over_full(&mut self) {
        let ModelEncoder {
            mode,
            streams,
            ended,
            shapes,
            ..
        } = self;
        if let Mode::Split {
            batch,
            limit,
            jobs,
            replies,
            returned,
            ..
        } = mode
        {
            *limit = (2 * *limit).min(BATCH);
            let mut packing = Packing {
                shapes,
                current: streams,
                ended: ended.as_ref(),
            };
            if hand_over(batch, jobs, replies, returned, &mut packing).is_err() {
                // Closed: `end_block` fails on its own send.
                jobs.take();
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
        let mut streams = std::mem::replace(&mut self.streams, next);
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
                returned,
                ..
            } => {
                if !batch.is_empty() {
                    // The block's records: packed as the ended block's from now on.
                    let ended = Ended {
                        streams,
                        complete: false,
                    };
                    let mut packing = Packing {
                        shapes: &mut self.shapes,
                        current: &self.streams,
                        ended: Some(&ended),
                    };
                    let handed = hand_over(batch, jobs, replies, returned, &mut packing);
                    streams = ended.streams;
                    handed?;
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
            replies, returned, ..
        } = &mut self.mode
        else {
            return Ok(true);
        };
        while returned.arrived.is_none() {
            let reply = if wait {
                replies.recv().map_err(|_| stopped())?
            } else {
                match replies.try_recv() {
                    Ok(reply) => reply,
                    Err(mpsc::TryRecvError::Empty) => return Ok(false),
                    Err(mpsc::TryRecvError::Disconnected) => return Err(stopped()),
                }
            };
            let mut packing = Packing {
                shapes: &mut self.shapes,
                current: &self.streams,
                ended: Some(ended),
            };
            returned.take(reply, &mut packing);
        }
        if let Some(mut addrs) = returned.arrived.take() {
            for n in ADDR_STREAMS {
                let n = n as usize;
                ended.streams.bytes[n] = std::mem::take(&mut addrs.bytes[n]);
            }
        }
        ended.complete = true;
        Ok(true)
    }

    /// The model sections of the block [`ModelEncoder::end_block`] ended that the address half
    /// writes nothing to (the site and size misses, the extra values), final as soon as the
    /// block ended: the caller may compress them while the worker finishes the block's
    /// address streams (see [`BlockWriter::block_ahead`](crate::shared::container::blocks::BlockWriter::block_ahead)).
    /// They are among [`ModelEncoder::packed_sections`], byte for byte. Empty when no block
    /// ended.
    pub fn site_sections(&self) -> Vec<(u8, &[u8])> {
        let Some(ended) = &self.ended else {
            return Vec::new();
        };
        SITE_STREAMS
            .iter()
            .map(|&n| (n, ended.streams.bytes[n as usize].as_slice()))
            .collect()
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
        match &self.mode {
            Mode::Inline(_) => self.shapes.pack(&self.kinds, streams)?,
            Mode::Split { returned, .. } => {
                if let Some(e) = &returned.failed {
                    return Err(e.clone());
                }
                // The records after the last part: the address streams the worker sent back
                // hold their symbols.
                let b = &streams.bytes;
                let rest = b[stream::KIND as usize]
                    .len()
                    .saturating_sub(self.shapes.records());
                self.shapes.pack_part(
                    streams,
                    rest,
                    &b[stream::ADDR as usize],
                    &b[stream::FREE as usize],
                )?;
                self.shapes.finish(streams)?;
            }
        }
        Ok(self.shapes.sections(streams))
    }

    /// Forgets the ended block once the caller wrote it; its memory serves a later block.
    /// When the model is split, the packer goes on with the block being encoded.
    pub fn clear_ended(&mut self) {
        let Some(mut ended) = self.ended.take() else {
            return;
        };
        ended.streams.clear();
        self.spare_streams = Some(ended.streams);
        if let Mode::Split { returned, .. } = &mut self.mode {
            self.shapes.start(&self.kinds);
            while let Some(part) = returned.queued.pop_front() {
                let mut packing = Packing {
                    shapes: &mut self.shapes,
                    current: &self.streams,
                    ended: None,
                };
                returned.pack(part, &mut packing);
            }
        }
    }

    /// Records of the current block not yet handed over: for tests.
    #[cfg(test)]
    fn pending(&self) -> usize {
        match &self.mode {
            Mode::Inline(_) => 0,
            Mode::Split { batch, .. } => batch.len(),
        }
    }

    /// Waits for the worker's next reply and takes it in as a handover would: for tests, to
    /// order the replies. Returns the parts queued for the block after the ended one.
    #[cfg(test)]
    fn take_next_reply(&mut self) -> usize {
        let Mode::Split {
            replies, returned, ..
        } = &mut self.mode
        else {
            return 0;
        };
        let reply = replies.recv().expect("the worker replies");
        let mut packing = Packing {
            shapes: &mut self.shapes,
            current: &self.streams,
            ended: self.ended.as_ref(),
        };
        returned.take(reply, &mut packing);
        returned.queued.len()
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

/// Where the caller packs the parts the worker sends back: into the ended block while its
/// address streams are not back, else into the block being encoded.
struct Packing<'a> {
    shapes: &'a mut Packer,
    /// The streams of the block being encoded.
    current: &'a Streams,
    ended: Option<&'a Ended>,
}

impl Returned {
    /// Keeps or uses what the worker sent back.
    fn take(&mut self, reply: Reply, packing: &mut Packing<'_>) {
        match reply {
            Reply::Spare(v, part) => {
                self.spares.push(v);
                let ended_is_back =
                    self.arrived.is_some() || packing.ended.is_some_and(|e| e.complete);
                if ended_is_back || !self.queued.is_empty() {
                    // The next block's: packed once the ended one is written.
                    self.queued.push_back(part);
                } else {
                    self.pack(part, packing);
                }
            }
            Reply::Block(s) => self.arrived = Some(s),
        }
    }

    /// Packs `part`, the next records of the block being packed (after a failure, nothing).
    fn pack(&mut self, part: Part, packing: &mut Packing<'_>) {
        if self.failed.is_some() {
            return;
        }
        let streams = packing.ended.map_or(packing.current, |e| &e.streams);
        if let Err(e) = packing
            .shapes
            .pack_part(streams, part.records, &part.addr, &part.free)
        {
            self.failed = Some(e);
        }
    }
}

/// Records ahead of the next one whose place in the batch [`prefetch_for_write`] asks for.
const WRITE_AHEAD: usize = 12;

/// Asks the processor to fetch, for writing, the place of the record [`WRITE_AHEAD`] after
/// the next one in `batch` (a hint only).
///
/// Why: batch vectors go back and forth between the threads, so the place of each record was
/// last read by the worker, on the other core, and a store there waits for the line to be
/// taken back from that core. Without the hint, the caller's thread of a memory_replay encode
/// often spends several milliseconds more CPU time stalled on the store of the record into
/// the batch, more so on a loaded machine; with it, it does not.
#[inline(always)]
fn prefetch_for_write(batch: &Vec<ModelRecord>, can: bool) {
    let ahead = batch.len() + WRITE_AHEAD;
    if !can || ahead >= batch.capacity() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `ahead` is within the vector's allocation (below its capacity), so the pointer
    // stays inside it; `prefetchw` (which the processor has: `can`) never faults and reads or
    // writes nothing the program sees.
    unsafe {
        let at = batch.as_ptr().add(ahead);
        std::arch::asm!(
            "prefetchw [{at}]",
            at = in(reg) at,
            options(nostack, preserves_flags, readonly)
        );
    }
}

/// True when the processor has the write prefetch of [`prefetch_for_write`] (the portable
/// build cannot assume it, so it is asked for in assembly once it is known to be there).
fn can_prefetch_for_write() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // CPUID leaf 0x8000_0001, ECX bit 8: `prefetchw` (std's feature detection does not
        // name it).
        #[allow(unused_unsafe)]
        // SAFETY: `cpuid` exists on every x86-64 processor and only reads identification.
        let (top, ecx) = unsafe { (__cpuid(0x8000_0000).eax, __cpuid(0x8000_0001).ecx) };
        top >= 0x8000_0001 && ecx & (1 << 8) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Sends `batch` to the worker and starts the next one in a spare vector.
fn hand_over(
    batch: &mut Vec<ModelRecord>,
    jobs: &Option<SyncSender<Job>>,
    replies: &Receiver<Reply>,
    returned: &mut Returned,
    packing: &mut Packing<'_>,
) -> Result<(), String> {
    let next = take_spare(replies, returned, packing);
    let full = std::mem::replace(batch, next);
    send(jobs, Job::Records(full))
}

/// A spare batch vector: one the worker sent back, or a new one. What else the worker sent
/// back is packed or kept.
fn take_spare(
    replies: &Receiver<Reply>,
    returned: &mut Returned,
    packing: &mut Packing<'_>,
) -> Vec<ModelRecord> {
    while let Ok(reply) = replies.try_recv() {
        returned.take(reply, packing);
    }
    let mut v = returned
        .spares
        .pop()
        .unwrap_or_else(|| Vec::with_capacity(BATCH));
    v.clear();
    v
}

/// Takes the bytes out of `v`, leaving an empty vector of the same capacity.
fn take_bytes(v: &mut Vec<u8>) -> Vec<u8> {
    let fresh = Vec::with_capacity(v.capacity());
    std::mem::replace(v, fresh)
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
    // The half still holds the state of a block that ended: it is cleared when the next
    // block's first records come, not at the block's end, so the ended block's streams go
    // back to the caller without waiting for it (clearing the live set's address map writes
    // megabytes), and after the last block it is never cleared at all.
    let mut stale = false;
    for job in jobs {
        match job {
            Job::Records(batch) => {
                if stale {
                    addrs.clear_for_block();
                    stale = false;
                }
                for (i, r) in batch.iter().enumerate() {
                    if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
                        addrs.prefetch(ahead.addr);
                        if ahead.old != 0 {
                            addrs.prefetch(ahead.old);
                        }
                    }
                    addrs.encode(&kinds, r, &mut streams);
                }
                let part = Part {
                    records: batch.len(),
                    addr: take_bytes(&mut streams.bytes[stream::ADDR as usize]),
                    free: take_bytes(&mut streams.bytes[stream::FREE as usize]),
                };
                if replies.send(Reply::Spare(batch, part)).is_err() {
                    return;
                }
            }
            Job::EndBlock(next) => {
                let done = std::mem::replace(&mut streams, next);
                if replies.send(Reply::Block(done)).is_err() {
                    return;
                }
                stale = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::mtrace::model::{self as kinds, MtraceKinds};

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

    /// A block's sections, owned.
    type Sections = Vec<(u8, Vec<u8>)>;

    /// The packed sections of blocks of the records `parts`, each written by a fresh model.
    fn expected(parts: &[&[ModelRecord]]) -> Vec<Sections> {
        let mut state = State::for_block();
        let mut packer = Packer::default();
        let mut out = Vec::new();
        for part in parts {
            let mut s = Streams::default();
            for r in *part {
                state.encode(&MtraceKinds, r, &mut s);
            }
            state.restart_for_block();
            packer.pack(&MtraceKinds, &s).unwrap();
            out.push(owned(packer.sections(&s)));
        }
        out
    }

    fn owned(sections: Vec<(u8, &[u8])>) -> Sections {
        sections.into_iter().map(|(n, b)| (n, b.to_vec())).collect()
    }

    /// The sections of the ended block, complete.
    fn ended_sections(enc: &mut ModelEncoder<MtraceKinds>) -> Sections {
        assert!(enc.ended_block(true).unwrap());
        owned(enc.packed_sections().unwrap())
    }

    #[test]
    fn split_and_inline_write_the_sections_of_the_state() {
        let recs = records(3 * BATCH + 17);
        // Blocks of uneven length, ending mid-batch and on a batch boundary.
        let cuts = [0, 1000, BATCH + 1000, 3 * BATCH, recs.len()];
        let parts: Vec<&[ModelRecord]> = cuts.windows(2).map(|w| &recs[w[0]..w[1]]).collect();
        let expected = expected(&parts);
        for threads in [1, 2] {
            let mut enc = ModelEncoder::new(MtraceKinds, threads);
            for (part, want) in parts.iter().zip(&expected) {
                for r in *part {
                    enc.encode(r);
                }
                enc.end_block().unwrap();
                assert_eq!(&ended_sections(&mut enc), want, "threads {threads}");
                enc.clear_ended();
                assert_eq!(enc.pending(), 0);
            }
        }
    }

    #[test]
    fn the_site_sections_are_final_when_the_block_ends() {
        // Taken right after the block ends, while the worker may still be encoding it, they
        // are the bytes the block is then written with.
        let recs = records(3 * BATCH + 40);
        for threads in [1, 2] {
            let mut enc = ModelEncoder::new(MtraceKinds, threads);
            assert!(enc.site_sections().is_empty(), "no block ended yet");
            for r in &recs {
                enc.encode(r);
            }
            enc.end_block().unwrap();
            let early = owned(enc.site_sections());
            assert_eq!(early.len(), SITE_STREAMS.len());
            assert!(early.iter().any(|(_, b)| !b.is_empty()));
            let all = ended_sections(&mut enc);
            for (n, bytes) in &early {
                assert!(
                    all.contains(&(*n, bytes.clone())),
                    "threads {threads}, section {n}"
                );
            }
        }
    }

    #[test]
    fn a_block_ends_while_the_next_is_encoded() {
        let recs = records(5 * BATCH + 321);
        let cut = 2 * BATCH + 99;
        let expected = expected(&[&recs[..cut], &recs[cut..]]);
        // Whether the caller asks after each record if the ended block is complete (the next
        // block's batches come back after it), or only at the end (they may come with it).
        for (threads, ask) in [(1, true), (2, true), (2, false)] {
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
                if ask {
                    let _ = enc.ended_block(false).unwrap();
                }
            }
            assert_eq!(ended_sections(&mut enc), expected[0], "threads {threads}");
            enc.clear_ended();
            assert!(enc.packed_sections().is_err());
            enc.end_block().unwrap();
            assert_eq!(ended_sections(&mut enc), expected[1], "threads {threads}");
        }
    }

    #[test]
    fn batches_of_the_next_block_that_come_back_before_the_ended_one_is_written() {
        let recs = records(4 * BATCH + 5);
        let cut = BATCH + 7;
        let expected = expected(&[&recs[..cut], &recs[cut..]]);
        // The next block's first batch comes back after the ended block's address streams
        // were taken in (`ended_block`), or while they are only kept (`arrived`).
        for taken_in in [true, false] {
            let mut enc = ModelEncoder::new(MtraceKinds, 2);
            for r in &recs[..cut] {
                enc.encode(r);
            }
            enc.end_block().unwrap();
            if taken_in {
                assert!(enc.ended_block(true).unwrap());
            }
            // One batch of the next block handed over.
            for r in &recs[cut..cut + BATCH] {
                enc.encode(r);
            }
            while enc.take_next_reply() == 0 {}
            for r in &recs[cut + BATCH..] {
                enc.encode(r);
            }
            assert_eq!(ended_sections(&mut enc), expected[0], "{taken_in}");
            enc.clear_ended();
            enc.end_block().unwrap();
            assert_eq!(ended_sections(&mut enc), expected[1], "{taken_in}");
        }
    }
}
