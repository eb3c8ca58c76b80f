//! The packed form of a modelled block's tables (docs/FORMAT.md §7, "Block layout"): the tag
//! context, model table and order table coded together by the container's context mixer
//! (codec 3) instead of written as plain varints.
//!
//! Why: the tables are the same few small numbers over and over (scope 0, a record's tag, a
//! field position, property 8, predictor codes naming fields of the same record), and a short
//! trace of many fields pays for them in full, where they can outweigh the coded records. The
//! mixer learns from the first byte, so it packs such repetitive small numbers well even in a
//! block of a few hundred bytes; long traces gain the same per block. The plain form stays
//! readable and is still written when packing would not make the block shorter.

use crate::container::context_mix::v2;
use crate::container::PutLe;

/// First byte of a block whose tables are packed. The plain form starts with the tag context's
/// order, at most [`super::tags::MAX_TAG_ORDER`], so no plain block starts with it.
pub(crate) const PACKED: u8 = 0xFF;

/// The most bytes of plain tables a packed block may hold (1 MiB). A writer packs nothing
/// longer; a reader refuses a longer claim before decoding, which bounds the time and memory a
/// hostile block can cost. Real tables take a few hundred bytes per block.
pub(crate) const MAX_PACKED_TABLES: u64 = 1 << 20;

/// The block's bytes from its plain `tables` and its range-coded `records`: the packed form
/// when it is shorter, else the plain one.
pub(crate) fn join(tables: Vec<u8>, records: &[u8]) -> Vec<u8> {
    let mut out = tables;
    if (out.len() as u64) <= MAX_PACKED_TABLES && !out.is_empty() {
        let coded = v2::encode(&out, v2::CODEC_TABLE_BITS);
        let mut packed = vec![PACKED];
        packed.put_varint(out.len() as u64);
        packed.put_varint(coded.len() as u64);
        packed.extend_from_slice(&coded);
        if packed.len() < out.len() {
            out = packed;
        }
    }
    out.extend_from_slice(records);
    out
}

/// The plain tables of a block and the offset of its range-coded records: the tables are
/// `bytes` itself (read from offset 0, the records starting where the tables end) unless the
/// block is packed, when they are decoded and must then be read to their end exactly
/// ([`Tables::check_end`]).
pub(crate) fn split(bytes: &[u8]) -> Result<Tables<'_>, String> {
    if bytes.first() != Some(&PACKED) {
        return Ok(Tables {
            plain: std::borrow::Cow::Borrowed(bytes),
            records: None,
        });
    }
    let mut at = 1;
    let end = || "packed model tables are cut short".to_string();
    let len = crate::varint::take(bytes, &mut at).ok_or_else(end)?;
    let coded_len = crate::varint::take(bytes, &mut at).ok_or_else(end)?;
    if len == 0 || len > MAX_PACKED_TABLES {
        return Err(format!(
            "packed model tables claim {len} bytes; 1 to {MAX_PACKED_TABLES} are allowed"
        ));
    }
    let coded = usize::try_from(coded_len)
        .ok()
        .and_then(|n| bytes.get(at..at.checked_add(n)?))
        .ok_or_else(end)?;
    if !v2::plausible_length(coded.len(), len) {
        return Err(format!(
            "packed model tables of {} bytes claim {len} bytes",
            coded.len()
        ));
    }
    let plain = v2::decode(coded, len, v2::CODEC_TABLE_BITS)?;
    Ok(Tables {
        plain: std::borrow::Cow::Owned(plain),
        records: Some(at + coded.len()),
    })
}

/// A block's plain tables, and where its records start when the tables were packed.
pub(crate) struct Tables<'a> {
    /// The plain tables (for a plain block, the whole block: the records follow the tables).
    pub(crate) plain: std::borrow::Cow<'a, [u8]>,
    records: Option<usize>,
}

impl Tables<'_> {
    /// The offset in the block of its range-coded records, once the tables were read up to
    /// `read`: for a packed block, an error unless `read` is the end of the plain tables.
    pub(crate) fn check_end(&self, read: usize) -> Result<usize, String> {
        match self.records {
            None => Ok(read),
            Some(_) if read != self.plain.len() => Err(format!(
                "packed model tables hold {} bytes; the tables end at byte {read}",
                self.plain.len()
            )),
            Some(start) => Ok(start),
        }
    }
}

/// The plain form of a block: its tables as items 1–3 then its records, whether it was
/// written packed or not (for tests that read or replace the tables in place).
#[cfg(test)]
pub(crate) fn unpacked(block: &[u8]) -> Vec<u8> {
    let tables = split(block).expect("a block's tables");
    match tables.records {
        None => block.to_vec(),
        Some(start) => {
            let mut plain = tables.plain.to_vec();
            plain.extend_from_slice(&block[start..]);
            plain
        }
    }
}
