//! Streaming container writer: header first, then one block per call, then index and trailer.

use std::io::Write;

use super::block::{check_descriptor, BlockHeader, SectionData, SectionDescriptor};
use super::codec::compress;
use super::framing::{crc, Counted};
use super::header::ContainerHeader;
use super::index::{encode_index, IndexEntry, Trailer};
use super::MAX_SECTIONS_PER_BLOCK;
use crate::error::Error;

/// Writes a container to any [`Write`]; needs no seeking and knows no counts in advance.
///
/// Memory: the current block's compressed sections, plus one 24-byte index entry per block
/// written so far (the index is written at the end).
pub struct ContainerWriter<W: Write> {
    out: Counted<W>,
    entries: Vec<IndexEntry>,
    next_record: u64,
}

impl<W: Write> ContainerWriter<W> {
    /// Writes the header and returns a writer ready for blocks.
    pub fn new(out: W, header: &ContainerHeader) -> Result<Self, Error> {
        let bytes = header.encode()?;
        let mut out = Counted { inner: out, pos: 0 };
        out.put(&bytes)?;
        Ok(ContainerWriter {
            out,
            entries: Vec::new(),
            next_record: 0,
        })
    }

    /// Byte offset the next block will start at.
    pub fn position(&self) -> u64 {
        self.out.pos
    }

    /// Records written so far.
    pub fn records_written(&self) -> u64 {
        self.next_record
    }

    /// Compresses and writes one block holding `record_count` records. Section numbers must be
    /// distinct within the block; each section is at most 1 GiB.
    pub fn write_block(
        &mut self,
        record_count: u64,
        sections: &[SectionData<'_>],
    ) -> Result<(), Error> {
        if sections.len() > MAX_SECTIONS_PER_BLOCK {
            return Err(Error::invalid(format!(
                "a block holds at most {MAX_SECTIONS_PER_BLOCK} sections, not {}",
                sections.len()
            )));
        }
        let offset = self.out.pos;
        let mut descriptors = Vec::with_capacity(sections.len());
        let mut payloads = Vec::with_capacity(sections.len());
        for (i, s) in sections.iter().enumerate() {
            if sections[..i].iter().any(|t| t.number == s.number) {
                return Err(Error::invalid(format!(
                    "section {} given twice in one block",
                    s.number
                )));
            }
            let stored = compress(s.codec, s.level, s.bytes)
                .map_err(|source| Error::Io { offset, source })?;
            let d = SectionDescriptor {
                number: s.number,
                element_width: s.element_width,
                codec: s.codec,
                uncompressed_len: s.bytes.len() as u64,
                stored_len: stored.len() as u64,
                stored_crc: crc(&stored),
                uncompressed_crc: crc(s.bytes),
            };
            check_descriptor(&d, offset).map_err(|e| Error::invalid(e.to_string()))?;
            descriptors.push(d);
            payloads.push(stored);
        }
        let first_record = self.next_record;
        let next = first_record
            .checked_add(record_count)
            .ok_or_else(|| Error::invalid("record count overflows 64 bits".to_string()))?;
        let header = BlockHeader {
            index: self.entries.len() as u64,
            first_record,
            record_count,
            sections: descriptors,
        };
        self.out.put(&header.encode())?;
        for p in &payloads {
            self.out.put(p)?;
        }
        self.entries.push(IndexEntry {
            offset,
            first_record,
            record_count,
        });
        self.next_record = next;
        Ok(())
    }

    /// Writes the index and the trailer, flushes, and hands back the output.
    pub fn finish(mut self) -> Result<W, Error> {
        let index_offset = self.out.pos;
        self.out.put(&encode_index(&self.entries))?;
        let trailer = Trailer {
            index_offset,
            block_count: self.entries.len() as u64,
            total_records: self.next_record,
        };
        self.out.put(&trailer.encode())?;
        let pos = self.out.pos;
        self.out.inner.flush().map_err(|source| Error::Io {
            offset: pos,
            source,
        })?;
        Ok(self.out.inner)
    }
}
