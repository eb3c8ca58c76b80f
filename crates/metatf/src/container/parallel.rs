//! Compressing blocks on worker threads while the caller prepares the next ones.
//!
//! Compression (zstd at high levels especially) is most of the cost of writing a trace, and
//! each section of each block is compressed on its own, so blocks can be compressed in any
//! order and on any thread. The writer hands each block to this pool and writes the results
//! back in submission order, so the file is the same byte for byte whatever the thread count.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::block::{SectionData, SectionDescriptor};
use super::codec::{compress, Codec};
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

/// Compresses one section and describes the result.
pub(crate) fn compress_section(s: &SectionData<'_>) -> std::io::Result<Compressed> {
    let mut codec = s.codec;
    let mut stored = compress(codec, s.level, s.bytes)?;
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

/// Compresses every section of one block handed to a worker.
fn compress_owned(sections: &[OwnedSection]) -> std::io::Result<Vec<Compressed>> {
    sections
        .iter()
        .map(|s| {
            compress_section(&SectionData {
                number: s.number,
                element_width: s.element_width,
                codec: s.codec,
                level: s.level,
                bytes: &s.bytes,
            })
        })
        .collect()
}

type Job = (u64, Vec<OwnedSection>);
type Done = (u64, std::io::Result<Vec<Compressed>>);

/// A fixed set of worker threads compressing blocks, and the results not yet collected.
pub(crate) struct Pool {
    jobs: Option<SyncSender<Job>>,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    /// Results that arrived ahead of an earlier block's.
    early: BTreeMap<u64, std::io::Result<Vec<Compressed>>>,
}

impl Pool {
    /// Starts `threads` workers (at least one).
    pub(crate) fn new(threads: usize) -> Pool {
        let threads = threads.max(1);
        // A short queue: the writer never lets more than a few blocks wait (bounded memory).
        let (jobs, queue) = mpsc::sync_channel::<Job>(1);
        let (done, results) = mpsc::channel::<Done>();
        let queue = Arc::new(Mutex::new(queue));
        let workers = (0..threads)
            .map(|_| {
                let queue = Arc::clone(&queue);
                let done = done.clone();
                std::thread::spawn(move || loop {
                    // Hold the lock only to take a job, not while compressing it.
                    let job = match queue.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, sections)) = job else { return };
                    // A panic in a codec must not leave the writer waiting for this block
                    // forever: it becomes an error for the block.
                    let result = std::panic::catch_unwind(|| compress_owned(&sections))
                        .unwrap_or_else(|_| {
                            Err(std::io::Error::other("a compression thread panicked"))
                        });
                    if done.send((seq, result)).is_err() {
                        return;
                    }
                })
            })
            .collect();
        Pool {
            jobs: Some(jobs),
            results,
            workers,
            early: BTreeMap::new(),
        }
    }

    /// Queues block `seq` for compression.
    pub(crate) fn submit(&mut self, seq: u64, sections: Vec<OwnedSection>) -> std::io::Result<()> {
        let sent = self.jobs.as_ref().map(|jobs| jobs.send((seq, sections)));
        match sent {
            Some(Ok(())) => Ok(()),
            _ => Err(std::io::Error::other("a compression thread stopped")),
        }
    }

    /// Waits for the result of block `seq`.
    pub(crate) fn take(&mut self, seq: u64) -> std::io::Result<Vec<Compressed>> {
        loop {
            if let Some(result) = self.early.remove(&seq) {
                return result;
            }
            match self.results.recv() {
                Ok((s, result)) => {
                    self.early.insert(s, result);
                }
                Err(_) => return Err(std::io::Error::other("a compression thread stopped")),
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
