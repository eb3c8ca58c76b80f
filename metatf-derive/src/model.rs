//! The typed attribute model: what the `#[metatf(...)]` attributes of a struct or enum mean,
//! after parsing and checking, before any code is generated.

use metatf_dtd::Interpretation;
use proc_macro2::Span;

/// The Rust type of a record field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// An integer: its size in bytes.
    Int(u8),
    /// `Vec<u8>`: a `vfield` (length, then the bytes), named `name : vfield` in the DTD.
    Bytes,
    /// `Vec<integer>` with `count = "n"`: the DTD's `n * element`, repeated as many times as
    /// the earlier integer field `n` says; the integer's size in bytes.
    Repeated(u8),
}

/// One field of a record struct.
#[derive(Debug, Clone)]
pub struct FieldModel {
    /// The Rust field name.
    pub ident: syn::Ident,
    /// The field type name in the DTD.
    pub dtd_name: String,
    /// The Rust type.
    pub ty: FieldType,
    /// Width in bytes (0 for zero-width interpretations and byte strings).
    pub width: u8,
    /// The initial interpretation.
    pub interpretation: Interpretation,
    /// The `model = "..."` attribute: the field's model interpretation in DTD spelling
    /// (`sum size, last`), written into the record's DTD as `field.model = ...;`.
    pub model: Option<String>,
    /// Where to point errors about this field.
    pub span: Span,
    /// For [`FieldType::Repeated`]: the Rust name given by `count = "..."`, then (once
    /// resolved) the index of that field in the record.
    pub count: Option<(String, Option<usize>)>,
}

/// A struct deriving `MetaTf`: one record type.
#[derive(Debug, Clone)]
pub struct RecordModel {
    /// The record's name in the DTD.
    pub name: String,
    /// The record's tag value.
    pub tag: u64,
    /// The fields in order.
    pub fields: Vec<FieldModel>,
}

/// An enum deriving `MetaTf`: a format made of record types.
#[derive(Debug, Clone)]
pub struct FormatModel {
    /// Format identifier for the container header.
    pub format: String,
    /// Width of tags in bytes.
    pub tag_width: u8,
    /// `(name, number)` of the section holding the records, or `None` for global records.
    pub section: Option<(String, u8)>,
    /// The record types, one per variant (with `sections`: one format per variant).
    pub variants: Vec<VariantModel>,
    /// `#[metatf(sections)]`: each variant wraps a format (the records of one section), and
    /// the enum is the format of them all.
    pub sections: bool,
    /// `#[metatf(dtd = ...)]`: the DTD text traces embed, instead of one built from the records.
    pub source: Option<syn::Expr>,
    /// `#[metatf(model = "auto")]`: the typed writer codes with the model engine by default
    /// (`model = "none"`, the default: the paper's record layout).
    pub model_engine: bool,
}

/// One variant of a format enum: a record type.
#[derive(Debug, Clone)]
pub enum VariantModel {
    /// `Alloc(Alloc)`: wraps a struct deriving `MetaTf` (or, with `sections`, `Heap(Heap)`:
    /// an enum deriving `MetaTf`).
    Wrapped(syn::Ident, syn::Type),
    /// `#[metatf(tag = 4)] Alloc { size: u32 }`: the record's fields inline.
    Inline(syn::Ident, RecordModel),
}

impl VariantModel {
    /// The variant's name.
    pub fn ident(&self) -> &syn::Ident {
        match self {
            VariantModel::Wrapped(i, _) | VariantModel::Inline(i, _) => i,
        }
    }
}
