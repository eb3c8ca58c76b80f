//! HATF 1.0 and real trace formats: lossless front and back ends and encodings.
//!
//! The library's surface:
//!
//! - [`records`]: the records of any file hatf writes, typed, streamed block by block;
//! - [`TraceFormat`] (in [`format`]) with its options, reports and errors: each format's
//!   encode, decode, decode of a record range, statistics and validation; [`registry`],
//!   [`by_name`] and [`detect`] find a format;
//! - [`dtds`]: the DTDs that ship with hatf; [`seek`]: the input a range decoder seeks in.
//!
//! The formats' own modules (`alloc`, `et`, `jvm`, `shared`) and the paper's comparison
//! (`compare`) are reachable for this workspace's binary, tests, benchmarks and fuzz targets
//! only: they are hidden from the documentation and may change in any release.
#![warn(missing_docs)]

#[doc(hidden)]
pub mod alloc;
#[doc(hidden)]
pub mod compare;
pub mod dtds;
#[doc(hidden)]
pub mod et;
pub mod format;
#[doc(hidden)]
pub mod jvm;
pub mod records;
pub mod seek;
#[doc(hidden)]
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
