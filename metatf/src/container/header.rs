//! The container header: magic, version, class and byte-order bytes, then the format id,
//! free properties and the DTD text, closed by a CRC-32. Nothing in it depends on the data
//! that follows, so a streaming writer can emit it first.

use std::io::Read;

use serde::Serialize;

use super::codec::{compress, decompress, Codec};
use super::context_mix::v2;
use super::dtd_storage::{DtdIdentity, DtdStorage, COMPRESS_DTD_FROM};
use super::framing::{crc, Fields, Positioned, PutLe};
use super::{MAGIC, MAX_HEADER_BODY, VERSION};
use crate::error::Error;

/// Property key whose value (`little` or `big`) gives the byte order of trace data in sections.
/// Absent means big-endian, the order HATF 1.0 uses. Mirrored in header byte 6.
pub const PROPERTY_BYTE_ORDER: &str = "byteorder";
/// Property key whose value (`32` or `64`) gives the traced program's address size. Optional;
/// mirrored in header byte 5 (0 when absent).
pub const PROPERTY_CLASS: &str = "class";
/// Reserved property naming how records are laid out in the sections. Absent or
/// [`LAYOUT_UNIVERSAL`] means the universal layout of the record stream and value sections, which
/// any reader can decode from the DTD alone; any other value names a format-specific model
/// (documented with that format) that only a reader of that format can decode.
pub const PROPERTY_LAYOUT: &str = "layout";
/// The value of [`PROPERTY_LAYOUT`] for the universal layout.
pub const LAYOUT_UNIVERSAL: &str = "universal";

/// Byte order of multi-byte field values inside sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum ByteOrder {
    /// Least significant byte first (header byte 6 = 1).
    Little,
    /// Most significant byte first (header byte 6 = 2); the default.
    #[default]
    Big,
}

impl ByteOrder {
    fn code(self) -> u8 {
        match self {
            ByteOrder::Little => 1,
            ByteOrder::Big => 2,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ByteOrder::Little => "little",
            ByteOrder::Big => "big",
        }
    }
}

/// What a container says about itself before any data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContainerHeader {
    /// The DTD text, verbatim, so the trace is self-describing.
    pub dtd: String,
    /// Identifier of the producing format, e.g. `mtrace` or `hatf10`.
    pub format: String,
    /// Free key/value pairs, kept in order. [`PROPERTY_BYTE_ORDER`] and [`PROPERTY_CLASS`] are
    /// reserved keys with fixed value sets.
    pub properties: Vec<(String, String)>,
}

impl ContainerHeader {
    /// The value of the first property named `key`.
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The section layout: `None` for the universal layout, or the name of a format-specific model.
    pub fn model_layout(&self) -> Option<&str> {
        self.property(PROPERTY_LAYOUT)
            .filter(|layout| *layout != LAYOUT_UNIVERSAL)
    }

    /// Byte order of the trace data, from the [`PROPERTY_BYTE_ORDER`] property (big when absent).
    pub fn byte_order(&self) -> Result<ByteOrder, Error> {
        match self.property(PROPERTY_BYTE_ORDER) {
            None | Some("big") => Ok(ByteOrder::Big),
            Some("little") => Ok(ByteOrder::Little),
            Some(other) => Err(Error::invalid(format!(
                "property {PROPERTY_BYTE_ORDER} must be `little` or `big`, not `{other}`"
            ))),
        }
    }

    fn class_code(&self) -> Result<u8, Error> {
        match self.property(PROPERTY_CLASS) {
            None => Ok(0),
            Some("32") => Ok(1),
            Some("64") => Ok(2),
            Some(other) => Err(Error::invalid(format!(
                "property {PROPERTY_CLASS} must be `32` or `64`, not `{other}`"
            ))),
        }
    }

    /// Serialises the header, magic to CRC inclusive, storing the DTD as `storage` says.
    /// `reference` names the DTD when it is stored by reference and its text is not at hand
    /// (rewriting a file that referenced it); otherwise the identity of [`Self::dtd`] is used.
    pub(crate) fn encode(
        &self,
        storage: DtdStorage,
        reference: Option<DtdIdentity>,
    ) -> Result<Vec<u8>, Error> {
        let class = self.class_code()?;
        let order = self.byte_order()?;
        let mut body = Vec::new();
        put_str(&mut body, &self.format);
        body.put_varint(self.properties.len() as u64);
        for (k, v) in &self.properties {
            put_str(&mut body, k);
            put_str(&mut body, v);
        }
        let storage = self.put_dtd(&mut body, storage, reference)?;
        if body.len() as u64 > MAX_HEADER_BODY {
            return Err(Error::invalid(format!(
                "header of {} bytes exceeds the limit of {MAX_HEADER_BODY} bytes",
                body.len()
            )));
        }
        let mut out = Vec::with_capacity(body.len() + 24);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&[VERSION, class, order.code(), storage]);
        out.put_varint(body.len() as u64);
        out.extend_from_slice(&body);
        let c = crc(&out);
        out.put_u32(c);
        Ok(out)
    }

    /// Appends the DTD field and returns the storage byte it was written with.
    fn put_dtd(
        &self,
        body: &mut Vec<u8>,
        storage: DtdStorage,
        reference: Option<DtdIdentity>,
    ) -> Result<u8, Error> {
        let text = self.dtd.as_bytes();
        let pack = || {
            compress(Codec::Zstd, DTD_LEVEL, text).map_err(|source| Error::Io { offset: 0, source })
        };
        let mix = || mixed_dtd(text);
        // The compressed text, once, when it is (or may be) stored that way.
        let mut packed = None;
        let storage = match storage {
            DtdStorage::Auto if self.model_layout().is_some() => DtdStorage::Reference,
            DtdStorage::Auto if text.len() >= COMPRESS_DTD_FROM => {
                // The shorter of the two codings, worth it only if it and its length field
                // still save bytes. The mixer learns from the first byte, where zstd pays
                // for literals, so on a DTD of a few kilobytes either may win.
                let frame = pack()?;
                let coded = mix().filter(|c| c.len() < frame.len());
                let (shortest, storage) = match coded {
                    Some(c) => (c, DtdStorage::Mixed),
                    None => (frame, DtdStorage::Compressed),
                };
                if shortest.len() + 4 < text.len() {
                    packed = Some(shortest);
                    storage
                } else {
                    DtdStorage::Verbatim
                }
            }
            DtdStorage::Auto => DtdStorage::Verbatim,
            other => other,
        };
        match storage {
            DtdStorage::Compressed | DtdStorage::Mixed => {
                let frame = match packed {
                    Some(frame) => frame,
                    None if storage == DtdStorage::Mixed => mix().ok_or_else(|| {
                        Error::invalid(format!(
                            "a DTD of {} bytes is too long to store context-mixed (at most {MAX_MIXED_DTD})",
                            text.len()
                        ))
                    })?,
                    None => pack()?,
                };
                body.put_varint(text.len() as u64);
                body.put_varint(frame.len() as u64);
                body.extend_from_slice(&frame);
            }
            DtdStorage::Reference => {
                let id = match reference {
                    Some(id) if self.dtd.is_empty() || id.matches(&self.dtd) => id,
                    Some(_) => {
                        return Err(Error::invalid(
                            "the DTD reference does not match the header's DTD text".to_string(),
                        ))
                    }
                    None if self.dtd.is_empty() => {
                        return Err(Error::invalid(
                            "a DTD stored by reference needs its text or its identity".to_string(),
                        ))
                    }
                    None => DtdIdentity::of(&self.dtd),
                };
                if id.length > MAX_HEADER_BODY {
                    return Err(Error::invalid(format!(
                        "a DTD of {} bytes is longer than any header may hold ({MAX_HEADER_BODY})",
                        id.length
                    )));
                }
                body.put_varint(id.length);
                body.put_u32(id.crc32);
            }
            _ => {
                body.put_varint(text.len() as u64);
                body.extend_from_slice(text);
            }
        }
        Ok(storage.code().unwrap_or(0))
    }

    /// Reads and checks a header from the start of a container.
    pub(crate) fn decode<R: Read>(r: &mut Positioned<R>) -> Result<DecodedHeader, Error> {
        let mut fixed = Vec::with_capacity(24);
        fixed.resize(8, 0);
        let got = r.fill(&mut fixed[..4])?;
        if got < 4 || fixed[..4] != MAGIC {
            return Err(Error::BadMagic {
                offset: 0,
                expected: "the Meta-TF container magic 7f 4d 54 46 (\"\\x7fMTF\")",
                found: fixed[..got].to_vec(),
            });
        }
        r.exact(&mut fixed[4..8], "container header")?;
        if fixed[4] == super::compact::COMPACT_VERSION {
            // Read on as the full container the compact one encodes.
            let start = r.expand_compact(&fixed)?;
            fixed.copy_from_slice(&start);
        }
        if fixed[4] != VERSION {
            return Err(Error::UnsupportedVersion {
                offset: 4,
                version: fixed[4],
            });
        }
        let (class, order, storage_code) = (fixed[5], fixed[6], fixed[7]);
        let body_len = r.varint_into(&mut fixed, "container header")?;
        if body_len > MAX_HEADER_BODY {
            return Err(Error::TooLarge {
                offset: 8,
                what: "container header",
                length: body_len,
                limit: MAX_HEADER_BODY,
            });
        }
        let body_at = r.pos;
        let body = r.bytes(body_len, "container header")?;
        let mut stored = [0u8; 4];
        r.exact(&mut stored, "container header checksum")?;
        let stored = u32::from_le_bytes(stored);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&fixed);
        hasher.update(&body);
        let computed = hasher.finalize();
        if stored != computed {
            return Err(Error::Checksum {
                offset: 0,
                what: "container header",
                stored,
                computed,
            });
        }
        let corrupt = |offset: u64, message: String| Error::Corrupt { offset, message };
        let storage = DtdStorage::from_code(storage_code)
            .ok_or_else(|| corrupt(7, format!("unknown DTD storage byte {storage_code}")))?;
        let mut f = Fields::new(&body, body_at, "container header");
        let format = get_str(&mut f, "format id")?;
        let at = f.offset();
        let count = f.varint()?;
        // Each property takes at least two bytes, so the body bounds the count.
        if count > f.remaining() as u64 / 2 {
            return Err(corrupt(
                at,
                format!("{count} properties cannot fit in the header"),
            ));
        }
        let mut properties = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let k = get_str(&mut f, "property key")?;
            let v = get_str(&mut f, "property value")?;
            properties.push((k, v));
        }
        let (dtd, reference) = get_dtd(&mut f, storage)?;
        if f.remaining() != 0 {
            return Err(corrupt(
                f.offset(),
                format!(
                    "{} unexplained bytes at the end of the header",
                    f.remaining()
                ),
            ));
        }
        let header = ContainerHeader {
            dtd,
            format,
            properties,
        };
        // The fixed bytes mirror the reserved properties; disagreement means damage.
        let want_order = header
            .byte_order()
            .map_err(|e| corrupt(body_at, e.to_string()))?;
        if want_order.code() != order {
            return Err(corrupt(
                6,
                format!(
                    "byte-order byte is {order} but the properties say {}",
                    want_order.name()
                ),
            ));
        }
        let want_class = header
            .class_code()
            .map_err(|e| corrupt(body_at, e.to_string()))?;
        if want_class != class {
            return Err(corrupt(
                5,
                format!("class byte is {class} but the properties say {want_class}"),
            ));
        }
        Ok(DecodedHeader {
            header,
            storage,
            reference,
        })
    }
}

/// A header as read from a file, with how its DTD was stored.
#[derive(Debug, Clone)]
pub(crate) struct DecodedHeader {
    pub(crate) header: ContainerHeader,
    pub(crate) storage: DtdStorage,
    /// The identity of a DTD stored by reference (whose text the header then leaves empty).
    pub(crate) reference: Option<DtdIdentity>,
}

/// zstd level for a compressed DTD: DTDs are small, so the slowest level costs nothing.
const DTD_LEVEL: i32 = 19;

/// The longest DTD stored context-mixed (1 MiB, as for a codec-3 section): the mixer decodes
/// about ten times slower than zstd, so a reader refuses a longer claim before any work.
const MAX_MIXED_DTD: u64 = super::codec::CONTEXT_MIX_MAX_SECTION;

/// The DTD text coded by the context mixer of codec 3, when it is short enough to be.
fn mixed_dtd(text: &[u8]) -> Option<Vec<u8>> {
    (text.len() as u64 <= MAX_MIXED_DTD).then(|| v2::encode(text, v2::CODEC_TABLE_BITS))
}

fn get_dtd(
    f: &mut Fields<'_>,
    storage: DtdStorage,
) -> Result<(String, Option<DtdIdentity>), Error> {
    let at = f.offset();
    let length = f.varint()?;
    // A DTD of any storage is at most as long as a header body may be: a longer claim is one
    // no writer made.
    if length > MAX_HEADER_BODY {
        let what = match storage {
            DtdStorage::Reference => "referenced DTD",
            DtdStorage::Compressed => "compressed DTD",
            DtdStorage::Mixed => "context-mixed DTD",
            _ => "DTD",
        };
        return Err(Error::TooLarge {
            offset: at,
            what,
            length,
            limit: MAX_HEADER_BODY,
        });
    }
    match storage {
        DtdStorage::Reference => {
            let crc32 = f.u32()?;
            Ok((String::new(), Some(DtdIdentity { length, crc32 })))
        }
        DtdStorage::Compressed => {
            let stored_len = f.varint()?;
            let packed = f.take(usize::try_from(stored_len).unwrap_or(usize::MAX))?;
            let text =
                decompress(Codec::Zstd, packed.to_vec(), length).map_err(|e| Error::Corrupt {
                    offset: at,
                    message: format!("the compressed DTD does not decompress: {e:?}"),
                })?;
            Ok((utf8(&text, at, "DTD")?, None))
        }
        DtdStorage::Mixed => {
            let stored_len = f.varint()?;
            let coded = f.take(usize::try_from(stored_len).unwrap_or(usize::MAX))?;
            // Checked before decoding: the mixer has no end marker, so a claim is bounded by
            // the limit and by what the coded bytes can hold, never by the work done.
            if length > MAX_MIXED_DTD || !v2::plausible_length(coded.len(), length) {
                return Err(Error::Corrupt {
                    offset: at,
                    message: format!(
                        "a context-mixed DTD of {} bytes claims {length} bytes (at most {MAX_MIXED_DTD})",
                        coded.len()
                    ),
                });
            }
            let text =
                v2::decode(coded, length, v2::CODEC_TABLE_BITS).map_err(|e| Error::Corrupt {
                    offset: at,
                    message: format!("the context-mixed DTD does not decode: {e}"),
                })?;
            Ok((utf8(&text, at, "DTD")?, None))
        }
        _ => {
            let text = f.take(usize::try_from(length).unwrap_or(usize::MAX))?;
            Ok((utf8(text, at, "DTD")?, None))
        }
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.put_varint(s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn get_str(f: &mut Fields<'_>, what: &'static str) -> Result<String, Error> {
    let at = f.offset();
    let n = f.varint()?;
    utf8(f.take(usize::try_from(n).unwrap_or(usize::MAX))?, at, what)
}

fn utf8(bytes: &[u8], offset: u64, what: &str) -> Result<String, Error> {
    String::from_utf8(bytes.to_vec()).map_err(|e| Error::Corrupt {
        offset,
        message: format!("the {what} is not UTF-8: {e}"),
    })
}
