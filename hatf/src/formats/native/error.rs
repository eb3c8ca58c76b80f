//! Errors of the HATF 1.0 native reader and writer.

use crate::format::FormatError;
use std::fmt;

/// A problem in a HATF 1.0 native stream, with where it is.
#[derive(Debug)]
pub struct NativeError {
    /// Byte offset (in the main stream) where the record or the bad byte starts.
    pub offset: u64,
    /// Record number, counting every record (data, comment, metadata) from 0.
    pub record: u64,
    /// The field being read or written, when the problem is in one.
    pub field: Option<&'static str>,
    /// What is wrong.
    pub message: String,
}

impl NativeError {
    /// Turns this into the crate's error, naming `file`.
    pub fn into_format_error(self, file: &str) -> FormatError {
        let mut message = format!("record {}", self.record);
        if let Some(f) = self.field {
            message.push_str(&format!(", field {f}"));
        }
        message.push_str(&format!(": {}", self.message));
        FormatError {
            file: file.to_string(),
            position: format!("byte {}", self.offset),
            message,
        }
    }
}

impl fmt::Display for NativeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}, record {}", self.offset, self.record)?;
        if let Some(field) = self.field {
            write!(f, ", field {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for NativeError {}
