//! The compact form of a one-block container (container version 3, `docs/FORMAT.md §5`,
//! "Compact form").
//!
//! Why: a short trace models down to a few dozen bytes, and a full container spends about a
//! hundred more on framing (header properties, block header with per-section checksums, index,
//! trailer), which made hatf's output of a 900-byte trace larger than zstd's. A file of one
//! block whose sections are stored (codec none) is written instead as: magic, version `3`, a
//! one-byte header code (a header listed in [`KNOWN_HEADERS`], or the header's bytes), the
//! record count, the sections, and one CRC-32 of everything. It is an exact encoding of the
//! full form: [`expand`] gives back the full container byte for byte, and readers read that.
//!
//! A compact file is read whole (it is at most [`COMPACT_MAX`] bytes) and its checksum is
//! checked before anything in it is used, so a cut or damaged compact file yields no block.

use super::block::{BlockHeader, SectionDescriptor};
use super::codec::Codec;
use super::dtd_storage::{DtdIdentity, DtdStorage};
use super::framing::{crc, Fields, PutLe};
use super::header::ContainerHeader;
use super::index::{encode_index, IndexEntry, Trailer};
use super::reader::ContainerReader;
use super::{MAGIC, VERSION};
use crate::error::Error;

/// The version byte of a compact container.
pub const COMPACT_VERSION: u8 = 3;
/// Largest compact container, in bytes; longer files keep the full form.
pub const COMPACT_MAX: u64 = 64 << 10;

/// Header byte flag: the block has exactly one section, number 0, whose bytes run from here
/// to the checksum; bit [`SINGLE_WIDTH_ONE`] gives its element width.
const SINGLE: u8 = 0x80;
/// Header byte flag, with [`SINGLE`]: the one section's element width is 1 (else 0).
const SINGLE_WIDTH_ONE: u8 = 0x40;
/// Header byte bits holding the header code.
const CODE_MASK: u8 = 0x3f;

/// A container header common enough to be named by a one-byte code in compact files: the
/// header with this format id, these properties in this order, and the DTD stored by
/// reference to this identity (no reserved byte-order or class property, so class `0` and
/// big-endian data).
#[derive(Debug, Clone, Copy)]
pub struct KnownHeader {
    /// The format id.
    pub format: &'static str,
    /// The properties, in order.
    pub properties: &'static [(&'static str, &'static str)],
    /// The DTD's identity (its length and CRC-32).
    pub dtd: DtdIdentity,
}

/// The headers compact files may name by code: entry `k − 1` is code `k`. Codes are never
/// reused or reordered; new ones are appended (a reader that does not know a code refuses the
/// file with an error naming it). Code 1 names a layout this writer does not write (`wee-alloc-cm-3`):
/// it still expands, and the format's reader refuses the layout by name.
pub const KNOWN_HEADERS: &[KnownHeader] = &[
    KnownHeader {
        format: "wee-alloc",
        properties: &[("encoding", "auto"), ("layout", "wee-alloc-cm-3")],
        dtd: DtdIdentity {
            length: 711,
            crc32: 0xf206_7c4a,
        },
    },
    KnownHeader {
        format: "wee-alloc",
        properties: &[("encoding", "auto"), ("layout", "wee-alloc-cm-4")],
        dtd: DtdIdentity {
            length: 711,
            crc32: 0xf206_7c4a,
        },
    },
];

impl KnownHeader {
    /// The full-form bytes of this header, magic to CRC.
    fn encode(&self) -> Result<Vec<u8>, Error> {
        ContainerHeader {
            dtd: String::new(),
            format: self.format.to_string(),
            properties: self
                .properties
                .iter()
                .map(|&(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
        .encode(DtdStorage::Reference, Some(self.dtd))
    }
}

/// True when `head` starts a compact container.
pub fn is_compact(head: &[u8]) -> bool {
    head.len() > 4 && head[..4] == MAGIC && head[4] == COMPACT_VERSION
}

/// The compact form of the full container `full`, or `None` when it has no such form: not
/// exactly one block, a compressed section, thread lists in its index, or a compact form over
/// [`COMPACT_MAX`] bytes. The result expands back to `full` exactly (checked here).
pub fn compact(full: &[u8]) -> Option<Vec<u8>> {
    let mut reader = ContainerReader::new(full).ok()?;
    let header_len = usize::try_from(reader.position()).ok()?;
    let block = reader.next_block().ok()??;
    let descriptors = reader.last_descriptors().to_vec();
    if reader.next_block().ok()?.is_some() || reader.block_threads().is_some() {
        return None;
    }
    if descriptors.iter().any(|d| d.codec != Codec::None) {
        return None;
    }
    let header = &full[..header_len];
    let code = KNOWN_HEADERS
        .iter()
        .position(|k| k.encode().is_ok_and(|bytes| bytes == header))
        .map_or(0, |i| i + 1);
    let code = u8::try_from(code).ok().filter(|&c| c <= CODE_MASK)?;
    let mut out = Vec::with_capacity(full.len());
    out.extend_from_slice(&MAGIC);
    out.push(COMPACT_VERSION);
    let single = match block.sections.as_slice() {
        [s] if s.number == 0 && s.element_width <= 1 => Some(s.element_width),
        _ => None,
    };
    out.push(match single {
        Some(1) => code | SINGLE | SINGLE_WIDTH_ONE,
        Some(_) => code | SINGLE,
        None => code,
    });
    if code == 0 {
        // The full header without its magic, version and CRC.
        out.extend_from_slice(&header[5..header_len - 4]);
    }
    out.put_varint(block.record_count);
    if single.is_none() {
        out.put_varint(block.sections.len() as u64);
        for s in &block.sections {
            out.extend_from_slice(&[s.number, s.element_width]);
            out.put_varint(s.bytes.len() as u64);
        }
    }
    for s in &block.sections {
        out.extend_from_slice(&s.bytes);
    }
    let c = crc(&out);
    out.put_u32(c);
    let fits = out.len() as u64 <= COMPACT_MAX;
    (fits && expand(&out).ok()? == full).then_some(out)
}

/// The full container that the compact container `bytes` encodes. Checks the length limit and
/// the checksum before reading anything else; errors name offsets in `bytes`.
pub fn expand(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let len = bytes.len() as u64;
    if len > COMPACT_MAX {
        return Err(Error::TooLarge {
            offset: 0,
            what: "compact container",
            length: len,
            limit: COMPACT_MAX,
        });
    }
    if bytes.len() < 4 + 1 + 1 + 1 + 4 {
        return Err(Error::Truncated {
            offset: len,
            what: "compact container",
        });
    }
    if !is_compact(bytes) {
        return Err(Error::BadMagic {
            offset: 0,
            expected: "a compact container (7f 4d 54 46 03)",
            found: bytes[..5].to_vec(),
        });
    }
    let end = bytes.len() - 4;
    let stored = u32::from_le_bytes([bytes[end], bytes[end + 1], bytes[end + 2], bytes[end + 3]]);
    let computed = crc(&bytes[..end]);
    if stored != computed {
        return Err(Error::Checksum {
            offset: end as u64,
            what: "compact container (the whole file; it may be cut short)",
            stored,
            computed,
        });
    }
    let mut f = Fields::new(&bytes[..end], 0, "compact container");
    f.take(5)?;
    let at = f.offset();
    let flags = f.u8()?;
    let code = flags & CODE_MASK;
    let mut full = if code == 0 {
        explicit_header(&mut f)?
    } else {
        let known = KNOWN_HEADERS
            .get(usize::from(code) - 1)
            .ok_or_else(|| Error::Corrupt {
                offset: at,
                message: format!(
                    "unknown compact header code {code} (this reader knows codes 1 to {})",
                    KNOWN_HEADERS.len()
                ),
            })?;
        known.encode()?
    };
    if flags & SINGLE == 0 && flags & SINGLE_WIDTH_ONE != 0 {
        return Err(Error::Corrupt {
            offset: at,
            message: "compact header byte sets a width without the one-section flag".to_string(),
        });
    }
    let record_count = f.varint()?;
    let mut shapes = Vec::new();
    if flags & SINGLE != 0 {
        let width = u8::from(flags & SINGLE_WIDTH_ONE != 0);
        shapes.push((0u8, width, f.remaining() as u64));
    } else {
        let at = f.offset();
        let count = f.varint()?;
        // Each section takes at least three bytes of descriptor.
        if count > f.remaining() as u64 / 3 {
            return Err(Error::Corrupt {
                offset: at,
                message: format!("{count} sections cannot fit in the compact container"),
            });
        }
        for _ in 0..count {
            let number = f.u8()?;
            let width = f.u8()?;
            shapes.push((number, width, f.varint()?));
        }
    }
    let mut sections = Vec::with_capacity(shapes.len());
    let mut descriptors = Vec::with_capacity(shapes.len());
    for (number, element_width, length) in shapes {
        let at = f.offset();
        let data = f.take(usize::try_from(length).unwrap_or(usize::MAX))?;
        let c = crc(data);
        if descriptors
            .iter()
            .any(|d: &SectionDescriptor| d.number == number)
        {
            return Err(Error::Corrupt {
                offset: at,
                message: format!("section {number} given twice"),
            });
        }
        descriptors.push(SectionDescriptor {
            number,
            element_width,
            codec: Codec::None,
            uncompressed_len: length,
            stored_len: length,
            stored_crc: c,
            uncompressed_crc: c,
        });
        sections.push(data);
    }
    if f.remaining() != 0 {
        return Err(Error::Corrupt {
            offset: f.offset(),
            message: format!(
                "{} bytes after the last section of the compact container",
                f.remaining()
            ),
        });
    }
    let block_offset = full.len() as u64;
    full.extend_from_slice(
        &BlockHeader {
            index: 0,
            first_record: 0,
            record_count,
            sections: descriptors,
        }
        .encode(),
    );
    for s in sections {
        full.extend_from_slice(s);
    }
    let index_offset = full.len() as u64;
    let entry = IndexEntry {
        offset: block_offset,
        first_record: 0,
        record_count,
    };
    full.extend_from_slice(&encode_index(&[entry], None));
    full.extend_from_slice(&Trailer { index_offset }.encode());
    Ok(full)
}

/// Reads the full header's bytes 5 to its CRC (class, byte order, DTD storage, body length,
/// body) and returns the full header, magic to CRC.
fn explicit_header(f: &mut Fields<'_>) -> Result<Vec<u8>, Error> {
    let mut header = Vec::new();
    header.extend_from_slice(&MAGIC);
    header.push(VERSION);
    header.extend_from_slice(f.take(3)?);
    let body_len = f.varint()?;
    header.put_varint(body_len);
    header.extend_from_slice(f.take(usize::try_from(body_len).unwrap_or(usize::MAX))?);
    let c = crc(&header);
    header.put_u32(c);
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::{ContainerWriter, SectionData, PROPERTY_LAYOUT};

    fn header(layout: &str) -> ContainerHeader {
        ContainerHeader {
            dtd: "<!ELEMENT a EMPTY>".to_string(),
            format: "demo".to_string(),
            properties: vec![(PROPERTY_LAYOUT.to_string(), layout.to_string())],
        }
    }

    fn full_file(sections: &[(u8, u8, &[u8])], blocks: usize) -> Vec<u8> {
        let mut w = ContainerWriter::new(Vec::new(), &header("demo-1")).unwrap();
        for _ in 0..blocks {
            let data: Vec<SectionData<'_>> = sections
                .iter()
                .map(|&(number, element_width, bytes)| SectionData {
                    number,
                    element_width,
                    codec: Codec::None,
                    level: 0,
                    bytes,
                })
                .collect();
            w.write_block(7, &data).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn one_block_of_stored_sections_round_trips_exactly() {
        for sections in [
            vec![(0u8, 0u8, &b"abc"[..])],
            vec![(0, 1, &b"abcdef"[..])],
            vec![(3, 0, &b"xy"[..]), (0, 2, &b"abcd"[..]), (9, 0, &b""[..])],
        ] {
            let full = full_file(&sections, 1);
            let small = compact(&full).expect("has a compact form");
            // At least: index and trailer (28), block marker, numbers and checksum (10),
            // header checksum (4), a section checksum (4), less the checksum of the whole (4).
            assert!(
                small.len() + 42 <= full.len(),
                "{} vs {}",
                small.len(),
                full.len()
            );
            assert_eq!(expand(&small).unwrap(), full);
        }
    }

    #[test]
    fn files_without_a_compact_form_are_left_alone() {
        assert!(compact(&full_file(&[(0, 0, b"abc")], 2)).is_none());
        assert!(compact(&full_file(&[(0, 0, b"abc")], 0)).is_none());
        let big = vec![7u8; COMPACT_MAX as usize];
        assert!(compact(&full_file(&[(0, 0, &big)], 1)).is_none());
    }

    #[test]
    fn every_cut_and_every_changed_byte_is_an_error() {
        let full = full_file(&[(3, 0, b"xy"), (0, 1, b"abcd")], 1);
        let small = compact(&full).unwrap();
        for cut in 0..small.len() {
            assert!(expand(&small[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..small.len() {
            let mut bad = small.clone();
            bad[at] ^= 0x10;
            assert!(expand(&bad).is_err(), "byte {at} changed");
        }
    }

    #[test]
    fn an_unknown_header_code_is_named() {
        let full = full_file(&[(0, 0, b"abc")], 1);
        let mut small = compact(&full).unwrap();
        small[5] = (small[5] & !CODE_MASK) | 63;
        let end = small.len() - 4;
        let c = crc(&small[..end]);
        small[end..].copy_from_slice(&c.to_le_bytes());
        let e = expand(&small).unwrap_err().to_string();
        assert!(e.contains("unknown compact header code 63"), "{e}");
    }
}
