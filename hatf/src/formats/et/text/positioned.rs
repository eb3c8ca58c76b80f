//! Decoding blocks on several threads, each block's text written straight to its place in the
//! output file.
//!
//! Blocks are independent, and every full block says how long its text is (its section 0,
//! docs/FORMAT.md §6.2), so the offset of every block's text is known as soon as the blocks
//! before it have been read (not decoded). Each thread then decodes whole blocks and writes
//! their text at those offsets through one reused buffer. Written in order instead
//! (`shared/threads/streamed.rs`), a block decoded ahead of the writer must be held until the
//! blocks before it are out, so many pieces of text are in flight, each faulted in afresh
//! (the kernel clearing new pages for every one). Here each thread reuses one buffer, which
//! halves the peak memory and spares that time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use metatf::container::Block;

use crate::format::FormatError;
use crate::shared::threads::worker_pool::{caught, spawn_workers};

/// A block to decode: where it starts in the binary file (for errors), the block, and the
/// byte range of the output its text fills.
pub(in crate::internal::formats::et) struct Job {
    pub at: u64,
    pub block: Block,
    pub offset: u64,
    /// `None` for the last block, which need not say.
    pub len: Option<u64>,
}

/// What can go wrong with a block besides its own decode's errors.
pub(in crate::internal::formats::et) enum Fault<'j> {
    /// The block starting at byte `at`, number `index`, did not say its text's length, and
    /// another block follows it.
    Unsaid { at: u64, index: u64 },
    /// The decode of this job panicked.
    Panicked(&'j Job),
}

/// Decodes `first` and the blocks `next` returns after it on the calling thread and `workers`
/// more, each with a state made by `state`; `decode` turns a job into text at its offset.
/// `text_len` gives a block's text length (`None` when it does not say, which only the last
/// block may do), or the error for a damaged block; `fault` makes the error for the other
/// [`Fault`]s. Returns the number of records; on an error, the first in block order (a read
/// error counts as coming after every block read before it), once every block read before it
/// was decoded or failed itself.
pub(in crate::internal::formats::et) fn decode_at_offsets<S>(
    workers: usize,
    first: Option<(u64, Block)>,
    mut next: impl FnMut() -> Result<Option<(u64, Block)>, FormatError>,
    text_len: impl Fn(u64, &Block) -> Result<Option<u64>, FormatError>,
    fault: impl Fn(Fault<'_>) -> FormatError + Sync,
    state: impl Fn() -> S + Sync,
    decode: impl Fn(&mut S, &Job) -> Result<(), FormatError> + Sync,
) -> Result<u64, FormatError> {
    let failed = AtomicBool::new(false);
    // Errors with the number of the block they belong to.
    let errors = Mutex::new(Vec::<(u64, FormatError)>::new());
    let note = |index: u64, e: FormatError| {
        failed.store(true, Ordering::Relaxed);
        if let Ok(mut errors) = errors.lock() {
            errors.push((index, e));
        }
    };
    let run = |s: &mut S, job: &Job| {
        // A panic is this block's failure, as any other, not the whole program's.
        let result = caught(|| decode(s, job), || fault(Fault::Panicked(job)));
        if let Err(e) = result {
            note(job.block.index, e);
        }
    };
    let mut records = 0u64;
    // One job waits for the workers at most; when that place is taken, the calling thread
    // decodes the block itself. (With no place at all, the first block went to the calling
    // thread whenever the worker had not yet started to wait, and the worker then waited
    // until that block was decoded and the next read.)
    let (jobs, job_rx) = mpsc::sync_channel::<Job>(1);
    let job_rx = Mutex::new(job_rx);
    // Unlike the other pipelines (`shared/threads/`), the results are not handed back: each
    // block's text is already in its place in the output, and only errors come back, through
    // `errors`, to be sorted into block order at the end.
    let worker = |s: &mut S, _: &(), job: Job| {
        run(s, &job);
        true
    };
    std::thread::scope(|scope| {
        spawn_workers(scope, workers, &job_rx, &state, || (), &worker);
        let mut own = None;
        let mut offset = 0u64;
        // A block that did not say its length, kept to name it should another follow.
        let mut unsaid = None;
        let mut item = first;
        // The next block as a job, its place known; `None` at the end, or once a block failed.
        let mut read = || -> Option<Job> {
            let (at, block) = item.take()?;
            if failed.load(Ordering::Relaxed) {
                return None;
            }
            let index = block.index;
            if let Some((at, before)) = unsaid.take() {
                // The block before this one did not say its length, so it had to be the last.
                note(before, fault(Fault::Unsaid { at, index: before }));
                return None;
            }
            let len = match text_len(at, &block) {
                Ok(len) => len,
                Err(e) => {
                    note(index, e);
                    return None;
                }
            };
            records = records.saturating_add(block.record_count);
            let job = Job {
                at,
                block,
                offset,
                len,
            };
            match len {
                Some(len) => offset = offset.saturating_add(len),
                None => unsaid = Some((job.at, index)),
            }
            item = match next() {
                Ok(item) => item,
                Err(e) => {
                    note(index.saturating_add(1), e);
                    None
                }
            };
            Some(job)
        };
        // Before each block of its own, the calling thread puts the next block in the place
        // for the workers if it is free, so that a worker finishing its block finds one
        // waiting. (Decoding whatever did not fit there instead can leave the last blocks to
        // one worker, which then works alone at the end.)
        let mut waiting = None;
        loop {
            if let Some(job) = waiting.take().or_else(&mut read) {
                match jobs.try_send(job) {
                    Ok(()) => {}
                    Err(mpsc::TrySendError::Full(job) | mpsc::TrySendError::Disconnected(job)) => {
                        waiting = Some(job);
                    }
                }
            }
            let Some(job) = waiting.take().or_else(&mut read) else {
                break;
            };
            run(own.get_or_insert_with(&state), &job);
        }
        // A job still waiting is done here rather than after a busy worker's. A worker that
        // holds the lock is waiting for a job, so none is queued then.
        while let Ok(rx) = job_rx.try_lock() {
            let Ok(job) = rx.try_recv() else { break };
            drop(rx);
            run(own.get_or_insert_with(&state), &job);
        }
        // Closing the channel lets the workers return once their blocks are done.
        drop(jobs);
    });
    let errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    match errors.into_iter().min_by_key(|(index, _)| *index) {
        Some((_, e)) => Err(e),
        None => Ok(records),
    }
}
