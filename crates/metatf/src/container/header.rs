//! The container header: magic, version, class and byte-order bytes, then the format id,
//! free properties and the DTD text, closed by a CRC-32. Nothing in it depends on the data
//! that follows, so a streaming writer can emit it first.

use std::io::Read;

use serde::Serialize;

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

    /// Serialises the header, magic to CRC inclusive.
    pub(crate) fn encode(&self) -> Result<Vec<u8>, Error> {
        let class = self.class_code()?;
        let order = self.byte_order()?;
        let mut body = Vec::new();
        put_str16(&mut body, "format id", &self.format)?;
        body.put_u32(len32("property count", self.properties.len())?);
        for (k, v) in &self.properties {
            put_str16(&mut body, "property key", k)?;
            body.put_u32(len32("property value", v.len())?);
            body.extend_from_slice(v.as_bytes());
        }
        body.put_u32(len32("DTD", self.dtd.len())?);
        body.extend_from_slice(self.dtd.as_bytes());
        if body.len() as u64 > MAX_HEADER_BODY {
            return Err(Error::invalid(format!(
                "header of {} bytes exceeds the limit of {MAX_HEADER_BODY} bytes",
                body.len()
            )));
        }
        let mut out = Vec::with_capacity(body.len() + 16);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&[VERSION, class, order.code(), 0]);
        out.put_u32(body.len() as u32);
        out.extend_from_slice(&body);
        let c = crc(&out);
        out.put_u32(c);
        Ok(out)
    }

    /// Reads and checks a header from the start of a container.
    pub(crate) fn decode<R: Read>(r: &mut Positioned<R>) -> Result<ContainerHeader, Error> {
        let mut fixed = [0u8; 12];
        let got = r.fill(&mut fixed[..4])?;
        if got < 4 || fixed[..4] != MAGIC {
            return Err(Error::BadMagic {
                offset: 0,
                expected: "the Meta-TF container magic 7f 4d 54 46 (\"\\x7fMTF\")",
                found: fixed[..got].to_vec(),
            });
        }
        r.exact(&mut fixed[4..], "container header")?;
        if fixed[4] != VERSION {
            return Err(Error::UnsupportedVersion {
                offset: 4,
                version: fixed[4],
            });
        }
        let (class, order, reserved) = (fixed[5], fixed[6], fixed[7]);
        let body_len = u32::from_le_bytes([fixed[8], fixed[9], fixed[10], fixed[11]]) as u64;
        if body_len > MAX_HEADER_BODY {
            return Err(Error::TooLarge {
                offset: 8,
                what: "container header",
                length: body_len,
                limit: MAX_HEADER_BODY,
            });
        }
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
        if reserved != 0 {
            return Err(corrupt(
                7,
                format!("reserved header byte is {reserved}, not 0"),
            ));
        }
        let mut f = Fields::new(&body, 12, "container header");
        let format = get_str16(&mut f, "format id")?;
        let count = f.u32()?;
        let mut properties = Vec::new();
        for _ in 0..count {
            let k = get_str16(&mut f, "property key")?;
            let at = f.offset();
            let n = f.u32()? as usize;
            let v = utf8(f.take(n)?, at, "property value")?;
            properties.push((k, v));
        }
        let at = f.offset();
        let n = f.u32()? as usize;
        let dtd = utf8(f.take(n)?, at, "DTD")?;
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
            .map_err(|e| corrupt(12, e.to_string()))?;
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
            .map_err(|e| corrupt(12, e.to_string()))?;
        if want_class != class {
            return Err(corrupt(
                5,
                format!("class byte is {class} but the properties say {want_class}"),
            ));
        }
        Ok(header)
    }
}

fn len32(what: &str, n: usize) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| Error::invalid(format!("{what} is too long ({n} bytes)")))
}

fn put_str16(out: &mut Vec<u8>, what: &str, s: &str) -> Result<(), Error> {
    let n = u16::try_from(s.len())
        .map_err(|_| Error::invalid(format!("{what} is longer than 65535 bytes")))?;
    out.put_u16(n);
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

fn get_str16(f: &mut Fields<'_>, what: &'static str) -> Result<String, Error> {
    let at = f.offset();
    let n = f.u16()? as usize;
    utf8(f.take(n)?, at, what)
}

fn utf8(bytes: &[u8], offset: u64, what: &str) -> Result<String, Error> {
    String::from_utf8(bytes.to_vec()).map_err(|e| Error::Corrupt {
        offset,
        message: format!("the {what} is not UTF-8: {e}"),
    })
}
