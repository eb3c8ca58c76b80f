//! The Meta-TF runtime: field interpretations, metadata records, the self-describing
//! container and the universal (schema-driven) reader and writer.
//!
//! - [`container`]: the file format — header with the DTD, blocks of independently compressed,
//!   checksummed sections, index and trailer ([`ContainerWriter`], [`ContainerReader`]).
//! - [`field`]: widths, byte order and the seven interpretations as state machines.
//! - [`universal`]: [`UniversalWriter`] and [`UniversalReader`] code [`DynRecord`]s with any
//!   [`dtd::Schema`], adding metadata records when a value needs a wider field.
//! - [`inspect()`]: what a container holds; [`dump`] and [`encode_text`]: its records in the text
//!   form and back.
//!
//! The byte layout is specified in `docs/FORMAT.md` (section "Container").
//!
//! ```
//! use metatf::container::{Codec, ContainerHeader};
//! use metatf::{DynRecord, UniversalReader, UniversalWriter, Value};
//!
//! let dtd = "size.width = 1; size.interpretation = none;
//!            section heap 1 { alloc : (tag, size) { tag.value = 4; } }";
//! let schema = metatf::dtd::parse_schema(dtd, "heap.dtd").unwrap();
//! let header = ContainerHeader { dtd: dtd.into(), format: "demo".into(), properties: vec![] };
//! let mut w = UniversalWriter::new(Vec::new(), schema, &header, Codec::Zstd, 3)?;
//! let rec = |name: &str, tag, v| DynRecord { section: None, name: name.into(), tag, fields: vec![Value::Uint(v)] };
//! w.write(&rec("section", 2, 1))?;
//! w.write(&rec("alloc", 4, 1000))?; // does not fit one byte: a metadata record widens `size`
//! let bytes = w.finish()?;
//!
//! let mut r = UniversalReader::new(&bytes[..])?;
//! let names: Vec<String> = std::iter::from_fn(|| r.next_record().unwrap()).map(|r| r.name).collect();
//! assert_eq!(names, ["section", "metadata", "alloc"]);
//! # Ok::<(), metatf::Error>(())
//! ```
#![warn(missing_docs)]

pub mod container;
pub mod error;
pub mod field;
pub mod hash;
mod inspect;
pub mod lines;
pub mod memory;
pub mod model;
mod text;
pub mod typed;
pub mod universal;
pub mod varint;

pub use container::{
    looks_like_container, Block, Codec, ContainerHeader, ContainerReader, ContainerWriter,
    DecodedSection, SectionData,
};
pub use error::Error;
pub use inspect::{inspect, BlockInfo, Inspection};
pub use metatf_derive::MetaTf;
pub use metatf_dtd as dtd;
pub use text::{
    default_level, dump, encode_text, encode_text_with, print_records, TextModel, DEFAULT_CODEC,
    MAX_TEXT_LINE,
};
#[doc(hidden)]
pub use typed::private as __private;
pub use universal::{DynRecord, Event, Step, UniversalReader, UniversalWriter, Value};
