//! Streaming container reader: one block at a time, every checksum verified.

use std::collections::VecDeque;
use std::io::{Read, Seek};

use super::block::{Block, BlockHeader, SectionDescriptor};
use super::budget::check_block;
use super::contexts::Decompressor;
use super::dtd_storage::{DtdIdentity, DtdStorage};
use super::framing::{crc, Positioned};
use super::header::ContainerHeader;
use super::index::{encode_entry, read_index, IndexEntry, Trailer, TRAILER_LEN};
use super::read_ahead::{decode_raw, DecodePool, RawBlock, Split};
use super::{BLOCK_MAGIC, INDEX_MAGIC, INDEX_THREADS_MAGIC, MAX_BLOCK_THREADS};
use crate::error::Error;

/// Reads a container from any [`Read`], in order, holding one block at a time.
pub struct ContainerReader<R: Read> {
    input: Positioned<R>,
    header: ContainerHeader,
    dtd_storage: DtdStorage,
    dtd_reference: Option<DtdIdentity>,
    /// Offset of the block returned last (index entries are relative to it).
    last_offset: u64,
    /// Blocks returned so far.
    blocks: u64,
    /// Records in the blocks returned so far.
    records: u64,
    /// CRC-32 of the index entries the blocks seen so far imply; compared with the stored
    /// index at the end so that checking it needs no per-block memory.
    expected_index: crc32fast::Hasher,
    finished: bool,
    /// True once blocks were skipped by seeking: the index can then not be compared with the
    /// blocks read (it is still checksummed).
    seeked: bool,
    /// Descriptors of the block returned last, for inspection.
    last: Vec<SectionDescriptor>,
    /// Threads decompressing blocks (1: the caller's own).
    threads: usize,
    /// Decompresses on the caller's thread, keeping its zstd context between sections.
    decompressor: Decompressor,
    /// The worker threads decompressing blocks read ahead, once more than one thread is asked
    /// for and a block is read.
    pool: Option<DecodePool>,
    /// Blocks read ahead and handed to the pool, in file order: job number and descriptors.
    in_flight: VecDeque<(u64, Vec<SectionDescriptor>)>,
    /// Job number of the next block handed to the pool.
    next_job: u64,
    /// An error met while reading ahead, returned once the blocks before it are.
    pending: Option<Error>,
    /// The thread ids of each block, when the index lists them (read at the end).
    threads_listed: Option<Vec<Vec<u64>>>,
}

impl<R: Read> ContainerReader<R> {
    /// Reads and checks the header.
    pub fn new(r: R) -> Result<Self, Error> {
        let mut input = Positioned::new(r);
        let decoded = ContainerHeader::decode(&mut input)?;
        Ok(ContainerReader {
            input,
            header: decoded.header,
            dtd_storage: decoded.storage,
            dtd_reference: decoded.reference,
            last_offset: 0,
            blocks: 0,
            records: 0,
            expected_index: crc32fast::Hasher::new(),
            finished: false,
            seeked: false,
            last: Vec::new(),
            threads: 1,
            decompressor: Decompressor::new(),
            pool: None,
            in_flight: VecDeque::new(),
            next_job: 0,
            pending: None,
            threads_listed: None,
        })
    }

    /// The file's size when it is a compact container (version 3), which is read through the
    /// full form it encodes: [`Self::position`] and block offsets then count in that form.
    pub fn compact_len(&self) -> Option<u64> {
        self.input.compact_len()
    }

    /// The container's header.
    pub fn header(&self) -> &ContainerHeader {
        &self.header
    }

    /// How the file stores its DTD.
    pub fn dtd_storage(&self) -> DtdStorage {
        self.dtd_storage
    }

    /// The identity of a DTD the file names by reference instead of carrying it; the header's
    /// `dtd` is empty until [`Self::resolve_dtd`] supplies the text.
    pub fn dtd_reference(&self) -> Option<DtdIdentity> {
        self.dtd_reference
    }

    /// Supplies the text of a DTD stored by reference, after checking that it is the one the
    /// file names (same length and CRC-32). Does nothing for files that carry their DTD.
    pub fn resolve_dtd(&mut self, text: &str) -> Result<(), Error> {
        match self.dtd_reference {
            Some(id) if id.matches(text) => {
                self.header.dtd = text.to_string();
                Ok(())
            }
            Some(id) => Err(Error::invalid(format!(
                "the file names a DTD of {} bytes with CRC-32 {:08x} for format `{}`, \
                 which is not the DTD this reader knows",
                id.length, id.crc32, self.header.format
            ))),
            None => Ok(()),
        }
    }

    /// Hands back the underlying input (for example to seek it and read again).
    pub fn into_inner(self) -> R {
        self.input.into_inner()
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> u64 {
        self.input.pos
    }

    /// Records in the blocks returned so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// The thread ids (ascending) of each block, once [`Self::next_block`] has read an index
    /// that lists them (formats whose records have threads); `None` before or without.
    pub fn block_threads(&self) -> Option<&[Vec<u64>]> {
        self.threads_listed.as_deref()
    }

    /// The section descriptors (codec, stored and uncompressed sizes, checksums) of the block
    /// [`Self::next_block`] or [`Self::skip_block`] returned last. A section's bytes follow the
    /// block header in this order, so after `skip_block` they end at [`Self::position`].
    pub fn last_descriptors(&self) -> &[SectionDescriptor] {
        &self.last
    }

    /// Decompresses blocks on `threads` threads (1, the default, on the caller's): the reader
    /// then reads up to that many blocks ahead and decompresses and checks them on worker
    /// threads, returning each as soon as it and the blocks before it are done. The blocks
    /// returned, and the errors, are the same whatever the count.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The next block, or `Ok(None)` once the index and trailer have been read and checked.
    /// A file cut short yields every complete block, then a [`Error::Truncated`].
    pub fn next_block(&mut self) -> Result<Option<Block>, Error> {
        if self.threads > 1 {
            self.read_ahead();
        }
        if let Some((job, descriptors)) = self.in_flight.pop_front() {
            let block = match self.pool.as_mut() {
                Some(pool) => pool.take(job),
                None => Err(Error::invalid("no decompression threads".to_string())),
            };
            self.last = descriptors;
            if block.is_err() {
                // Nothing after the first damaged block is returned, as when reading in order.
                self.discard_read_ahead();
            }
            return block.map(Some);
        }
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        match self.read_raw()? {
            None => Ok(None),
            Some(raw) => {
                let descriptors = raw.header.sections.clone();
                let block = decode_raw(raw, &mut self.decompressor, Split::No)?;
                self.last = descriptors;
                Ok(Some(block))
            }
        }
    }

    /// Reads blocks until `threads` are in flight (or the index, or an error, is reached) and
    /// hands them to the worker threads.
    fn read_ahead(&mut self) {
        if self.in_flight.is_empty() && self.pool.as_ref().is_some_and(|p| p.size() != self.threads)
        {
            // The thread count changed: start over with as many workers.
            self.pool = None;
        }
        while self.in_flight.len() < self.threads && self.pending.is_none() && !self.finished {
            let raw = match self.read_raw() {
                Ok(Some(raw)) => raw,
                Ok(None) => break,
                Err(e) => {
                    self.pending = Some(e);
                    break;
                }
            };
            let descriptors = raw.header.sections.clone();
            let threads = self.threads;
            let pool = self.pool.get_or_insert_with(|| DecodePool::new(threads));
            let job = self.next_job;
            self.next_job += 1;
            match pool.submit(job, raw) {
                Ok(()) => self.in_flight.push_back((job, descriptors)),
                Err(e) => {
                    self.pending = Some(e);
                    break;
                }
            }
        }
    }

    /// Drops the blocks read ahead and any error met after them, waiting for the workers to
    /// finish with them so that no stale block is left behind.
    fn discard_read_ahead(&mut self) {
        for (job, _) in self.in_flight.drain(..) {
            if let Some(pool) = self.pool.as_mut() {
                let _ = pool.take(job);
            }
        }
        self.pending = None;
    }

    /// Reads the next block's header and stored bytes, checking the stored CRCs; `None` once
    /// the index and trailer have been read and checked.
    fn read_raw(&mut self) -> Result<Option<RawBlock>, Error> {
        if self.finished {
            return Ok(None);
        }
        let offset = self.input.pos;
        if !self.at_block()? {
            self.read_index(offset)?;
            self.finished = true;
            return Ok(None);
        }
        let header = self.read_block_header(offset)?;
        let mut stored = Vec::with_capacity(header.sections.len());
        for d in &header.sections {
            let at = self.input.pos;
            let bytes = self.input.bytes(d.stored_len, "section data")?;
            let computed = crc(&bytes);
            if computed != d.stored_crc {
                return Err(Error::Checksum {
                    offset: at,
                    what: "stored section bytes",
                    stored: d.stored_crc,
                    computed,
                });
            }
            stored.push((at, bytes));
        }
        let mut entry = Vec::with_capacity(20);
        let this = IndexEntry {
            offset,
            first_record: header.first_record,
            record_count: header.record_count,
        };
        encode_entry(&this, self.last_offset, &mut entry);
        self.expected_index.update(&entry);
        self.last_offset = offset;
        self.blocks += 1;
        self.records += header.record_count;
        Ok(Some(RawBlock {
            header,
            offset,
            stored,
        }))
    }

    /// Reads the next block's header and skips its data without decompressing or checking it;
    /// returns where the block is and which records it holds, or `None` at the index (which is
    /// then not read). This is how an index is rebuilt when the file's own is missing or damaged.
    pub fn skip_block(&mut self) -> Result<Option<IndexEntry>, Error> {
        if self.finished {
            return Ok(None);
        }
        let offset = self.input.pos;
        if !self.at_block()? {
            self.finished = true;
            return Ok(None);
        }
        let header = self.read_block_header(offset)?;
        for d in &header.sections {
            self.input.skip(d.stored_len, "section data")?;
        }
        self.last.clone_from(&header.sections);
        self.blocks += 1;
        self.records += header.record_count;
        self.last_offset = offset;
        self.seeked = true;
        Ok(Some(IndexEntry {
            offset,
            first_record: header.first_record,
            record_count: header.record_count,
        }))
    }

    /// Reads the marker at the current position: `true` for a block, `false` for the index.
    fn at_block(&mut self) -> Result<bool, Error> {
        let offset = self.input.pos;
        let mut magic = [0u8; 4];
        self.input.exact(&mut magic, "block or index marker")?;
        match magic {
            BLOCK_MAGIC => Ok(true),
            INDEX_MAGIC => Ok(false),
            INDEX_THREADS_MAGIC => {
                self.threads_listed = Some(Vec::new());
                Ok(false)
            }
            _ => Err(Error::BadMagic {
                offset,
                expected: "a block marker \"MTFB\" or an index marker \"MTFI\" or \"MTFT\"",
                found: magic.to_vec(),
            }),
        }
    }

    fn read_block_header(&mut self, offset: u64) -> Result<BlockHeader, Error> {
        let header = BlockHeader::read(&mut self.input, offset)?;
        if header.index != self.blocks {
            return Err(Error::Corrupt {
                offset: offset + 4,
                message: format!(
                    "block number {} where block {} was expected",
                    header.index, self.blocks
                ),
            });
        }
        if header.first_record != self.records {
            return Err(Error::Corrupt {
                offset: offset + 12,
                message: format!(
                    "block {} starts at record {} but {} records precede it",
                    header.index, header.first_record, self.records
                ),
            });
        }
        if header
            .first_record
            .checked_add(header.record_count)
            .is_none()
        {
            return Err(Error::Corrupt {
                offset: offset + 20,
                message: "record count overflows 64 bits".to_string(),
            });
        }
        // The section bytes follow the header: the block ends where they do, and its claims
        // are bounded by the file up to there before anything is read or decompressed.
        let end = header
            .sections
            .iter()
            .fold(self.input.pos, |end, d| end.saturating_add(d.stored_len));
        check_block(&header, offset, end)?;
        Ok(header)
    }

    fn read_index(&mut self, offset: u64) -> Result<(), Error> {
        let mut raw = match self.threads_listed {
            Some(_) => INDEX_THREADS_MAGIC.to_vec(),
            None => INDEX_MAGIC.to_vec(),
        };
        let count_at = self.input.pos;
        let count = self.input.varint_into(&mut raw, "index")?;
        if count != self.blocks {
            return Err(Error::Corrupt {
                offset: count_at,
                message: format!(
                    "the index lists {count} blocks but {} were read",
                    self.blocks
                ),
            });
        }
        let entries_at = raw.len();
        for _ in 0..count {
            self.input.varint_into(&mut raw, "index")?;
            self.input.varint_into(&mut raw, "index")?;
        }
        let entries_end = raw.len();
        if let Some(lists) = self.threads_listed.as_mut() {
            for _ in 0..count {
                let at = self.input.pos;
                let n = self.input.varint_into(&mut raw, "index")?;
                if n > MAX_BLOCK_THREADS {
                    return Err(Error::Corrupt {
                        offset: at,
                        message: format!("a block cannot list {n} threads"),
                    });
                }
                let mut list = Vec::new();
                let mut id = 0u64;
                for k in 0..n {
                    let at = self.input.pos;
                    let step = self.input.varint_into(&mut raw, "index")?;
                    id = id
                        .checked_add(step)
                        .filter(|_| k == 0 || step > 0)
                        .ok_or_else(|| Error::Corrupt {
                            offset: at,
                            message: "thread ids not ascending".to_string(),
                        })?;
                    list.push(id);
                }
                lists.push(list);
            }
        }
        let mut stored = [0u8; 4];
        self.input.exact(&mut stored, "index checksum")?;
        let stored = u32::from_le_bytes(stored);
        let computed = crc(&raw);
        if stored != computed {
            return Err(Error::Checksum {
                offset,
                what: "index",
                stored,
                computed,
            });
        }
        if !self.seeked
            && crc(&raw[entries_at..entries_end])
                != std::mem::take(&mut self.expected_index).finalize()
        {
            return Err(Error::Corrupt {
                offset,
                message: "the index does not match the blocks that precede it".to_string(),
            });
        }
        let trailer_at = self.input.pos;
        let mut t = [0u8; TRAILER_LEN];
        self.input.exact(&mut t, "trailer")?;
        let trailer = Trailer::decode(&t).ok_or_else(|| Error::Corrupt {
            offset: trailer_at,
            message: "the trailer's end marker or checksum is wrong".to_string(),
        })?;
        let expected = Trailer {
            index_offset: offset,
        };
        if trailer != expected {
            return Err(Error::Corrupt {
                offset: trailer_at,
                message: format!("the trailer says {trailer:?} but the file holds {expected:?}"),
            });
        }
        let mut extra = [0u8; 1];
        if self.input.fill(&mut extra)? != 0 {
            return Err(Error::Corrupt {
                offset: self.input.pos - 1,
                message: "data follows the trailer".to_string(),
            });
        }
        Ok(())
    }
}

impl<R: Read + Seek> ContainerReader<R> {
    /// Moves to block number `block` of the file, found in its index (or a rebuilt one) at
    /// `entry`: the next [`Self::next_block`] returns it, checked as usual (its number and first
    /// record must match the entry).
    pub fn seek_block(&mut self, block: u64, entry: &IndexEntry) -> Result<(), Error> {
        self.input.seek_to(entry.offset)?;
        // Blocks read ahead of the old position are not the ones asked for now.
        self.discard_read_ahead();
        self.blocks = block;
        self.records = entry.first_record;
        self.finished = false;
        self.seeked = true;
        Ok(())
    }
}

/// The file's index, or, when it is missing or damaged (a cut or crashed file), one rebuilt by
/// [`scan_index`]. The second value says why the index was rebuilt (`None` when the file's own
/// was used). A rebuilt index ends at the first damaged block.
pub fn load_index<R: Read + Seek>(mut r: R) -> Result<(Vec<IndexEntry>, Option<String>), Error> {
    let mut head = [0u8; 5];
    let got = Positioned::new(&mut r).fill(&mut head)?;
    r.seek(std::io::SeekFrom::Start(0))
        .map_err(|source| Error::Io { offset: 0, source })?;
    if super::compact::is_compact(&head[..got]) {
        // A compact file has no index of its own: its one block is found by reading it.
        return match scan_index(r)? {
            (entries, None) => Ok((entries, None)),
            (_, Some(e)) => Err(e),
        };
    }
    let why = match read_index(&mut r) {
        Ok(entries) => return Ok((entries, None)),
        Err(e) => e.to_string(),
    };
    r.seek(std::io::SeekFrom::Start(0))
        .map_err(|source| Error::Io { offset: 0, source })?;
    let (entries, damage) = scan_index(r)?;
    let why = match damage {
        Some(e) => format!("{why}; the blocks before this damage were indexed: {e}"),
        None => why,
    };
    Ok((entries, Some(why)))
}

/// An index built by reading every block header from the start of `r` (the data is skipped,
/// not checked), ignoring the file's own index: what to use when that index is missing or does
/// not match the blocks. Stops at the first damage, which is returned beside the blocks before it.
pub fn scan_index<R: Read>(r: R) -> Result<(Vec<IndexEntry>, Option<Error>), Error> {
    let mut reader = ContainerReader::new(r)?;
    let mut entries = Vec::new();
    loop {
        match reader.skip_block() {
            Ok(Some(entry)) => entries.push(entry),
            Ok(None) => return Ok((entries, None)),
            Err(e) => return Ok((entries, Some(e))),
        }
    }
}
