//! Blocks: a checksummed block header followed by the bytes of each section.

use serde::Serialize;

use super::codec::Codec;
use super::framing::{crc, Fields, PutLe};
use super::{BLOCK_MAGIC, MAX_SECTIONS_PER_BLOCK, MAX_SECTION_BYTES};
use crate::error::Error;

/// Size of the fixed part of a block header, before the section descriptors.
pub(crate) const BLOCK_FIXED: usize = 30;
/// Size of one section descriptor in a block header.
pub(crate) const DESCRIPTOR: usize = 28;

/// One section of a block, as handed to [`super::ContainerWriter::write_block`].
#[derive(Debug, Clone, Copy)]
pub struct SectionData<'a> {
    /// The section's number (0–255; the universal codec puts the record stream in section 0).
    pub number: u8,
    /// Width in bytes of the section's elements, or 0 for a plain byte stream. When non-zero
    /// the section's length must be a multiple of it.
    pub element_width: u8,
    /// How the bytes are compressed in the file.
    pub codec: Codec,
    /// Compression level (gzip 0–9; zstd as the zstd library takes it). Not stored.
    pub level: i32,
    /// The uncompressed bytes.
    pub bytes: &'a [u8],
}

/// One block read back from a container, all sections decompressed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The block's number, counting from 0.
    pub index: u64,
    /// Number of the block's first record in the whole trace.
    pub first_record: u64,
    /// Records in the block.
    pub record_count: u64,
    /// Byte offset of the block's header in the file.
    pub offset: u64,
    /// The block's sections in the order they were written.
    pub sections: Vec<DecodedSection>,
}

impl Block {
    /// The section with the given number, if the block has one.
    pub fn section(&self, number: u8) -> Option<&DecodedSection> {
        self.sections.iter().find(|s| s.number == number)
    }
}

/// The decompressed bytes of one section of a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedSection {
    /// The section's number.
    pub number: u8,
    /// Width of the section's elements, 0 for a byte stream.
    pub element_width: u8,
    /// The uncompressed bytes.
    pub bytes: Vec<u8>,
}

/// A section descriptor as stored in a block header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SectionDescriptor {
    /// Section number.
    pub number: u8,
    /// Element width, 0 for a byte stream.
    pub element_width: u8,
    /// Compression codec.
    pub codec: Codec,
    /// Length after decompression.
    pub uncompressed_len: u64,
    /// Length in the file.
    pub stored_len: u64,
    /// CRC-32 of the stored (compressed) bytes.
    pub stored_crc: u32,
    /// CRC-32 of the uncompressed bytes.
    pub uncompressed_crc: u32,
}

/// The fixed fields of a block header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlockHeader {
    pub(crate) index: u64,
    pub(crate) first_record: u64,
    pub(crate) record_count: u64,
    pub(crate) sections: Vec<SectionDescriptor>,
}

impl BlockHeader {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(BLOCK_FIXED + DESCRIPTOR * self.sections.len() + 4);
        out.extend_from_slice(&BLOCK_MAGIC);
        out.put_u64(self.index);
        out.put_u64(self.first_record);
        out.put_u64(self.record_count);
        out.put_u16(self.sections.len() as u16);
        for d in &self.sections {
            out.extend_from_slice(&[d.number, d.element_width, d.codec.code(), 0]);
            out.put_u64(d.uncompressed_len);
            out.put_u64(d.stored_len);
            out.put_u32(d.stored_crc);
            out.put_u32(d.uncompressed_crc);
        }
        let c = crc(&out);
        out.put_u32(c);
        out
    }

    /// Parses the fixed part (magic already checked) and the descriptors; `bytes` excludes the
    /// trailing CRC, which the caller has verified. `offset` is the block's file offset.
    pub(crate) fn decode(bytes: &[u8], offset: u64) -> Result<BlockHeader, Error> {
        let mut f = Fields::new(bytes, offset, "block header");
        f.take(4)?;
        let index = f.u64()?;
        let first_record = f.u64()?;
        let record_count = f.u64()?;
        let n = f.u16()? as usize;
        let mut sections = Vec::with_capacity(n);
        for _ in 0..n {
            let at = f.offset();
            let number = f.u8()?;
            let element_width = f.u8()?;
            let code = f.u8()?;
            let reserved = f.u8()?;
            let codec = Codec::from_code(code).ok_or_else(|| Error::Corrupt {
                offset: at + 2,
                message: format!("unknown codec byte {code} for section {number}"),
            })?;
            if reserved != 0 {
                return Err(Error::Corrupt {
                    offset: at + 3,
                    message: format!("reserved byte of section {number} is {reserved}, not 0"),
                });
            }
            let d = SectionDescriptor {
                number,
                element_width,
                codec,
                uncompressed_len: f.u64()?,
                stored_len: f.u64()?,
                stored_crc: f.u32()?,
                uncompressed_crc: f.u32()?,
            };
            check_descriptor(&d, at)?;
            if sections
                .iter()
                .any(|s: &SectionDescriptor| s.number == number)
            {
                return Err(Error::Corrupt {
                    offset: at,
                    message: format!("section {number} appears twice in one block"),
                });
            }
            sections.push(d);
        }
        Ok(BlockHeader {
            index,
            first_record,
            record_count,
            sections,
        })
    }
}

/// The limits every descriptor obeys, checked by the writer and again by the reader.
pub(crate) fn check_descriptor(d: &SectionDescriptor, offset: u64) -> Result<(), Error> {
    for (what, length) in [
        ("uncompressed section", d.uncompressed_len),
        ("stored section", d.stored_len),
    ] {
        if length > MAX_SECTION_BYTES {
            return Err(Error::TooLarge {
                offset,
                what,
                length,
                limit: MAX_SECTION_BYTES,
            });
        }
    }
    if d.codec == Codec::None && d.stored_len != d.uncompressed_len {
        return Err(Error::Corrupt {
            offset,
            message: format!(
                "section {} is stored uncompressed but its lengths differ ({} vs {})",
                d.number, d.stored_len, d.uncompressed_len
            ),
        });
    }
    if d.element_width != 0
        && !d
            .uncompressed_len
            .is_multiple_of(u64::from(d.element_width))
    {
        return Err(Error::Corrupt {
            offset,
            message: format!(
                "section {} has {} bytes, not a whole number of {}-byte elements",
                d.number, d.uncompressed_len, d.element_width
            ),
        });
    }
    Ok(())
}

/// Largest block header the reader accepts: every descriptor present.
pub(crate) const MAX_BLOCK_HEADER: usize = BLOCK_FIXED + DESCRIPTOR * MAX_SECTIONS_PER_BLOCK;
