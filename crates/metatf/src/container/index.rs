//! The index written after the last block, and the fixed-size trailer that points to it.
//!
//! The index lets a reader seek to any block; the trailer, always the last 32 bytes, lets it
//! find the index without scanning. Sequential readers only verify them.

use super::framing::{crc, PutLe};
use super::{END_MAGIC, INDEX_MAGIC};

/// One index entry: where a block starts and which records it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IndexEntry {
    /// Byte offset of the block header.
    pub offset: u64,
    /// Number of the block's first record.
    pub first_record: u64,
    /// Records in the block.
    pub record_count: u64,
}

/// Size of one serialised [`IndexEntry`].
pub(crate) const ENTRY: usize = 24;
/// Size of the trailer.
pub const TRAILER_LEN: usize = 32;

impl IndexEntry {
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.offset);
        out.put_u64(self.first_record);
        out.put_u64(self.record_count);
    }
}

/// Serialises the index: magic, count, entries, CRC.
pub(crate) fn encode_index(entries: &[IndexEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + ENTRY * entries.len() + 4);
    out.extend_from_slice(&INDEX_MAGIC);
    out.put_u64(entries.len() as u64);
    for e in entries {
        e.encode(&mut out);
    }
    let c = crc(&out);
    out.put_u32(c);
    out
}

/// The trailer's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Trailer {
    /// Byte offset of the index.
    pub index_offset: u64,
    /// Number of blocks.
    pub block_count: u64,
    /// Number of records in all blocks.
    pub total_records: u64,
}

impl Trailer {
    pub(crate) fn encode(&self) -> [u8; TRAILER_LEN] {
        let mut out = Vec::with_capacity(TRAILER_LEN);
        out.put_u64(self.index_offset);
        out.put_u64(self.block_count);
        out.put_u64(self.total_records);
        let c = crc(&out);
        out.put_u32(c);
        out.extend_from_slice(&END_MAGIC);
        let mut a = [0u8; TRAILER_LEN];
        a.copy_from_slice(&out);
        a
    }

    /// Parses a trailer; `None` when the end magic or the CRC is wrong.
    pub fn decode(bytes: &[u8; TRAILER_LEN]) -> Option<Trailer> {
        if bytes[28..] != END_MAGIC {
            return None;
        }
        let stored = u32::from_le_bytes([bytes[24], bytes[25], bytes[26], bytes[27]]);
        if crc(&bytes[..24]) != stored {
            return None;
        }
        let word = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(a)
        };
        Some(Trailer {
            index_offset: word(0),
            block_count: word(8),
            total_records: word(16),
        })
    }
}
