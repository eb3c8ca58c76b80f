//! The runtime's error type.
//!
//! Every error says where it happened: a byte offset in the container for binary input, a line and
//! column for the text form, and — when a record was being decoded or encoded — the record number
//! and the record/field path (`alloc.size`).

use std::fmt;
use std::io;

/// Where in a record stream an error happened.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordContext {
    /// Number of the record (0-based, counting every record including metadata and comments).
    pub record: u64,
    /// `record.field` path, or just the record name, or empty when not known.
    pub path: String,
}

impl fmt::Display for RecordContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "record {}", self.record)
        } else {
            write!(f, "record {} ({})", self.record, self.path)
        }
    }
}

/// An error from reading or writing a Meta-TF trace.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The underlying reader or writer failed.
    Io {
        /// Byte offset in the container where the I/O was attempted.
        offset: u64,
        /// The I/O error.
        source: io::Error,
    },
    /// The input ended inside a structure.
    Truncated {
        /// Byte offset where more bytes were needed.
        offset: u64,
        /// What was being read.
        what: &'static str,
    },
    /// A magic number or marker did not match.
    BadMagic {
        /// Byte offset of the magic.
        offset: u64,
        /// What was expected there.
        expected: &'static str,
        /// The bytes found.
        found: Vec<u8>,
    },
    /// The container was written by an unknown version of the format.
    UnsupportedVersion {
        /// Byte offset of the version byte.
        offset: u64,
        /// The version found.
        version: u8,
    },
    /// A checksum did not match: the file is damaged.
    Checksum {
        /// Byte offset of the checksummed data.
        offset: u64,
        /// What the checksum covers.
        what: &'static str,
        /// Checksum stored in the file.
        stored: u32,
        /// Checksum computed from the data.
        computed: u32,
    },
    /// A length read from the file is larger than this implementation accepts.
    TooLarge {
        /// Byte offset of the length.
        offset: u64,
        /// What the length measures.
        what: &'static str,
        /// The length found.
        length: u64,
        /// The largest accepted length.
        limit: u64,
    },
    /// The container is structurally inconsistent (wrong block number, bad codec byte, ...).
    Corrupt {
        /// Byte offset of the inconsistency.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A record could not be decoded or encoded.
    Record {
        /// Byte offset in the container (of the block holding the record), when known.
        offset: Option<u64>,
        /// Which record and field.
        context: RecordContext,
        /// What is wrong.
        message: String,
    },
    /// The text form could not be parsed.
    Text {
        /// 1-based line number.
        line: u64,
        /// 1-based column number.
        column: u64,
        /// What is wrong.
        message: String,
    },
    /// The schema (DTD) is invalid or does not fit the data.
    Schema {
        /// The DTD front end's diagnostics, rendered.
        message: String,
    },
    /// Writing the output (a dump, an encoded trace) failed; a broken pipe shows up here.
    Output {
        /// The I/O error.
        source: io::Error,
    },
    /// A caller passed an argument the container cannot represent.
    InvalidArgument {
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// Builds a [`Error::Record`] error.
    pub fn record(
        offset: Option<u64>,
        record: u64,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::Record {
            offset,
            context: RecordContext {
                record,
                path: path.into(),
            },
            message: message.into(),
        }
    }

    /// Builds a [`Error::InvalidArgument`] error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { offset, source } => write!(f, "I/O error at byte {offset}: {source}"),
            Error::Truncated { offset, what } => {
                write!(f, "input ends at byte {offset} inside the {what}")
            }
            Error::BadMagic {
                offset,
                expected,
                found,
            } => write!(
                f,
                "at byte {offset}: expected {expected}, found bytes {}",
                hex(found)
            ),
            Error::UnsupportedVersion { offset, version } => write!(
                f,
                "at byte {offset}: container version {version} is not supported (this reader knows version {})",
                crate::container::VERSION
            ),
            Error::Checksum {
                offset,
                what,
                stored,
                computed,
            } => write!(
                f,
                "checksum mismatch in the {what} at byte {offset}: stored {stored:#010x}, computed {computed:#010x} (the file is damaged)"
            ),
            Error::TooLarge {
                offset,
                what,
                length,
                limit,
            } => write!(
                f,
                "at byte {offset}: {what} of {length} bytes exceeds the limit of {limit} bytes"
            ),
            Error::Corrupt { offset, message } => write!(f, "at byte {offset}: {message}"),
            Error::Record {
                offset,
                context,
                message,
            } => match offset {
                Some(o) => write!(f, "{context}, block at byte {o}: {message}"),
                None => write!(f, "{context}: {message}"),
            },
            Error::Text {
                line,
                column,
                message,
            } => write!(f, "{line}:{column}: {message}"),
            Error::Schema { message } => write!(f, "invalid schema: {message}"),
            Error::InvalidArgument { message } => write!(f, "invalid argument: {message}"),
            Error::Output { source } => write!(f, "cannot write the output: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Output { source } => Some(source),
            _ => None,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}
