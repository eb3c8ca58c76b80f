//! Blocks: a checksummed block header followed by the bytes of each section.

use std::io::Read;

use serde::Serialize;

use super::codec::Codec;
use super::framing::{crc, Fields, Positioned, PutLe, MAX_VARINT};
use super::{BLOCK_MAGIC, MAX_SECTIONS_PER_BLOCK, MAX_SECTION_BYTES};
use crate::error::Error;

/// Longest possible block header: marker, three varints, the section count, every section
/// described with the longest varints, and the CRC. Bounds what a reader buffers.
pub(crate) const MAX_BLOCK_HEADER: usize =
    4 + 3 * MAX_VARINT + 2 + MAX_SECTIONS_PER_BLOCK * (3 + 2 * MAX_VARINT + 8) + 4;

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
    /// Serialises the header, marker to CRC inclusive.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + 24 * self.sections.len());
        out.extend_from_slice(&BLOCK_MAGIC);
        out.put_varint(self.index);
        out.put_varint(self.first_record);
        out.put_varint(self.record_count);
        out.put_varint(self.sections.len() as u64);
        for d in &self.sections {
            out.extend_from_slice(&[d.number, d.element_width, d.codec.code()]);
            out.put_varint(d.uncompressed_len);
            // An uncompressed section's stored bytes are its bytes: one length, one CRC.
            if d.codec != Codec::None {
                out.put_varint(d.stored_len);
                out.put_u32(d.stored_crc);
            }
            out.put_u32(d.uncompressed_crc);
        }
        let c = crc(&out);
        out.put_u32(c);
        out
    }

    /// Reads a block header whose marker (at file offset `offset`) has been read, checking its
    /// CRC before interpreting anything but the lengths needed to find it.
    pub(crate) fn read<R: Read>(
        input: &mut Positioned<R>,
        offset: u64,
    ) -> Result<BlockHeader, Error> {
        let mut raw = Vec::with_capacity(64);
        raw.extend_from_slice(&BLOCK_MAGIC);
        let what = "block header";
        let index = input.varint_into(&mut raw, what)?;
        let first_record = input.varint_into(&mut raw, what)?;
        let record_count = input.varint_into(&mut raw, what)?;
        let count_at = input.pos;
        let n = input.varint_into(&mut raw, what)?;
        if n > MAX_SECTIONS_PER_BLOCK as u64 {
            return Err(Error::Corrupt {
                offset: count_at,
                message: format!(
                    "block claims {n} sections; at most {MAX_SECTIONS_PER_BLOCK} exist"
                ),
            });
        }
        let mut places = Vec::with_capacity(n as usize);
        for _ in 0..n {
            places.push(input.pos);
            let mut fixed = [0u8; 3];
            input.exact(&mut fixed, what)?;
            raw.extend_from_slice(&fixed);
            let codec = Codec::from_code(fixed[2]).ok_or_else(|| Error::Corrupt {
                offset: input.pos - 1,
                message: format!("unknown codec byte {} for section {}", fixed[2], fixed[0]),
            })?;
            input.varint_into(&mut raw, what)?;
            let mut rest = [0u8; 4];
            if codec != Codec::None {
                input.varint_into(&mut raw, what)?;
                input.exact(&mut rest, what)?;
                raw.extend_from_slice(&rest);
            }
            input.exact(&mut rest, what)?;
            raw.extend_from_slice(&rest);
        }
        let mut stored = [0u8; 4];
        input.exact(&mut stored, "block header checksum")?;
        let stored = u32::from_le_bytes(stored);
        let computed = crc(&raw);
        if stored != computed {
            return Err(Error::Checksum {
                offset,
                what: "block header",
                stored,
                computed,
            });
        }
        let mut f = Fields::new(&raw, offset, what);
        f.take(4)?;
        for _ in 0..4 {
            f.varint()?;
        }
        let mut sections: Vec<SectionDescriptor> = Vec::with_capacity(n as usize);
        for at in places {
            let number = f.u8()?;
            let element_width = f.u8()?;
            let codec = Codec::from_code(f.u8()?).unwrap_or(Codec::None);
            let uncompressed_len = f.varint()?;
            let (stored_len, stored_crc) = if codec == Codec::None {
                (uncompressed_len, None)
            } else {
                (f.varint()?, Some(f.u32()?))
            };
            let uncompressed_crc = f.u32()?;
            let d = SectionDescriptor {
                number,
                element_width,
                codec,
                uncompressed_len,
                stored_len,
                stored_crc: stored_crc.unwrap_or(uncompressed_crc),
                uncompressed_crc,
            };
            check_descriptor(&d, at)?;
            if sections.iter().any(|s| s.number == number) {
                return Err(Error::Corrupt {
                    offset: at,
                    message: format!("section {number} appears twice in one block"),
                });
            }
            sections.push(d);
        }
        debug_assert!(raw.len() <= MAX_BLOCK_HEADER);
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
