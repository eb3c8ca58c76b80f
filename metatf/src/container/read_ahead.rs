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

use super::block::{Block, BlockHeader, DecodedSection, SectionDescriptor};
use super::codec::Codec;
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

/// Context-mixed bytes (codecs 3 and 4, which decode at 2–15 MB/s) a block must hold before
/// [`decode_raw`] splits its sections with a second thread: about 8 ms of codec 3 or 1 ms of
/// codec 4, where starting a thread costs tens of microseconds.
const SPLIT_CONTEXT_MIXED: u64 = 16 << 10;

/// Zstandard-compressed bytes (uncompressed) the first block a reader hands out must hold
/// before [`decode_raw`] splits its zstd sections with a second thread: nothing else runs
/// while that block is decompressed (its caller and the thread that will decode it wait), and
/// a large one takes far longer than starting a thread does. Later blocks are
/// decompressed while the caller works on the ones before, so a second thread would only
/// take a core from it.
const SPLIT_FIRST_ZSTD: u64 = 512 << 10;

/// How [`decode_raw`] may share a block's decompression with a second, scoped thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Split {
    /// Not at all (the reader's own thread decompresses every block).
    No,
    /// Context-mixed sections, when worth it.
    ContextMixed,
    /// Context-mixed sections, else zstd sections, when worth it: for the first block.
    First,
}

/// Decompresses and checks the sections of a block read by the reader. Unless `split` is
/// [`Split::No`], a block with at least [`SPLIT_CONTEXT_MIXED`] bytes in two or more
/// context-mixed sections has about half of those decompressed on a second, scoped thread: a
/// short trace's one block is then not decoded on one core while the other waits; with
/// [`Split::First`], the same goes for a block with at least [`SPLIT_FIRST_ZSTD`] bytes in
/// two or more zstd sections. The block, and the error (the first failing section's, in
/// order), are the same either way.
pub(crate) fn decode_raw(
    raw: RawBlock,
    decompressor: &mut Decompressor,
    split: Split,
) -> Result<Block, Error> {
    let descriptors = &raw.header.sections;
    let helper = match split {
        Split::No => Vec::new(),
        Split::ContextMixed => helper_sections(descriptors, false),
        Split::First => helper_sections(descriptors, true),
    };
    let mut sections = Vec::with_capacity(raw.stored.len());
    if helper.is_empty() {
        for (d, (at, stored)) in descriptors.iter().zip(raw.stored) {
            let bytes = decompressor.decompress(d.codec, stored, d.uncompressed_len);
            sections.push(checked(d, at, bytes)?);
        }
    } else {
        let mut mine = Vec::with_capacity(raw.stored.len());
        let mut theirs = Vec::with_capacity(helper.len());
        for (i, (at, stored)) in raw.stored.into_iter().enumerate() {
            if helper.contains(&i) {
                theirs.push((i, at, stored));
            } else {
                mine.push((i, at, stored));
            }
        }
        let mut results = std::thread::scope(|scope| {
            let helped = scope.spawn(|| {
                // The context mixers keep no state in a decompressor: a fresh one costs
                // nothing; a zstd context is made once for the block.
                let mut own = Decompressor::new();
                theirs
                    .into_iter()
                    .map(|(i, at, stored)| {
                        let d = &descriptors[i];
                        (i, at, own.decompress(d.codec, stored, d.uncompressed_len))
                    })
                    .collect::<Vec<_>>()
            });
            let mut results: Vec<_> = mine
                .into_iter()
                .map(|(i, at, stored)| {
                    let d = &descriptors[i];
                    (
                        i,
                        at,
                        decompressor.decompress(d.codec, stored, d.uncompressed_len),
                    )
                })
                .collect();
            match helped.join() {
                Ok(done) => results.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
            results
        });
        results.sort_by_key(|&(i, _, _)| i);
        for (i, at, bytes) in results {
            sections.push(checked(&descriptors[i], at, bytes)?);
        }
    }
    Ok(Block {
        index: raw.header.index,
        first_record: raw.header.first_record,
        record_count: raw.header.record_count,
        offset: raw.offset,
        sections,
    })
}

/// The sections [`decode_raw`] gives to its helper thread when they are worth a thread (none
/// otherwise): the context-mixed ones, or with `zstd_too` and too few of those, the zstd ones;
/// longest first, each to the side with fewer such bytes so far, so the two threads finish at
/// about the same time.
fn helper_sections(descriptors: &[SectionDescriptor], zstd_too: bool) -> Vec<usize> {
    let mixed = balanced(
        descriptors,
        |c| matches!(c, Codec::ContextMix | Codec::LightContextMix),
        SPLIT_CONTEXT_MIXED,
    );
    if !mixed.is_empty() || !zstd_too {
        return mixed;
    }
    balanced(descriptors, |c| c == Codec::Zstd, SPLIT_FIRST_ZSTD)
}

/// The half of the sections of a codec `wanted` says yes to that go to the helper thread, when
/// there are two or more holding at least `threshold` bytes in all (none otherwise).
fn balanced(
    descriptors: &[SectionDescriptor],
    wanted: impl Fn(Codec) -> bool,
    threshold: u64,
) -> Vec<usize> {
    let mut mixed: Vec<usize> = (0..descriptors.len())
        .filter(|&i| wanted(descriptors[i].codec))
        .collect();
    let bytes: u64 = mixed.iter().map(|&i| descriptors[i].uncompressed_len).sum();
    if mixed.len() < 2 || bytes < threshold {
        return Vec::new();
    }
    mixed.sort_by_key(|&i| std::cmp::Reverse(descriptors[i].uncompressed_len));
    let (mut own, mut helped) = (0u64, 0u64);
    let mut helper = Vec::new();
    for i in mixed {
        let len = descriptors[i].uncompressed_len;
        if helped < own {
            helped += len;
            helper.push(i);
        } else {
            own += len;
        }
    }
    helper
}

/// A section decompressed (or why not), checked against its descriptor's CRC; errors name the
/// section and its file offset `at`.
fn checked(
    d: &SectionDescriptor,
    at: u64,
    bytes: Result<Vec<u8>, DecompressError>,
) -> Result<DecodedSection, Error> {
    let bytes = bytes.map_err(|e| {
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
    Ok(DecodedSection {
        number: d.number,
        element_width: d.element_width,
        bytes,
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
                            let split = if seq == 0 {
                                Split::First
                            } else {
                                Split::ContextMixed
                            };
                            decode_raw(raw, &mut decompressor, split)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn section(number: u8, codec: Codec, uncompressed_len: u64) -> SectionDescriptor {
        SectionDescriptor {
            number,
            element_width: 1,
            codec,
            uncompressed_len,
            stored_len: 0,
            stored_crc: 0,
            uncompressed_crc: 0,
        }
    }

    #[test]
    fn zstd_sections_are_split_only_for_a_large_first_block() {
        let big = [
            section(1, Codec::Zstd, 300 << 10),
            section(2, Codec::None, 900 << 10),
            section(3, Codec::Zstd, 100 << 10),
            section(4, Codec::Zstd, 250 << 10),
        ];
        assert!(helper_sections(&big, false).is_empty());
        // Longest first, each to the lighter side: 300 K stays, 250 K goes, 100 K goes.
        assert_eq!(helper_sections(&big, true), [3, 2]);
        let small = [
            section(1, Codec::Zstd, 300 << 10),
            section(2, Codec::Zstd, 100 << 10),
        ];
        assert!(helper_sections(&small, true).is_empty());
        let one = [section(1, Codec::Zstd, 4 << 20)];
        assert!(helper_sections(&one, true).is_empty());
    }

    #[test]
    fn context_mixed_sections_come_first() {
        let mixed = [
            section(1, Codec::ContextMix, 20 << 10),
            section(2, Codec::Zstd, 600 << 10),
            section(3, Codec::LightContextMix, 10 << 10),
            section(4, Codec::Zstd, 600 << 10),
        ];
        assert_eq!(helper_sections(&mixed, false), [2]);
        assert_eq!(helper_sections(&mixed, true), [2]);
    }
}
