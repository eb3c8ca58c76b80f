//! Streaming container reader: one block at a time, every checksum verified.

use std::io::Read;

use super::block::{
    Block, BlockHeader, DecodedSection, SectionDescriptor, BLOCK_FIXED, DESCRIPTOR,
    MAX_BLOCK_HEADER,
};
use super::codec::{decompress, DecompressError};
use super::framing::{crc, Positioned};
use super::header::ContainerHeader;
use super::index::{IndexEntry, Trailer, ENTRY, TRAILER_LEN};
use super::{BLOCK_MAGIC, INDEX_MAGIC, MAX_SECTIONS_PER_BLOCK};
use crate::error::Error;

/// Reads a container from any [`Read`], in order, holding one block at a time.
pub struct ContainerReader<R: Read> {
    input: Positioned<R>,
    header: ContainerHeader,
    /// Blocks returned so far.
    blocks: u64,
    /// Records in the blocks returned so far.
    records: u64,
    /// CRC-32 of the index entries the blocks seen so far imply; compared with the stored
    /// index at the end so that checking it needs no per-block memory.
    expected_index: crc32fast::Hasher,
    finished: bool,
    /// Descriptors of the block returned last, for inspection.
    last: Vec<SectionDescriptor>,
}

impl<R: Read> ContainerReader<R> {
    /// Reads and checks the header.
    pub fn new(r: R) -> Result<Self, Error> {
        let mut input = Positioned::new(r);
        let header = ContainerHeader::decode(&mut input)?;
        Ok(ContainerReader {
            input,
            header,
            blocks: 0,
            records: 0,
            expected_index: crc32fast::Hasher::new(),
            finished: false,
            last: Vec::new(),
        })
    }

    /// The container's header.
    pub fn header(&self) -> &ContainerHeader {
        &self.header
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> u64 {
        self.input.pos
    }

    /// Records in the blocks returned so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// The section descriptors (codec, stored and uncompressed sizes, checksums) of the block
    /// [`Self::next_block`] returned last.
    pub fn last_descriptors(&self) -> &[SectionDescriptor] {
        &self.last
    }

    /// The next block, or `Ok(None)` once the index and trailer have been read and checked.
    /// A file cut short yields every complete block, then a [`Error::Truncated`].
    pub fn next_block(&mut self) -> Result<Option<Block>, Error> {
        if self.finished {
            return Ok(None);
        }
        let offset = self.input.pos;
        let mut magic = [0u8; 4];
        self.input.exact(&mut magic, "block or index marker")?;
        if magic == INDEX_MAGIC {
            self.read_index(offset)?;
            self.finished = true;
            return Ok(None);
        }
        if magic != BLOCK_MAGIC {
            return Err(Error::BadMagic {
                offset,
                expected: "a block marker \"MTFB\" or the index marker \"MTFI\"",
                found: magic.to_vec(),
            });
        }
        let header = self.read_block_header(offset, magic)?;
        let mut sections = Vec::with_capacity(header.sections.len());
        for d in &header.sections {
            let at = self.input.pos;
            let stored = self.input.bytes(d.stored_len, "section data")?;
            let computed = crc(&stored);
            if computed != d.stored_crc {
                return Err(Error::Checksum {
                    offset: at,
                    what: "stored section bytes",
                    stored: d.stored_crc,
                    computed,
                });
            }
            let bytes = decompress(d.codec, stored, d.uncompressed_len).map_err(|e| {
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
        let mut entry = Vec::with_capacity(ENTRY);
        IndexEntry {
            offset,
            first_record: header.first_record,
            record_count: header.record_count,
        }
        .encode(&mut entry);
        self.expected_index.update(&entry);
        self.blocks += 1;
        self.records += header.record_count;
        self.last = header.sections;
        Ok(Some(Block {
            index: header.index,
            first_record: header.first_record,
            record_count: header.record_count,
            offset,
            sections,
        }))
    }

    fn read_block_header(&mut self, offset: u64, magic: [u8; 4]) -> Result<BlockHeader, Error> {
        let mut bytes = Vec::with_capacity(BLOCK_FIXED + 4);
        bytes.extend_from_slice(&magic);
        bytes.resize(BLOCK_FIXED, 0);
        self.input.exact(&mut bytes[4..], "block header")?;
        let n = u16::from_le_bytes([bytes[28], bytes[29]]) as usize;
        if n > MAX_SECTIONS_PER_BLOCK {
            return Err(Error::Corrupt {
                offset: offset + 28,
                message: format!(
                    "block claims {n} sections; at most {MAX_SECTIONS_PER_BLOCK} exist"
                ),
            });
        }
        let len = BLOCK_FIXED + DESCRIPTOR * n;
        debug_assert!(len <= MAX_BLOCK_HEADER);
        bytes.resize(len + 4, 0);
        self.input
            .exact(&mut bytes[BLOCK_FIXED..], "block header")?;
        let stored =
            u32::from_le_bytes([bytes[len], bytes[len + 1], bytes[len + 2], bytes[len + 3]]);
        let computed = crc(&bytes[..len]);
        if stored != computed {
            return Err(Error::Checksum {
                offset,
                what: "block header",
                stored,
                computed,
            });
        }
        let header = BlockHeader::decode(&bytes[..len], offset)?;
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
        Ok(header)
    }

    fn read_index(&mut self, offset: u64) -> Result<(), Error> {
        let mut count = [0u8; 8];
        self.input.exact(&mut count, "index")?;
        let count = u64::from_le_bytes(count);
        if count != self.blocks {
            return Err(Error::Corrupt {
                offset: offset + 4,
                message: format!(
                    "the index lists {count} blocks but {} were read",
                    self.blocks
                ),
            });
        }
        let mut index_crc = crc32fast::Hasher::new();
        index_crc.update(&INDEX_MAGIC);
        index_crc.update(&count.to_le_bytes());
        let mut entries = crc32fast::Hasher::new();
        let mut entry = [0u8; ENTRY];
        for _ in 0..count {
            self.input.exact(&mut entry, "index")?;
            index_crc.update(&entry);
            entries.update(&entry);
        }
        let mut stored = [0u8; 4];
        self.input.exact(&mut stored, "index checksum")?;
        let stored = u32::from_le_bytes(stored);
        let computed = index_crc.finalize();
        if stored != computed {
            return Err(Error::Checksum {
                offset,
                what: "index",
                stored,
                computed,
            });
        }
        if entries.finalize() != std::mem::take(&mut self.expected_index).finalize() {
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
            block_count: self.blocks,
            total_records: self.records,
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
