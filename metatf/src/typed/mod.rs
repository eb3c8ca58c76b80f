//! The typed codec: readers and writers for Rust types annotated with `#[derive(MetaTf)]`.
//!
//! A struct deriving `MetaTf` is one record type ([`Record`]); an enum deriving `MetaTf`, whose
//! variants each wrap such a struct or hold a record's fields inline, is a whole format
//! ([`Format`]): the records of one DTD section (or the global records). An enum of such enums
//! with `#[metatf(sections)]` is the format of several sections, whose traces switch between
//! them (see [`attributes`]); the DTD compiler generates one for a whole DTD (`Dtd`). [`TypedWriter`] and [`TypedReader`] code a format with the
//! byte layout of the universal codec ([`crate::UniversalWriter`], [`crate::UniversalReader`]):
//! the same record stream in container section 0, the same value sections, the same metadata
//! records when a value needs a wider field. A trace written by one is read by the other, and
//! both write the same bytes from the same records. The same holds for the model engine
//! (docs/FORMAT.md §7), which a format asks for with `#[metatf(model = "auto")]` (see
//! [`attributes`]) and any writer with [`TypedWriter::modelled`]: the typed writer fills the
//! universal writer's per-block columns and codes them with the same block encoder.
//!
//! The difference is speed: field positions are known at compile time, field states live in a
//! flat array, and records are Rust values instead of lists of dynamic values. Each record type
//! also gets a *fast path*, compiled for the interpretations its fields are declared with
//! (value sections included) and for `none`: while every field has its declared interpretation
//! or `none` (widths may change) and the trace is big-endian, every field is coded without
//! dispatching on its state, into a record stream kept in a local cursor. A value that does not
//! fit falls back to the general path, which writes the same metadata record the universal
//! writer would; since that record widens a field or switches it to `none`, the record type
//! keeps its fast path afterwards. A metadata record setting any other interpretation turns the
//! fast path off until one restores the declared interpretation or `none`.
//!
//! ```
//! use metatf::typed::{TypedReader, TypedWriter};
//! use metatf::{Codec, MetaTf};
//!
//! #[derive(MetaTf, Debug, Clone, PartialEq)]
//! #[metatf(tag = 4)]
//! struct Alloc {
//!     size: u32,
//!     #[metatf(delta = 0, width = 2)]
//!     address: u64,
//! }
//!
//! #[derive(MetaTf, Debug, Clone, PartialEq)]
//! #[metatf(section = 1, name = "heap")]
//! enum Heap {
//!     Alloc(Alloc),
//! }
//!
//! let mut w = TypedWriter::<Heap, _>::new(Vec::new(), Codec::None, 0)?;
//! w.write(&Heap::Alloc(Alloc { size: 16, address: 4096 }))?;
//! w.write(&Heap::Alloc(Alloc { size: 32, address: 4112 }))?;
//! let bytes = w.finish()?;
//!
//! let read: Vec<Heap> = TypedReader::<Heap, _>::new(&bytes[..])?.collect::<Result<_, _>>()?;
//! assert_eq!(read[1], Heap::Alloc(Alloc { size: 32, address: 4112 }));
//! # Ok::<(), metatf::Error>(())
//! ```

pub mod attributes;
mod buf;
mod codec;
mod compat;
mod plan;
#[doc(hidden)]
pub mod private;
mod reader;
mod scalar;
mod spec;
mod values;
mod writer;

pub use codec::{Decoder, Encoder, Stop};
pub(crate) use plan::field_position;
pub use plan::FormatPlan;
pub use reader::TypedReader;
pub use scalar::Scalar;
pub use spec::{FormatSpec, GroupSpec, RecordSpec};
pub use writer::TypedWriter;

use crate::error::Error;
use crate::field::Change;

/// One record type: implemented by `#[derive(MetaTf)]` on a struct.
pub trait Record: Sized {
    /// The record's name, tag and DTD text.
    const SPEC: RecordSpec;
    /// Writes the record's fields (not its tag).
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), Stop>;
    /// Reads the record's fields (its tag has been read).
    fn decode(d: &mut Decoder<'_>) -> Result<Self, Error>;
}

/// A whole format: implemented by `#[derive(MetaTf)]` on an enum of records.
pub trait Format: Sized {
    /// The number of record types (variants, counting those of nested section enums).
    const VARIANTS: usize;
    /// Width of every record's tag in bytes.
    const TAG_WIDTH: u8;
    /// Whether [`TypedWriter::new`] codes with the model engine (`#[metatf(model = "auto")]`
    /// on the format's enum) instead of the paper's record layout. Readers need not know: a
    /// trace's header says how it was coded.
    const MODEL_ENGINE: bool = false;
    /// What the format's records are, section by section.
    fn spec() -> FormatSpec;
    /// The format's plan, built from its DTD on first use.
    fn plan() -> Result<&'static FormatPlan, Error>;
    /// The index of `self`'s variant (its record type) in declaration order.
    fn variant(&self) -> usize;
    /// Writes the fields of `self`'s record.
    fn encode(&self, e: &mut Encoder<'_>) -> Result<(), Stop>;
    /// Reads the fields of a record of variant `variant`.
    fn decode(variant: usize, d: &mut Decoder<'_>) -> Result<Self, Error>;
    /// The format's DTD text, as written into the containers the typed writer makes.
    fn dtd() -> Result<&'static str, Error> {
        Ok(Self::plan()?.dtd())
    }
}

/// Everything a typed reader meets in a trace, and a typed writer can write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedEvent<T> {
    /// A record of the format.
    Record(T),
    /// A built-in comment record.
    Comment(Vec<u8>),
    /// A built-in section record: the current section becomes this one.
    Section(u8),
    /// A built-in metadata record.
    Metadata {
        /// Tag of the record whose field changes.
        record: u64,
        /// Position of the field (tag = 0).
        position: u16,
        /// The new width or interpretation.
        change: Change,
    },
}

/// Includes the Rust code a build script generated from a DTD with
/// [`metatf_dtd::codegen::compile_dtd`]: `metatf::include_dtd!("hatf10")` includes
/// `$OUT_DIR/hatf10.rs`.
///
/// ```ignore
/// // build.rs
/// fn main() {
///     metatf::dtd::codegen::compile_dtd("dtds/hatf10.dtd").expect("valid DTD");
/// }
/// // src/lib.rs
/// pub mod hatf10 {
///     metatf::include_dtd!("hatf10");
/// }
/// ```
#[macro_export]
macro_rules! include_dtd {
    ($name:literal) => {
        ::core::include!(::core::concat!(::core::env!("OUT_DIR"), "/", $name, ".rs"));
    };
}
