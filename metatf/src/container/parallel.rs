//! Compressing blocks on worker threads while the caller prepares the next ones.
//!
//! Compression (zstd at high levels especially) is most of the cost of writing a trace, and
//! each section of each block is compressed on its own, so sections can be compressed in any
//! order and on any thread. The writer hands each block's sections to this pool and writes the
//! blocks back in submission order, so the file is the same byte for byte whatever the thread
//! count.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::block::{SectionData, SectionDescriptor};
use super::codec::{Codec, CONTEXT_MIX_MAX_SECTION};
use super::contexts::Compressor;
use super::framing::crc;

/// One section to compress, owning its bytes so it can cross to a worker.
pub(crate) struct OwnedSection {
    pub(crate) number: u8,
    pub(crate) element_width: u8,
    pub(crate) codec: Codec,
    pub(crate) level: i32,
    pub(crate) bytes: Vec<u8>,
}

/// A compressed section: its descriptor and the bytes to store.
pub(crate) struct Compressed {
    pub(crate) descriptor: SectionDescriptor,
    pub(crate) stored: Vec<u8>,
}

/// Compresses one section with `compressor` and describes the result.
fn compress_section(
    s: &SectionData<'_>,
    compressor: &mut Compressor,
) -> std::io::Result<Compressed> {
    let mut codec = s.codec;
    // The context-mixing coders are slow; long sections go to zstd (at the level given).
    if matches!(codec, Codec::ContextMix | Codec::LightContextMix)
        && s.bytes.len() as u64 > CONTEXT_MIX_MAX_SECTION
    {
        codec = Codec::Zstd;
    }
    let mut stored = compressor.compress(codec, s.level, s.bytes)?;
    // A short or incompressible section grows under a codec's framing; it is then stored as is,
    // which every reader handles, so the file never pays for a codec that did not help.
    if codec != Codec::None && stored.len() >= s.bytes.len() {
        codec = Codec::None;
        stored = s.bytes.to_vec();
    }
    Ok(Compressed {
        descriptor: SectionDescriptor {
            number: s.number,
            element_width: s.element_width,
            codec,
            uncompressed_len: s.bytes.len() as u64,
            stored_len: stored.len() as u64,
            stored_crc: crc(&stored),
            uncompressed_crc: crc(s.bytes),
        },
        stored,
    })
}

/// Compresses the sections of a block on the caller's thread, longest first (as the workers
/// take them, see [`Pool::submit`]), and returns them in their order.
pub(crate) fn compress_longest_first(
    sections: &[SectionData<'_>],
    compressor: &mut Compressor,
) -> std::io::Result<Vec<Compressed>> {
    let mut order: Vec<usize> = (0..sections.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sections[i].bytes.len()));
    let mut done: Vec<Option<Compressed>> = (0..sections.len()).map(|_| None).collect();
    for i in order {
        done[i] = Some(compress_section(&sections[i], compressor)?);
    }
    Ok(done.into_iter().flatten().collect())
}

/// Compresses one section handed to a worker.
fn compress_owned(s: &OwnedSection, compressor: &mut Compressor) -> std::io::Result<Compressed> {
    compress_section(
        &SectionData {
            number: s.number,
            element_width: s.element_width,
            codec: s.codec,
            level: s.level,
            bytes: &s.bytes,
        },
        compressor,
    )
}

/// One section to compress: block sequence number, position in the block, the section.
type Job = (u64, usize, OwnedSection);
/// A compressed section: block sequence number, position in the block, the result.
type Done = (u64, usize, std::io::Result<Compressed>);

/// The sections of one block, as they come back from the workers.
struct Pending {
    /// Per position in the block, once compressed.
    sections: Vec<Option<Compressed>>,
    /// Sections not back yet.
    missing: usize,
    /// The first error among them.
    error: Option<std::io::Error>,
}

/// A fixed set of worker threads compressing sections, and the results not yet collected.
///
/// Jobs are single sections, not whole blocks, so the sections of one block are spread over
/// the workers: a trace of one or two large blocks is compressed in parallel too. Each worker
/// keeps its own [`Compressor`] (zstd context) from one section to the next while sections are
/// queued, and frees it when the queue runs dry (see [`Compressor::idle`]).
pub(crate) struct Pool {
    jobs: Option<Sender<Job>>,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    /// Blocks submitted and not yet taken.
    pending: BTreeMap<u64, Pending>,
}

impl Pool {
    /// Starts `threads` workers (at least one).
    pub(crate) fn new(threads: usize) -> Pool {
        let threads = threads.max(1);
        // The queue needs no bound of its own: the writer never lets more than a few blocks
        // wait (bounded memory), and queuing all of a block's sections at once lets the caller
        // go on with the next block while they are compressed.
        let (jobs, queue) = mpsc::channel::<Job>();
        let (done, results) = mpsc::channel::<Done>();
        let queue = Arc::new(Mutex::new(queue));
        let workers = (0..threads)
            .map(|_| {
                let queue = Arc::clone(&queue);
                let done = done.clone();
                std::thread::spawn(move || {
                    let mut compressor = Compressor::new();
                    loop {
                        // Hold the lock only to take a job, not while compressing it.
                        let job = match queue.lock() {
                            Ok(q) => match q.try_recv() {
                                Err(TryRecvError::Empty) => {
                                    // Nothing queued: the caller is preparing the next block.
                                    // Free the context meanwhile, so memory use between blocks
                                    // stays what it was when each section had its own.
                                    compressor.idle();
                                    q.recv().ok()
                                }
                                job => job.ok(),
                            },
                            Err(_) => return,
                        };
                        let Some((seq, at, section)) = job else {
                            return;
                        };
                        // A panic in a codec must not leave the writer waiting for this block
                        // forever: it becomes an error for the block (and the compressor,
                        // whose state is then unknown, is replaced).
                        let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            compress_owned(&section, &mut compressor)
                        }))
                        .unwrap_or_else(|_| {
                            compressor = Compressor::new();
                            Err(std::io::Error::other("a compression thread panicked"))
                        });
                        // The section's copy is freed here, as soon as it is compressed.
                        drop(section);
                        if done.send((seq, at, result)).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        Pool {
            jobs: Some(jobs),
            results,
            workers,
            pending: BTreeMap::new(),
        }
    }

    /// Queues the sections of block `seq` for compression.
    pub(crate) fn submit(&mut self, seq: u64, sections: Vec<OwnedSection>) -> std::io::Result<()> {
        self.pending.insert(
            seq,
            Pending {
                sections: (0..sections.len()).map(|_| None).collect(),
                missing: sections.len(),
                error: None,
            },
        );
        // Longest first: the workers then finish the block together, and each compresses its
        // long sections one after another, with its kept context (see `shared_context`),
        // before the short ones, which need fresh ones. Results go back to their positions,
        // so the order of the jobs does not change the file.
        let mut jobs: Vec<(usize, OwnedSection)> = sections.into_iter().enumerate().collect();
        jobs.sort_by_key(|(_, s)| std::cmp::Reverse(s.bytes.len()));
        for (at, section) in jobs {
            let sent = self.jobs.as_ref().map(|jobs| jobs.send((seq, at, section)));
            if !matches!(sent, Some(Ok(()))) {
                return Err(std::io::Error::other("a compression thread stopped"));
            }
        }
        Ok(())
    }

    /// Waits for the sections of block `seq`, in their order.
    pub(crate) fn take(&mut self, seq: u64) -> std::io::Result<Vec<Compressed>> {
        loop {
            if self.pending.get(&seq).is_none_or(|p| p.missing == 0) {
                let Some(p) = self.pending.remove(&seq) else {
                    return Err(std::io::Error::other("no such block submitted"));
                };
                if let Some(e) = p.error {
                    return Err(e);
                }
                return Ok(p.sections.into_iter().flatten().collect());
            }
            let (s, at, result) = self
                .results
                .recv()
                .map_err(|_| std::io::Error::other("a compression thread stopped"))?;
            let Some(p) = self.pending.get_mut(&s) else {
                continue;
            };
            p.missing -= 1;
            match result {
                Ok(c) => p.sections[at] = Some(c),
                Err(e) => {
                    p.error.get_or_insert(e);
                }
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the queue ends every worker's loop.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
