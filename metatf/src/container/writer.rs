//! Streaming container writer: header first, then one block per call, then index and trailer.

use std::io::Write;

use std::collections::VecDeque;

use super::block::{check_descriptor, BlockHeader, SectionData, SectionDescriptor};
use super::budget::check_budget;
use super::codec::Codec;
use super::contexts::Compressor;
use super::dtd_storage::{DtdIdentity, DtdStorage};
use super::framing::{crc, Counted};
use super::header::ContainerHeader;
use super::index::{encode_index, IndexEntry, Trailer};
use super::parallel::{compress_longest_first, Compressed, OwnedSection, Pool};
use super::MAX_SECTIONS_PER_BLOCK;
use crate::error::Error;

/// Writes a container to any [`Write`]; needs no seeking and knows no counts in advance.
///
/// Memory: the blocks waiting for compression (at most one per thread, see
/// [`Self::set_threads`]), plus one index entry (24 bytes) per block written so far (the
/// index is written at the end).
pub struct ContainerWriter<W: Write> {
    out: Counted<W>,
    entries: Vec<IndexEntry>,
    next_record: u64,
    /// Worker threads compressing blocks, when more than one thread was asked for.
    pool: Option<Pool>,
    /// Blocks handed to the pool and not yet written.
    waiting: VecDeque<Waiting>,
    /// Sections of the next block already handed to the pool ([`Self::compress_ahead`]).
    ahead: Option<Ahead>,
    submitted: u64,
    threads: usize,
    /// Thread ids of each block handed to `write_block`, when any block was given some.
    block_threads: Vec<Vec<u64>>,
    /// The list for the next block, from [`Self::set_block_threads`].
    next_threads: Vec<u64>,
    any_threads: bool,
    /// Write a one-block file in the compact form when it has one ([`Self::prefer_compact`]).
    compact: bool,
    /// Compresses on the caller's thread (one thread), keeping its zstd context from one
    /// section of a block to the next.
    compressor: Compressor,
}

/// A block handed to the pool and not yet written.
struct Waiting {
    /// The pool's sequence number of the block's sections (those not compressed ahead).
    seq: u64,
    record_count: u64,
    /// Where the block's sections go when some were compressed ahead.
    merge: Option<Merge>,
}

/// How the sections of a block compressed ahead and those compressed with the block make
/// up the block, in the order [`ContainerWriter::write_block`] was given them.
struct Merge {
    /// The pool's sequence number of the sections compressed ahead.
    ahead_seq: u64,
    /// Per section of the block: `(true, i)` for the `i`-th section compressed ahead,
    /// `(false, i)` for the `i`-th compressed with the block.
    order: Vec<(bool, usize)>,
    /// Per section compressed ahead: its length and the CRC-32 of the bytes the block was
    /// given, which the compressed section must have been made from.
    expected: Vec<(u64, u32)>,
}

/// Sections handed to [`ContainerWriter::compress_ahead`] for the next block.
struct Ahead {
    seq: u64,
    /// Number, codec and level of each, in the order handed.
    sections: Vec<(u8, Codec, i32)>,
}

impl<W: Write> ContainerWriter<W> {
    /// Writes the header, with the DTD stored as [`DtdStorage::Auto`] chooses, and returns a
    /// writer ready for blocks.
    pub fn new(out: W, header: &ContainerHeader) -> Result<Self, Error> {
        Self::with_dtd_storage(out, header, DtdStorage::Auto)
    }

    /// Like [`Self::new`], storing the DTD as `storage` says. With
    /// [`DtdStorage::Reference`] only the identity of `header.dtd` is written, so only readers
    /// that know the DTD of `header.format` can name it (format models, whose sections are
    /// not laid out from the DTD, use this to keep small files small).
    pub fn with_dtd_storage(
        out: W,
        header: &ContainerHeader,
        storage: DtdStorage,
    ) -> Result<Self, Error> {
        Self::start(out, header.encode(storage, None)?)
    }

    /// Writes a header whose DTD is stored by reference to `dtd`, whether or not
    /// `header.dtd` holds its text: used to rewrite a file that referenced its DTD.
    pub fn referencing(out: W, header: &ContainerHeader, dtd: DtdIdentity) -> Result<Self, Error> {
        Self::start(out, header.encode(DtdStorage::Reference, Some(dtd))?)
    }

    fn start(out: W, bytes: Vec<u8>) -> Result<Self, Error> {
        // The header is held until the first block is written, so that a compact form can
        // still be chosen; see `put_block`.
        let mut out = Counted {
            inner: out,
            pos: 0,
            held: Some(Vec::new()),
        };
        out.put(&bytes)?;
        Ok(ContainerWriter {
            out,
            entries: Vec::new(),
            next_record: 0,
            pool: None,
            waiting: VecDeque::new(),
            ahead: None,
            submitted: 0,
            threads: 1,
            block_threads: Vec::new(),
            next_threads: Vec::new(),
            any_threads: false,
            compact: false,
            compressor: Compressor::new(),
        })
    }

    /// Asks for the compact form (container version 3, `docs/FORMAT.md §5`) when the file turns
    /// out to have one: a single block of stored (codec none) sections, no thread lists, at
    /// most [`super::compact::COMPACT_MAX`] bytes. The file is then kept in memory until
    /// [`Self::finish`] (at most that many bytes); any other file is written as usual.
    pub fn prefer_compact(&mut self) {
        self.compact = true;
    }

    /// Compresses blocks on `threads` worker threads (1, the default, compresses on the
    /// caller's thread). The file is the same byte for byte whatever the count; only blocks
    /// are parallel, so a single-block trace gains nothing.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
        if self.threads > 1 && self.pool.is_none() {
            self.pool = Some(Pool::new(self.threads));
        }
    }

    /// Names the thread ids whose records the next block holds, for formats whose records have
    /// threads: the index then lists each block's threads (marker `MTFT`, `docs/FORMAT.md §5`),
    /// so a reader can find a thread's blocks without reading them. Ids are sorted and
    /// deduplicated; blocks written without a call list none.
    pub fn set_block_threads(&mut self, threads: &[u64]) {
        self.next_threads = threads.to_vec();
        self.next_threads.sort_unstable();
        self.next_threads.dedup();
        self.any_threads |= !self.next_threads.is_empty();
    }

    /// Records handed to [`Self::write_block`] so far (written, or waiting for compression).
    pub fn records_written(&self) -> u64 {
        self.next_record
    }

    /// Starts compressing some sections of the next block now, on the worker threads, before
    /// the block's other sections are known: [`Self::write_block`] then takes them from the
    /// pool instead of compressing them again, and must be given the same sections (number,
    /// codec, level and bytes; checked) among the block's. With one thread (no workers) this
    /// does nothing and the block's sections are all compressed by `write_block`; the file is
    /// the same byte for byte either way, as each section is compressed on its own. A second
    /// call before the block is written does nothing.
    ///
    /// Why: an encoder whose streams are finished at different times (the allocation model's
    /// site streams when the input ends, its address streams only when a worker thread has
    /// caught up) gets the first compressed while it waits for the others, rather than all at
    /// the end, one after another, with nothing else to do.
    pub fn compress_ahead(&mut self, sections: &[SectionData<'_>]) -> Result<(), Error> {
        if self.pool.is_none() || self.ahead.is_some() {
            return Ok(());
        }
        self.check_sections(sections)?;
        let owned = owned_sections(sections);
        let seq = self.submitted;
        if let Some(pool) = self.pool.as_mut() {
            pool.submit(seq, owned).map_err(|source| Error::Io {
                offset: self.out.pos,
                source,
            })?;
        }
        self.submitted += 1;
        self.ahead = Some(Ahead {
            seq,
            sections: sections
                .iter()
                .map(|s| (s.number, s.codec, s.level))
                .collect(),
        });
        Ok(())
    }

    /// Checks what can be checked of a block's sections before compressing them: at most
    /// [`MAX_SECTIONS_PER_BLOCK`], distinct numbers, valid descriptors.
    fn check_sections(&self, sections: &[SectionData<'_>]) -> Result<(), Error> {
        if sections.len() > MAX_SECTIONS_PER_BLOCK {
            return Err(Error::invalid(format!(
                "a block holds at most {MAX_SECTIONS_PER_BLOCK} sections, not {}",
                sections.len()
            )));
        }
        for (i, s) in sections.iter().enumerate() {
            if sections[..i].iter().any(|t| t.number == s.number) {
                return Err(Error::invalid(format!(
                    "section {} given twice in one block",
                    s.number
                )));
            }
            let d = SectionDescriptor {
                number: s.number,
                element_width: s.element_width,
                codec: Codec::None,
                uncompressed_len: s.bytes.len() as u64,
                stored_len: s.bytes.len() as u64,
                stored_crc: 0,
                uncompressed_crc: 0,
            };
            check_descriptor(&d, self.out.pos).map_err(|e| Error::invalid(e.to_string()))?;
        }
        Ok(())
    }

    /// Compresses and writes one block holding `record_count` records. Section numbers must be
    /// distinct within the block; each section is at most 1 GiB. With several threads the
    /// block may be written during a later call; errors then surface there.
    pub fn write_block(
        &mut self,
        record_count: u64,
        sections: &[SectionData<'_>],
    ) -> Result<(), Error> {
        // What can be checked before compressing is checked now, on the caller's thread.
        self.check_sections(sections)?;
        let next = self
            .next_record
            .checked_add(record_count)
            .ok_or_else(|| Error::invalid("record count overflows 64 bits".to_string()))?;
        self.next_record = next;
        self.block_threads
            .push(std::mem::take(&mut self.next_threads));
        let Some(pool) = self.pool.as_mut() else {
            let compressed =
                compress_longest_first(sections, &mut self.compressor).map_err(|source| {
                    Error::Io {
                        offset: self.out.pos,
                        source,
                    }
                });
            // The caller now prepares the next block: the context is freed meanwhile, as
            // the workers free theirs (see `Compressor::idle`).
            self.compressor.idle();
            let compressed = compressed?;
            return self.put_block(record_count, compressed);
        };
        // Sections compressed ahead are taken from the pool; the others are submitted now.
        let merge = match self.ahead.take() {
            None => None,
            Some(ahead) => Some(merge_with_ahead(&ahead, sections)?),
        };
        let owned = match &merge {
            None => owned_sections(sections),
            Some(m) => {
                let rest: Vec<SectionData<'_>> = sections
                    .iter()
                    .zip(&m.order)
                    .filter(|(_, (ahead, _))| !ahead)
                    .map(|(s, _)| *s)
                    .collect();
                owned_sections(&rest)
            }
        };
        let seq = self.submitted;
        pool.submit(seq, owned).map_err(|source| Error::Io {
            offset: self.out.pos,
            source,
        })?;
        self.submitted += 1;
        self.waiting.push_back(Waiting {
            seq,
            record_count,
            merge,
        });
        // Bound the blocks in flight, and so the memory they hold: one per thread, while the
        // caller prepares the next.
        while self.waiting.len() > self.threads {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Waits for the oldest block in the pool and writes it.
    fn write_oldest(&mut self) -> Result<(), Error> {
        let Some(Waiting {
            seq,
            record_count,
            merge,
        }) = self.waiting.pop_front()
        else {
            return Ok(());
        };
        let offset = self.out.pos;
        let io = |source| Error::Io { offset, source };
        let Some(pool) = self.pool.as_mut() else {
            return Err(io(std::io::Error::other("no compression pool")));
        };
        let compressed = pool.take(seq).map_err(io)?;
        let compressed = match merge {
            None => compressed,
            Some(m) => {
                let ahead = pool.take(m.ahead_seq).map_err(io)?;
                merged(m, ahead, compressed)?
            }
        };
        self.put_block(record_count, compressed)
    }

    /// Writes a compressed block at the current position.
    fn put_block(&mut self, record_count: u64, compressed: Vec<Compressed>) -> Result<(), Error> {
        let offset = self.out.pos;
        let first_record = self
            .entries
            .last()
            .map_or(0, |e| e.first_record + e.record_count);
        let mut descriptors = Vec::with_capacity(compressed.len());
        for c in &compressed {
            check_descriptor(&c.descriptor, offset).map_err(|e| Error::invalid(e.to_string()))?;
            descriptors.push(c.descriptor);
        }
        let header = BlockHeader {
            index: self.entries.len() as u64,
            first_record,
            record_count,
            sections: descriptors,
        };
        let encoded = header.encode();
        // A block over the budget the reader checks is refused now, so that no block is written
        // that cannot be read back.
        let end = compressed
            .iter()
            .fold(offset + encoded.len() as u64, |end, c| {
                end + c.stored.len() as u64
            });
        check_budget(&header, offset, end).map_err(|e| Error::invalid(e.to_string()))?;
        self.out.put(&encoded)?;
        for c in &compressed {
            self.out.put(&c.stored)?;
        }
        self.entries.push(IndexEntry {
            offset,
            first_record,
            record_count,
        });
        let small = self.out.pos <= super::compact::COMPACT_MAX;
        if !(self.compact && self.entries.len() == 1 && small) {
            self.out.release()?;
        }
        Ok(())
    }

    /// Writes the index and the trailer, flushes, and hands back the output.
    pub fn finish(mut self) -> Result<W, Error> {
        while !self.waiting.is_empty() {
            self.write_oldest()?;
        }
        self.pool = None;
        let index_offset = self.out.pos;
        let threads = self.any_threads.then_some(self.block_threads.as_slice());
        self.out.put(&encode_index(&self.entries, threads))?;
        let trailer = Trailer { index_offset };
        self.out.put(&trailer.encode())?;
        if let Some(full) = self.out.held.take() {
            let bytes = if self.compact {
                super::compact::compact(&full).unwrap_or(full)
            } else {
                full
            };
            self.out
                .inner
                .write_all(&bytes)
                .map_err(|source| Error::Io { offset: 0, source })?;
        }
        let pos = self.out.pos;
        self.out.inner.flush().map_err(|source| Error::Io {
            offset: pos,
            source,
        })?;
        Ok(self.out.inner)
    }
}
/// Copies of `sections`' bytes for the pool, so the caller can reuse its buffers while a
/// worker compresses.
fn owned_sections(sections: &[SectionData<'_>]) -> Vec<OwnedSection> {
    sections
        .iter()
        .map(|s| OwnedSection {
            number: s.number,
            element_width: s.element_width,
            codec: s.codec,
            level: s.level,
            bytes: s.bytes.to_vec(),
        })
        .collect()
}

/// Where each of a block's `sections` comes from, given the sections compressed `ahead`:
/// an error unless each of those is among them with the same codec and level.
fn merge_with_ahead(ahead: &Ahead, sections: &[SectionData<'_>]) -> Result<Merge, Error> {
    let mut order = Vec::with_capacity(sections.len());
    let mut expected = vec![None; ahead.sections.len()];
    let mut rest = 0;
    for s in sections {
        match ahead.sections.iter().position(|&(n, ..)| n == s.number) {
            Some(i) => {
                let (_, codec, level) = ahead.sections[i];
                if (codec, level) != (s.codec, s.level) {
                    return Err(Error::invalid(format!(
                        "section {} was compressed ahead with another codec or level",
                        s.number
                    )));
                }
                expected[i] = Some((s.bytes.len() as u64, crc(s.bytes)));
                order.push((true, i));
            }
            None => {
                order.push((false, rest));
                rest += 1;
            }
        }
    }
    let expected = expected
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            Error::invalid("a section compressed ahead is not in the block".to_string())
        })?;
    Ok(Merge {
        ahead_seq: ahead.seq,
        order,
        expected,
    })
}

/// A block's compressed sections in their order, from those compressed ahead and the
/// `rest`; an error if a section compressed ahead was made from other bytes than the
/// block's.
fn merged(
    m: Merge,
    ahead: Vec<Compressed>,
    rest: Vec<Compressed>,
) -> Result<Vec<Compressed>, Error> {
    let mut ahead: Vec<Option<Compressed>> = ahead.into_iter().map(Some).collect();
    let mut rest: Vec<Option<Compressed>> = rest.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(m.order.len());
    for (is_ahead, i) in m.order {
        let taken = if is_ahead {
            let c = ahead.get_mut(i).and_then(Option::take);
            let (len, crc) = m.expected.get(i).copied().unwrap_or_default();
            let same = |c: &Compressed| {
                c.descriptor.uncompressed_len == len && c.descriptor.uncompressed_crc == crc
            };
            if !c.as_ref().is_some_and(same) {
                return Err(Error::invalid(
                    "a section compressed ahead differs from the block's".to_string(),
                ));
            }
            c
        } else {
            rest.get_mut(i).and_then(Option::take)
        };
        out.push(taken.ok_or_else(|| Error::invalid("a section went missing".to_string()))?);
    }
    Ok(out)
}
