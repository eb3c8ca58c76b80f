//! HATF 1.0 and real trace formats: lossless front and back ends and encodings.
#![warn(missing_docs)]

pub mod alloc;
pub mod compare;
pub mod dtds;
pub mod et;
pub mod format;
pub mod jvm;
pub mod seek;
pub mod shared;

pub use format::{
    Compression, DecodeOptions, EncodeOptions, EncodeReport, FormatError, Problem, StatsReport,
    TraceFormat,
};
