//! Reference of the `#[metatf(...)]` attributes of `#[derive(MetaTf)]`, one runnable example
//! each.
//!
//! A **struct** with named fields is one record type; an **enum** whose variants each wrap such
//! a struct, or hold a record's fields inline (see [On an enum variant](#on-an-enum-variant)),
//! is a format; an enum whose variants wrap formats, with `sections`, is a format spanning
//! sections. Every field is `u8`–`u64`, `i8`–`i64`, `Vec<u8>` (a `vfield`) or a `Vec` of
//! integers repeated by a count field (`count`); the DTD field
//! name is the Rust field name unless `name` says otherwise. A width defaults to the Rust
//! type's size and an interpretation to `none`. Errors (unknown, repeated or conflicting
//! attributes, a width the Rust type cannot hold, a missing tag, an unsupported type,
//! duplicate tags) are compile errors pointing at the attribute.
//!
//! # On a struct
//!
//! ## `tag = N` (required)
//! The record's tag value.
//! ```
//! # use metatf::MetaTf;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Alloc { size: u32 }
//! # #[derive(MetaTf)] enum F { Alloc(Alloc) }
//! # use metatf::typed::Format;
//! assert!(F::dtd()?.contains("alloc : (tag, size) {\n    tag.value = 4;"));
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `name = "..."` (struct)
//! The record's DTD name (default: the struct name with a lower-case first letter).
//! ```
//! # use metatf::MetaTf; use metatf::typed::Format;
//! #[derive(MetaTf)]
//! #[metatf(tag = 7, name = "createHeap")]
//! struct NewHeap { heap: u32 }
//! # #[derive(MetaTf)] enum F { H(NewHeap) }
//! assert!(F::dtd()?.contains("createHeap : (tag, heap)"));
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `crate = "path"` (struct or enum)
//! Where the `metatf` crate is, when not at `::metatf`.
//! ```
//! mod re { pub mod rt { pub use ::metatf::*; } }
//! #[derive(re::rt::MetaTf)]
//! #[metatf(tag = 4, crate = "crate::re::rt")]
//! struct Alloc { size: u32 }
//! # fn main() {}
//! ```
//!
//! # On a field
//!
//! ## `name = "..."` on a `Vec<u8>`
//! A byte string is a `vfield` (a 1-byte length, then the bytes), named after the Rust field
//! in the DTD (`note : vfield`); `name` renames it, and `name = "vfield"` gives the plain
//! built-in. It takes no other attribute.
//! ```
//! # use metatf::MetaTf; use metatf::typed::Format;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Line { note: Vec<u8>, #[metatf(name = "vfield")] raw: Vec<u8> }
//! # #[derive(MetaTf)] enum F { L(Line) }
//! assert!(F::dtd()?.contains("line : (tag, note : vfield, vfield)"));
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `width = N`
//! Bytes the field takes at first (0–8, at most the Rust type's size). A value that needs more
//! makes the writer add a metadata record widening the field; nothing is truncated.
//! ```
//! # use metatf::MetaTf; use metatf::typed::Format;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Alloc { #[metatf(width = 2)] size: u64 }
//! # #[derive(MetaTf)] enum F { A(Alloc) }
//! assert!(F::dtd()?.contains("size.width = 2;"));
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `name = "..."` (field)
//! The DTD field type name; two fields may share one (`realloc`'s two `address` fields) if
//! their width and interpretation agree.
//! ```
//! # use metatf::MetaTf; use metatf::typed::Format;
//! #[derive(MetaTf)]
//! #[metatf(tag = 5)]
//! struct Realloc {
//!     #[metatf(name = "address")] old: u32,
//!     #[metatf(name = "address")] new: u32,
//! }
//! # #[derive(MetaTf)] enum F { R(Realloc) }
//! assert!(F::dtd()?.contains("realloc : (tag, address, address)"));
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `interpretation = "..."`
//! The interpretation in DTD spelling: `none`, `default V`, `baseOffset B`, `delta I`,
//! `stride I S`, `sectionOffset N`, `sectionStride N S`. The split keys below say the same.
//! ```
//! # use metatf::MetaTf; use metatf::typed::Format;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Tick { #[metatf(interpretation = "stride 0 10")] time: u64 }
//! # #[derive(MetaTf)] enum F { T(Tick) }
//! assert!(F::dtd()?.contains("time.interpretation = stride 0 10;"));
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `none`
//! The stored value is the value (the default).
//! ```
//! # use metatf::MetaTf;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Alloc { #[metatf(none, width = 4)] size: u32 }
//! ```
//!
//! ## `default = V`
//! Zero bytes; the value is always `V` (another value makes the writer switch to `none`).
//! ```
//! # use metatf::MetaTf; use metatf::typed::Format;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Alloc { size: u32, #[metatf(default = 0)] thread: u16 }
//! # #[derive(MetaTf)] enum F { A(Alloc) }
//! assert!(F::dtd()?.contains("thread.interpretation = default 0;"));
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `base_offset = B`
//! The value is `B` plus the stored value, signed.
//! ```
//! # use metatf::MetaTf;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Alloc { #[metatf(base_offset = 0x1000_0000, width = 2)] address: u64 }
//! ```
//!
//! ## `delta = I`
//! The value is the previous value plus the stored value, signed; `I` before the first record.
//! ```
//! # use metatf::MetaTf;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Event { #[metatf(delta = 0, width = 1)] time: u64 }
//! ```
//!
//! ## `stride(I, S)`
//! Zero bytes; each value is the previous plus `S` (negative allowed), starting from `I`.
//! ```
//! # use metatf::MetaTf;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Event { #[metatf(stride(100, -1))] countdown: i64 }
//! ```
//!
//! ## `section_offset = N`
//! The stored value is an index into value section `N` (a dictionary of values).
//! ```
//! # use metatf::MetaTf;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Call { #[metatf(section_offset = 16, width = 1)] site: u64 }
//! ```
//!
//! ## `section_stride(N, K)`
//! Zero bytes; values are successive elements of value section `N`, `K` apart.
//! ```
//! # use metatf::MetaTf;
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Call { #[metatf(section_stride(16, 1))] site: u64 }
//! ```
//!
//! ## `count = "field"` (repeated field)
//! A `Vec` of integers repeated as many times as the integer field just before it says: the
//! DTD's `field * element`. The element takes the other field attributes; the writer checks
//! that the count equals the number of elements, as the universal writer does.
//! ```
//! # use metatf::MetaTf; use metatf::typed::{Format, TypedReader, TypedWriter};
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(tag = 4)]
//! struct Stack {
//!     depth: u8,
//!     #[metatf(count = "depth", name = "frame", delta = 0, width = 2)]
//!     frames: Vec<u64>,
//! }
//! # #[derive(MetaTf, Debug, PartialEq)] enum F { S(Stack) }
//! assert!(F::dtd()?.contains("stack : (tag, depth * frame)"));
//! let mut w = TypedWriter::<F, _>::new(Vec::new(), metatf::Codec::None, 0)?;
//! w.write(&F::S(Stack { depth: 2, frames: vec![0x4000, 0x4010] }))?;
//! let bytes = w.finish()?;
//! let back: Vec<F> = TypedReader::new(&bytes[..])?.collect::<Result<_, _>>()?;
//! assert_eq!(back, [F::S(Stack { depth: 2, frames: vec![0x4000, 0x4010] })]);
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `model = "..."`
//! The field's model interpretation in DTD spelling (docs/FORMAT.md §4, "The `model`
//! property"): the primary predictor, then up to four more, separated by `,`; a field of
//! another record of the format is `record.field`. It becomes `field.model = ...;` in the
//! record's DTD, parsed by the DTD front end like any other, so a misspelled predictor or a
//! field the record lacks is a compile error, and a field of another record an error of
//! [`Format::plan`](crate::typed::Format::plan). Traces coded by the model engine (a format
//! with [`model = "auto"`](#model--auto-on-an-enum), or [`TypedWriter::modelled`]) code the
//! field with exactly these predictors in every block; the other fields get the predictors
//! that measure cheapest on the block. The record layout has no predictors and ignores them.
//!
//! [`TypedWriter::modelled`]: crate::typed::TypedWriter::modelled
//! ```
//! # use metatf::MetaTf; use metatf::typed::{Format, TypedReader, TypedWriter};
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(tag = 4)]
//! struct Alloc { size: u32, #[metatf(model = "last, reuse size, reuse")] ptr: u64 }
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(tag = 5)]
//! struct Free { #[metatf(model = "none, live alloc.ptr")] ptr: u64 }
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(section = 1, name = "heap")]
//! enum Heap { Alloc(Alloc), Free(Free) }
//!
//! let dtd = Heap::dtd()?;
//! assert!(dtd.contains("ptr.model = none, live alloc.ptr;"));
//! assert_eq!(Heap::plan()?.schema().models.len(), 2);
//! let trace = [
//!     Heap::Alloc(Alloc { size: 16, ptr: 4096 }),
//!     Heap::Free(Free { ptr: 4096 }),
//! ];
//! let mut w = TypedWriter::<Heap, _>::modelled(Vec::new())?;
//! for r in &trace {
//!     w.write(r)?;
//! }
//! let bytes = w.finish()?;
//! let back: Vec<Heap> = TypedReader::new(&bytes[..])?.collect::<Result<_, _>>()?;
//! assert_eq!(back, trace);
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! # On an enum
//!
//! ## `section = N`, `name = "..."`, `format = "..."`, `tag_width = N`
//! The DTD section holding the records (default: global records, no section), its name
//! (default: the enum name with a lower-case first letter), the format id in the container
//! header (default: the name), and the width of every tag in bytes (default 1).
//! ```
//! # use metatf::MetaTf; use metatf::typed::Format;
//! # #[derive(MetaTf)] #[metatf(tag = 4)] struct Alloc { size: u32 }
//! #[derive(MetaTf)]
//! #[metatf(section = 1, name = "heap", format = "hatf-lite", tag_width = 2)]
//! enum Heap { Alloc(Alloc) }
//! let dtd = Heap::dtd()?;
//! assert!(dtd.contains("tag.width = 2;") && dtd.contains("section heap 1 {"));
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `sections`
//! The enum's variants each wrap a format enum (the records of one section), and the enum is
//! the format of them all: one writer and one reader for traces that switch sections. Its
//! variants are those of the first enum, then the second's, and so on; the writer writes a
//! `section` record before a record of a section other than the current one. The section
//! enums must agree on `tag_width`. `format = "..."` names it (default: the enum name with a
//! lower-case first letter).
//! ```
//! # use metatf::MetaTf; use metatf::typed::{Format, TypedReader, TypedWriter};
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(tag = 4)]
//! struct Alloc { size: u32 }
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(tag = 4)]
//! struct Gone { address: u64 }
//!
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(section = 1, name = "heap")]
//! enum Heap { Alloc(Alloc) }
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(section = 2, name = "dead")]
//! enum Dead { Gone(Gone) }
//!
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(sections, format = "lives")]
//! enum Lives { Heap(Heap), Dead(Dead) }
//!
//! let trace = [
//!     Lives::Heap(Heap::Alloc(Alloc { size: 16 })),
//!     Lives::Dead(Dead::Gone(Gone { address: 4096 })), // tag 4 again, in section 2
//!     Lives::Heap(Heap::Alloc(Alloc { size: 32 })),
//! ];
//! let mut w = TypedWriter::<Lives, _>::new(Vec::new(), metatf::Codec::None, 0)?;
//! for r in &trace {
//!     w.write(r)?;
//! }
//! assert_eq!(w.records_written(), 6, "three records, three section records");
//! let bytes = w.finish()?;
//! let back: Vec<Lives> = TypedReader::new(&bytes[..])?.collect::<Result<_, _>>()?;
//! assert_eq!(back, trace);
//! assert_eq!(Lives::plan()?.sections(), &[1, 2]);
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `model = "auto"` (on an enum)
//! [`TypedWriter::new`](crate::typed::TypedWriter::new) codes the format's traces with the
//! model engine (header property `engine` = `model`): per block, every field gets the
//! predictors its `model` attribute fixes, or else those that measure cheapest on the block,
//! and the block is range-coded (docs/FORMAT.md §7). The bytes are those
//! [`UniversalWriter::for_format`](crate::UniversalWriter::for_format) writes from the same
//! records. `model = "none"` (the default) keeps the record layout. On a `sections` format
//! the attribute of the outer enum counts. Readers need no switch: the header says.
//! ```
//! # use metatf::MetaTf; use metatf::typed::{Format, TypedReader, TypedWriter};
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(tag = 4)]
//! struct Alloc { size: u32 }
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(section = 1, name = "heap", model = "auto")]
//! enum Heap { Alloc(Alloc) }
//!
//! assert!(Heap::MODEL_ENGINE);
//! let mut w = TypedWriter::<Heap, _>::new(Vec::new(), metatf::Codec::None, 0)?;
//! w.write(&Heap::Alloc(Alloc { size: 16 }))?;
//! let bytes = w.finish()?;
//! let r = TypedReader::<Heap, _>::new(&bytes[..])?;
//! assert_eq!(r.header().property("engine"), Some("model"));
//! let back: Vec<Heap> = r.collect::<Result<_, _>>()?;
//! assert_eq!(back, [Heap::Alloc(Alloc { size: 16 })]);
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! ## `dtd = TEXT`
//! The DTD text the format's traces embed, instead of one built from the records: any
//! `&'static str` constant (a literal, a `const`, `include_str!("file.dtd")`). It must define
//! the format's records in their sections with the same fields; the plan's error names the
//! first record or field that differs. The DTD compiler's `Dtd` enum passes its
//! `DTD_SOURCE` this way, so that its traces carry the very DTD they were compiled from.
//! ```
//! # use metatf::MetaTf; use metatf::typed::Format;
//! const TEXT: &str = "tag.width = 1;\nsize.width = 4;\nsize.interpretation = none;\n\
//!                     section heap 1 { alloc : (tag, size) { tag.value = 4; } }\n";
//! #[derive(MetaTf)]
//! #[metatf(tag = 4)]
//! struct Alloc { size: u32 }
//! #[derive(MetaTf)]
//! #[metatf(section = 1, name = "heap", dtd = TEXT)]
//! enum Heap { Alloc(Alloc) }
//! assert_eq!(Heap::dtd()?, TEXT);
//!
//! #[derive(MetaTf)]
//! #[metatf(section = 1, name = "heap", dtd = "tag.width = 1;\nsection heap 1 { }\n")]
//! enum Missing { Alloc(Alloc) }
//! let err = Missing::plan().unwrap_err().to_string();
//! assert!(err.contains("record alloc (tag 4) is not in section 1"), "{err}");
//! # Ok::<(), metatf::Error>(())
//! ```
//!
//! # On an enum variant
//!
//! ## `tag = N`, `name = "..."` (inline fields)
//! A variant may hold the record's fields itself instead of wrapping a struct; it then takes
//! the struct attributes (`tag` required, `name` defaulting to the variant name with a
//! lower-case first letter) and its fields take the field attributes. The format, its DTD and
//! its bytes are those of the same records written as structs; both kinds mix in one enum.
//! ```
//! # use metatf::MetaTf; use metatf::typed::{Format, TypedReader, TypedWriter};
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(tag = 6)]
//! struct Free { address: u64 }
//!
//! #[derive(MetaTf, Debug, PartialEq)]
//! #[metatf(section = 1, name = "heap")]
//! enum Heap {
//!     #[metatf(tag = 4, name = "alloc")]
//!     Alloc {
//!         size: u32,
//!         #[metatf(delta = 0, width = 2)]
//!         address: u64,
//!     },
//!     Free(Free),
//! }
//! assert!(Heap::dtd()?.contains("alloc : (tag, size, address)"));
//! let mut w = TypedWriter::<Heap, _>::new(Vec::new(), metatf::Codec::None, 0)?;
//! w.write(&Heap::Alloc { size: 16, address: 4096 })?;
//! w.write(&Heap::Free(Free { address: 4096 }))?;
//! let bytes = w.finish()?;
//! let back: Vec<Heap> = TypedReader::new(&bytes[..])?.collect::<Result<_, _>>()?;
//! assert_eq!(back[0], Heap::Alloc { size: 16, address: 4096 });
//! # Ok::<(), metatf::Error>(())
//! ```
