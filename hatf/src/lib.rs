//! HATF 1.0 and real trace formats: lossless front and back ends and encodings.
//!
//! The library's surface:
//!
//! - [`records`]: the records of any file hatf writes, typed, streamed block by block, a
//!   range of them read through the file's index;
//! - [`TraceFormat`] (in [`mod@format`]) with its options, reports and errors: each format's
//!   encode, decode, decode of a record range, statistics and validation; [`registry()`],
//!   [`by_name`] and [`detect`] find a format;
//! - [`events`]: the allocation formats' text traces read into allocation events;
//! - [`dtds`]: the DTDs that ship with hatf; [`seek`]: the input a range decoder seeks in.
//!
//! Encode a trace, then read its records back:
//!
//! ```
//! use std::io::Cursor;
//! use hatf::records::{Item, RecordFile, Value};
//!
//! let text = b"1: malloc 0x1000 32\n1: malloc 0x2000 64\n1: free 0x1000\n";
//! let format = hatf::by_name("memory-replay").expect("a built-in format");
//! let mut file = Vec::new();
//! format.encode(&mut &text[..], &mut file, &Default::default())?;
//!
//! let mut input = Cursor::new(file);
//! let records = RecordFile::open(&mut input, "trace.hatf")?;
//! let mut allocated = 0;
//! records.read(&mut input, "trace.hatf", 0..u64::MAX, &mut |item| {
//!     if let Item::Record(r) = item {
//!         let record = &records.types()[r.record_type];
//!         let size = record.fields.iter().position(|f| f.name == "size");
//!         if let (true, Some(Value::U64(n))) = (record.name == "malloc", size.map(|i| r.values[i])) {
//!             allocated += n;
//!         }
//!     }
//!     Ok(())
//! })?;
//! assert_eq!(allocated, 96);
//! # Ok::<(), hatf::FormatError>(())
//! ```
//!
//! Everything else — a folder per format (`formats`), what they share (`shared`), the paper's
//! encodings (`paper`) and its comparison (`compare`) — is under the hidden module `internal`, reachable for this
//! workspace's binary, tests, benchmarks and fuzz targets only (its docs say why a hidden
//! module and not a cargo feature); it may change in any release.
#![warn(missing_docs)]

pub mod dtds;
pub mod events;
pub mod format;
#[doc(hidden)]
pub mod internal;
pub mod records;
mod registry;
pub mod seek;

// The internal modules by their short names, for the crate's own paths (`crate::formats::...`).
use internal::{formats, paper, shared};

pub use format::{
    At, Compression, DecodeOptions, EncodeOptions, EncodeReport, FormatError, Problem, ProblemSink,
    StatsReport, TraceFormat,
};
pub use registry::{by_name, detect, registry};
