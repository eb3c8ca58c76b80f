//! The DTD compiler: a [`Schema`](crate::Schema) to readable Rust source that uses `#[derive(MetaTf)]`.
//!
//! Each trace record becomes a struct with one `u64` per scalar field (so any value a trace can
//! hold fits) and a `Vec<u8>` per `vfield`; each section with records becomes an enum of its
//! records, and the global records (outside any section, built-ins excepted) an enum named
//! `Trace`. The `metatf` crate compiles the result into a typed reader and writer that code the
//! same bytes as the universal codec with this DTD.
//!
//! ```
//! let dtd = "size.width = 4; size.interpretation = none;\n\
//!            section heap 1 { alloc : (tag, size, vfield) { tag.value = 4; } }";
//! let schema = metatf_dtd::parse_schema(dtd, "heap.dtd").unwrap();
//! let rust = metatf_dtd::codegen::generate(&schema, dtd);
//! assert!(rust.contains("pub struct Alloc {"));
//! assert!(rust.contains("#[metatf(width = 4, interpretation = \"none\")]"));
//! assert!(rust.contains("pub enum Heap {"));
//! ```

mod build;
mod names;
mod render;

pub use build::{compile_dtd, compile_dtd_to, compile_dtd_to_with, compile_dtd_with, Compiled};
pub use render::{format_types, generate, generate_with};

use crate::{Interpretation, Schema};

/// How the DTD compiler generates code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Whether the generated formats' typed writers code with the model engine (the formats
    /// get `#[metatf(model = "auto")]`): `Some(true)` or `Some(false)` decides; `None`, the
    /// default, follows the DTD: the model engine when it fixes any field's model
    /// (`field.model = ...;`), which only the model engine reads.
    pub model_engine: Option<bool>,
}

impl Options {
    /// Whether code generated for `schema` codes with the model engine.
    pub fn model_engine(&self, schema: &Schema) -> bool {
        self.model_engine.unwrap_or(!schema.models.is_empty())
    }
}

/// The DTD spelling of an interpretation: `none`, `delta 0`, `stride 1 8`, `sectionOffset 3`.
pub fn interpretation_text(i: Interpretation) -> String {
    match i {
        Interpretation::None => "none".into(),
        Interpretation::Default(v) => format!("default {v}"),
        Interpretation::BaseOffset(v) => format!("baseOffset {v}"),
        Interpretation::Delta(v) => format!("delta {v}"),
        Interpretation::Stride { initial, stride } => format!("stride {initial} {stride}"),
        Interpretation::SectionOffset(s) => format!("sectionOffset {s}"),
        Interpretation::SectionStride { section, stride } => {
            format!("sectionStride {section} {stride}")
        }
    }
}
