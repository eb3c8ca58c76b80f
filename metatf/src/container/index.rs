//! The index written after the last block, and the fixed-size trailer that points to it.
//!
//! The index lets a reader seek to any block; the trailer, always the last
//! [`TRAILER_LEN`] bytes, lets it find the index without scanning. Sequential readers only
//! verify them. Entries are varints relative to the previous entry, so a one-block file pays
//! a few bytes for its index, not dozens.

use std::io::{Read, Seek, SeekFrom};

use super::framing::{crc, Fields, PutLe};
use super::{END_MAGIC, INDEX_MAGIC, INDEX_THREADS_MAGIC, MAX_BLOCK_THREADS};
use crate::error::Error;

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

/// Size of the trailer.
pub const TRAILER_LEN: usize = 16;

/// Appends the serialised form of `entry`, which follows a block starting at `previous_offset`
/// (0 for the first block).
pub(crate) fn encode_entry(entry: &IndexEntry, previous_offset: u64, out: &mut Vec<u8>) {
    out.put_varint(entry.offset - previous_offset);
    out.put_varint(entry.record_count);
}

/// Appends one block's thread list: its length, the smallest id, then each id minus the one
/// before (`threads` ascending and distinct).
pub(crate) fn encode_threads(threads: &[u64], out: &mut Vec<u8>) {
    out.put_varint(threads.len() as u64);
    let mut previous = 0;
    for &t in threads {
        out.put_varint(t - previous);
        previous = t;
    }
}

/// Serialises the index: marker, count, entries, the thread list of each block when `threads`
/// is given (marker `MTFT` instead of `MTFI`), CRC.
pub(crate) fn encode_index(entries: &[IndexEntry], threads: Option<&[Vec<u64>]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + 6 * entries.len());
    out.extend_from_slice(match threads {
        Some(_) => &INDEX_THREADS_MAGIC,
        None => &INDEX_MAGIC,
    });
    out.put_varint(entries.len() as u64);
    let mut previous = 0;
    for e in entries {
        encode_entry(e, previous, &mut out);
        previous = e.offset;
    }
    for list in threads.unwrap_or(&[]) {
        encode_threads(list, &mut out);
    }
    let c = crc(&out);
    out.put_u32(c);
    out
}

/// An index as read: its entries, and each block's thread ids when the file lists them.
pub type ParsedIndex = (Vec<IndexEntry>, Option<Vec<Vec<u64>>>);

/// Parses a whole index (marker to CRC) found at file offset `offset`.
pub(crate) fn decode_index(bytes: &[u8], offset: u64) -> Result<ParsedIndex, Error> {
    let corrupt = |at: u64, message: String| Error::Corrupt {
        offset: at,
        message,
    };
    let with_threads = bytes.starts_with(&INDEX_THREADS_MAGIC);
    if bytes.len() < 9 || !(bytes.starts_with(&INDEX_MAGIC) || with_threads) {
        return Err(corrupt(
            offset,
            "no index marker \"MTFI\" or \"MTFT\" where the trailer points".into(),
        ));
    }
    let (body, stored) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
    let computed = crc(body);
    if stored != computed {
        return Err(Error::Checksum {
            offset,
            what: "index",
            stored,
            computed,
        });
    }
    let mut f = Fields::new(body, offset, "index");
    f.take(4)?;
    let at = f.offset();
    let count = f.varint()?;
    // Every entry takes at least two bytes.
    if count > f.remaining() as u64 / 2 {
        return Err(corrupt(
            at,
            format!("{count} index entries cannot fit in the index"),
        ));
    }
    let mut entries = Vec::with_capacity(count as usize);
    let (mut block_at, mut first_record) = (0u64, 0u64);
    for _ in 0..count {
        let at = f.offset();
        let delta = f.varint()?;
        let record_count = f.varint()?;
        block_at = block_at
            .checked_add(delta)
            .filter(|&o| o < offset)
            .ok_or_else(|| corrupt(at, "an index entry points past the index".into()))?;
        entries.push(IndexEntry {
            offset: block_at,
            first_record,
            record_count,
        });
        first_record = first_record
            .checked_add(record_count)
            .ok_or_else(|| corrupt(at, "record counts overflow 64 bits".into()))?;
    }
    let threads = if with_threads {
        let mut lists = Vec::with_capacity(entries.len());
        for _ in 0..count {
            let at = f.offset();
            let n = f.varint()?;
            // Every id takes at least one byte.
            if n > MAX_BLOCK_THREADS || n > f.remaining() as u64 {
                return Err(corrupt(at, format!("a block cannot list {n} threads here")));
            }
            let mut list = Vec::with_capacity(n as usize);
            let mut id = 0u64;
            for k in 0..n {
                let at = f.offset();
                let step = f.varint()?;
                id = id
                    .checked_add(step)
                    .filter(|_| k == 0 || step > 0)
                    .ok_or_else(|| corrupt(at, "thread ids not ascending".into()))?;
                list.push(id);
            }
            lists.push(list);
        }
        Some(lists)
    } else {
        None
    };
    if f.remaining() != 0 {
        return Err(corrupt(
            f.offset(),
            "unexplained bytes at the end of the index".into(),
        ));
    }
    Ok((entries, threads))
}

/// The trailer's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Trailer {
    /// Byte offset of the index.
    pub index_offset: u64,
}

impl Trailer {
    pub(crate) fn encode(&self) -> [u8; TRAILER_LEN] {
        let mut out = Vec::with_capacity(TRAILER_LEN);
        out.put_u64(self.index_offset);
        let c = crc(&out);
        out.put_u32(c);
        out.extend_from_slice(&END_MAGIC);
        let mut a = [0u8; TRAILER_LEN];
        a.copy_from_slice(&out);
        a
    }

    /// Parses a trailer; `None` when the end marker or the CRC is wrong.
    pub fn decode(bytes: &[u8; TRAILER_LEN]) -> Option<Trailer> {
        if bytes[12..] != END_MAGIC {
            return None;
        }
        let stored = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if crc(&bytes[..8]) != stored {
            return None;
        }
        let mut a = [0u8; 8];
        a.copy_from_slice(&bytes[..8]);
        Some(Trailer {
            index_offset: u64::from_le_bytes(a),
        })
    }
}

/// Reads the trailer and the index of a complete container from its end, without reading any
/// block: what a seeking reader needs to find the blocks holding given records. Fails, with
/// the reason, when the file has no valid trailer or index (a cut or damaged file), in which
/// case the blocks can still be found by reading the file from the start.
pub fn read_index<R: Read + Seek>(r: &mut R) -> Result<Vec<IndexEntry>, Error> {
    read_index_threads(r).map(|(entries, _)| entries)
}

/// Like [`read_index`], and also the thread ids (ascending) of each block, when the writer
/// listed them (formats whose records have threads; see `ContainerWriter::set_block_threads`).
pub fn read_index_threads<R: Read + Seek>(r: &mut R) -> Result<ParsedIndex, Error> {
    let io = |offset: u64| move |source| Error::Io { offset, source };
    let len = r.seek(SeekFrom::End(0)).map_err(io(0))?;
    if len < TRAILER_LEN as u64 {
        return Err(Error::Truncated {
            offset: len,
            what: "trailer",
        });
    }
    let trailer_at = len - TRAILER_LEN as u64;
    let mut t = [0u8; TRAILER_LEN];
    r.seek(SeekFrom::Start(trailer_at))
        .map_err(io(trailer_at))?;
    r.read_exact(&mut t).map_err(io(trailer_at))?;
    let trailer = Trailer::decode(&t).ok_or_else(|| Error::Corrupt {
        offset: trailer_at,
        message: "the trailer's end marker or checksum is wrong".to_string(),
    })?;
    if trailer.index_offset >= trailer_at {
        return Err(Error::Corrupt {
            offset: trailer_at,
            message: format!(
                "the trailer points at byte {} for the index, past its own start",
                trailer.index_offset
            ),
        });
    }
    let index_len = trailer_at - trailer.index_offset;
    let mut bytes = Vec::new();
    r.seek(SeekFrom::Start(trailer.index_offset))
        .map_err(io(trailer.index_offset))?;
    // The length is bounded by the file's size, which is backed by real bytes.
    r.take(index_len)
        .read_to_end(&mut bytes)
        .map_err(io(trailer.index_offset))?;
    decode_index(&bytes, trailer.index_offset)
}
