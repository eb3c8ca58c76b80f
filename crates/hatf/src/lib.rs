//! HATF 1.0 and real trace formats: lossless front and back ends and encodings.
#![warn(missing_docs)]

pub mod format;

pub use format::{
    Compression, DecodeOptions, EncodeOptions, EncodeReport, FormatError, TraceFormat,
};
