//! HATF 1.0 and real trace formats: lossless front and back ends and encodings.
#![warn(missing_docs)]

pub mod alloc;
pub mod compare;
pub mod dtds;
pub mod et;
pub mod format;
pub mod jvm;
pub mod records;
pub mod seek;
pub mod shared;

pub use format::{
    At, Compression, DecodeOptions, EncodeOptions, EncodeReport, FormatError, Problem, ProblemSink,
    StatsReport, TraceFormat,
};

/// Every format this build knows, in detection order (most specific first).
pub fn registry() -> Vec<&'static dyn TraceFormat> {
    let mut formats = alloc::formats();
    formats.extend(et::formats());
    formats.extend(jvm::formats());
    formats
}

/// Finds a format by its name.
pub fn by_name(name: &str) -> Option<&'static dyn TraceFormat> {
    registry().into_iter().find(|f| f.name() == name)
}

/// Picks the first format whose detector accepts `head`.
pub fn detect(head: &[u8]) -> Option<&'static dyn TraceFormat> {
    registry().into_iter().find(|f| f.detect(head))
}
