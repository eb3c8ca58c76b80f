//! Decompressing blocks that were read and checked: on the caller's thread, or on a few worker
//! threads kept for the life of the reader, which decompress the blocks read ahead while the
//! caller works on the ones before.
//!
//! The reader hands each block to the workers as soon as its stored bytes are read, and takes
//! the blocks back in file order, each as soon as it is done: the first block is returned while
//! the next ones are still being decompressed, so the caller can start on it at once.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::block::{Block, BlockHeader, DecodedSection};
use super::codec::DecompressError;
use super::contexts::Decompressor;
use super::framing::crc;
use crate::error::Error;

/// A block whose header is checked and whose stored bytes are read and checked, not yet
/// decompressed.
pub(crate) struct RawBlock {
    pub(crate) header: BlockHeader,
    pub(crate) offset: u64,
    /// File offset and stored bytes of each section.
    pub(crate) stored: Vec<(u64, Vec<u8>)>,
}

/// Decompresses and checks the sections of a block read by the reader.
pub(crate) fn decode_raw(raw: RawBlock, decompressor: &mut Decompressor) -> Result<Block, Error> {
    let mut sections = Vec::with_capacity(raw.stored.len());
    for (d, (at, stored)) in raw.header.sections.iter().zip(raw.stored) {
        let bytes = decompressor
            .decompress(d.codec, stored, d.uncompressed_len)
            .map_err(|e| {
                let message = match e {
                    DecompressError::Invalid(e) => {
                        format!("section {} does not decompress: {e}", d.number)
                    }
                    DecompressError::TooLong => format!(
                        "section {} expands beyond its declared {} bytes",
                        d.number, d.uncompressed_len
                    ),
                    DecompressError::TooShort(n) => format!(
                        "section {} expands to {n} bytes, not the declared {}",
                        d.number, d.uncompressed_len
                    ),
                };
                Error::Corrupt {
                    offset: at,
                    message,
                }
            })?;
        let computed = crc(&bytes);
        if computed != d.uncompressed_crc {
            return Err(Error::Checksum {
                offset: at,
                what: "uncompressed section bytes",
                stored: d.uncompressed_crc,
                computed,
            });
        }
        sections.push(DecodedSection {
            number: d.number,
            element_width: d.element_width,
            bytes,
        });
    }
    Ok(Block {
        index: raw.header.index,
        first_record: raw.header.first_record,
        record_count: raw.header.record_count,
        offset: raw.offset,
        sections,
    })
}

/// A block to decompress, numbered in the order it was read.
type Job = (u64, RawBlock);
/// A decompressed block (or why not), with its number.
type Done = (u64, Result<Block, Error>);

/// Worker threads decompressing blocks, each with its own [`Decompressor`].
pub(crate) struct DecodePool {
    jobs: Option<Sender<Job>>,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    /// Blocks finished before they were asked for.
    done: BTreeMap<u64, Result<Block, Error>>,
}

impl DecodePool {
    /// Starts `threads` workers (at least one).
    pub(crate) fn new(threads: usize) -> DecodePool {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (done, results) = mpsc::channel::<Done>();
        let queue = Arc::new(Mutex::new(queue));
        let workers = (0..threads.max(1))
            .map(|_| {
                let queue = Arc::clone(&queue);
                let done = done.clone();
                std::thread::spawn(move || {
                    let mut decompressor = Decompressor::new();
                    loop {
                        // Hold the lock only to take a job, not while decompressing it.
                        let job = match queue.lock() {
                            Ok(q) => q.recv(),
                            Err(_) => return,
                        };
                        let Ok((seq, raw)) = job else { return };
                        // A panic in a codec becomes this block's error, so the reader never
                        // waits for a block that will not come.
                        let block = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            decode_raw(raw, &mut decompressor)
                        }))
                        .unwrap_or_else(|_| {
                            decompressor = Decompressor::new();
                            Err(Error::invalid(
                                "a decompression thread panicked".to_string(),
                            ))
                        });
                        if done.send((seq, block)).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        DecodePool {
            jobs: Some(jobs),
            results,
            workers,
            done: BTreeMap::new(),
        }
    }

    /// How many workers the pool has.
    pub(crate) fn size(&self) -> usize {
        self.workers.len()
    }

    /// Queues block number `seq` for decompression.
    pub(crate) fn submit(&mut self, seq: u64, raw: RawBlock) -> Result<(), Error> {
        match self.jobs.as_ref().map(|jobs| jobs.send((seq, raw))) {
            Some(Ok(())) => Ok(()),
            _ => Err(stopped()),
        }
    }

    /// Waits for block number `seq`, which must have been submitted and not yet taken.
    pub(crate) fn take(&mut self, seq: u64) -> Result<Block, Error> {
        loop {
            if let Some(block) = self.done.remove(&seq) {
                return block;
            }
            let (s, block) = self.results.recv().map_err(|_| stopped())?;
            self.done.insert(s, block);
        }
    }
}

fn stopped() -> Error {
    Error::invalid("a decompression thread stopped".to_string())
}

impl Drop for DecodePool {
    fn drop(&mut self) {
        // Closing the queue ends every worker's loop once its current block is done.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
