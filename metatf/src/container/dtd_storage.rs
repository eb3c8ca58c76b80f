//! How the header carries the DTD: as text, compressed (zstd or the context mixer), or by reference to a DTD the reader
//! already knows (one that ships with the producing format).
//!
//! Small traces are the reason: an Elephant Tracks DTD is about 1.3 KB, more than the whole
//! compressed data of a short trace, and a format whose sections follow its own model (the
//! `layout` property) cannot be decoded from the DTD anyway, so embedding it buys nothing.

use serde::Serialize;

/// DTDs shorter than this are never compressed: zstd's frame overhead would eat the gain and a
/// short DTD is more useful readable in a hex dump.
pub const COMPRESS_DTD_FROM: usize = 512;

/// Header byte 7: how the DTD is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum DtdStorage {
    /// Writer's choice: [`DtdStorage::Reference`] when the header names a format-specific
    /// `layout` (its sections cannot be decoded from the DTD, so carrying it documents
    /// nothing a reader of that format lacks); otherwise, when the DTD is at least
    /// [`COMPRESS_DTD_FROM`] bytes long, the shorter of [`DtdStorage::Mixed`] and
    /// [`DtdStorage::Compressed`] if it makes the DTD shorter, and [`DtdStorage::Verbatim`]
    /// when not. Never appears in a file.
    #[default]
    Auto,
    /// The DTD text as is (byte 7 = 0).
    Verbatim,
    /// The DTD text as one Zstandard frame (byte 7 = 1).
    Compressed,
    /// Only the DTD's length and CRC-32 (byte 7 = 2): the reader must already know the DTD
    /// of the header's format id and checks it against both.
    Reference,
    /// The DTD text coded by the context mixer of codec 3 (byte 7 = 3); `Auto` picks it
    /// instead of [`DtdStorage::Compressed`] when it is shorter.
    Mixed,
}

impl DtdStorage {
    /// The header byte for a storage actually written (`Auto` has none).
    pub(crate) fn code(self) -> Option<u8> {
        match self {
            DtdStorage::Auto => None,
            DtdStorage::Verbatim => Some(0),
            DtdStorage::Compressed => Some(1),
            DtdStorage::Reference => Some(2),
            DtdStorage::Mixed => Some(3),
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<DtdStorage> {
        match code {
            0 => Some(DtdStorage::Verbatim),
            1 => Some(DtdStorage::Compressed),
            2 => Some(DtdStorage::Reference),
            3 => Some(DtdStorage::Mixed),
            _ => None,
        }
    }

    /// Lower-case name, as `hatf inspect` prints it.
    pub fn name(self) -> &'static str {
        match self {
            DtdStorage::Auto => "auto",
            DtdStorage::Verbatim => "verbatim",
            DtdStorage::Compressed => "compressed",
            DtdStorage::Reference => "reference",
            DtdStorage::Mixed => "context-mixed",
        }
    }
}

/// What identifies a referenced DTD: the length and CRC-32 of its exact text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DtdIdentity {
    /// Length of the DTD text in bytes.
    pub length: u64,
    /// CRC-32 (as elsewhere in the container) of the DTD text.
    pub crc32: u32,
}

impl DtdIdentity {
    /// The identity of `text`.
    pub fn of(text: &str) -> DtdIdentity {
        DtdIdentity {
            length: text.len() as u64,
            crc32: crc32fast::hash(text.as_bytes()),
        }
    }

    /// True when `text` is the DTD this identity names.
    pub fn matches(&self, text: &str) -> bool {
        *self == DtdIdentity::of(text)
    }
}
