//! The resolved schema model: what a validated DTD means, independent of its syntax.
//!
//! This is the contract between the DTD front end, the runtime codec (`metatf`), the derive and the
//! code generator. Fields are identified by their *position* in a record (the tag is position 0),
//! because the same field type may appear twice in one record (`realloc : (tag, address, address)`)
//! and because metadata records name fields by position.

use serde::Serialize;

/// A complete, validated Meta-TF schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Schema {
    /// Width in bytes of every record's tag field (set once, globally; 1 when the DTD is silent).
    pub tag_width: u8,
    /// Records defined outside any section, valid in every section. Always includes the
    /// built-ins `comment`, `section` and `metadata`.
    pub global_records: Vec<RecordDef>,
    /// Sections in the order the DTD declares them.
    pub sections: Vec<Section>,
}

/// One `section NAME NUMBER { ... }` of the DTD.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    /// The section's name (documentation only; unique in the DTD).
    pub name: String,
    /// The section's number, 1–255, unique in the DTD.
    pub number: u8,
    /// Records local to this section.
    pub records: Vec<RecordDef>,
}

/// A record type: a tag value and the fields that follow the tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordDef {
    /// The record's name (`alloc`, `free`, ...).
    pub name: String,
    /// The value of the record's tag field.
    pub tag: u64,
    /// The record's fields in order, *excluding* the tag, which is implicit at position 0.
    pub fields: Vec<FieldDef>,
}

/// One field of a record as it appears in the record's field list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldDef {
    /// The field type's name (`size`, `address`, `length`, ...). Not unique within a record.
    pub name: String,
    /// Position of this field in its record, counting leaves in declaration order (pre-order
    /// through composites and repetitions) with the tag at 0. Metadata records use this number.
    pub position: u16,
    /// What the field holds and how it is encoded.
    pub kind: FieldKind,
}

/// The shape of a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum FieldKind {
    /// An integer field with a width and an interpretation (both changeable by metadata).
    Scalar {
        /// Initial width in bytes (0 for `default`, `stride` and `sectionStride`).
        width: u8,
        /// Initial interpretation.
        interpretation: Interpretation,
    },
    /// A byte string whose length is the value of an earlier scalar field of the same record
    /// (`data.width = length.value;`, as in `vfield`).
    Bytes {
        /// Position of the scalar field holding the length in bytes.
        length_position: u16,
    },
    /// `count * element`: the element fields repeated as many times as the value of an
    /// earlier scalar field of the same record.
    Repeated {
        /// Position of the scalar field holding the repetition count.
        count_position: u16,
        /// The repeated fields (one field, or several for `count * (a, b)`).
        element: Vec<FieldDef>,
    },
    /// `(a, b, ...)`: a group of fields, kept for documentation and code generation.
    Composite(Vec<FieldDef>),
}

/// How a scalar field's stored bits become its value (section 4.3 and Appendix A of the paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Interpretation {
    /// The stored value is the value.
    None,
    /// Zero width; the value is always this default.
    Default(u64),
    /// The value is the base plus the signed stored value.
    BaseOffset(u64),
    /// The value is the previous value plus the signed stored value; the first record after the
    /// setting uses `initial` as the previous value.
    Delta(u64),
    /// Zero width; the value is the previous value plus `stride` (two's complement), starting
    /// from `initial`.
    Stride {
        /// Previous value assumed before the first record.
        initial: u64,
        /// Added at every record (wrapping, two's complement).
        stride: u64,
    },
    /// The stored value is an offset (in elements) into section `section`.
    SectionOffset(u8),
    /// Zero width; values are taken from successive elements of section `section`, advancing by
    /// `stride` elements each time.
    SectionStride {
        /// The section holding the values.
        section: u8,
        /// Elements to advance after each read.
        stride: u64,
    },
}

impl Interpretation {
    /// The property code a metadata record uses for this interpretation (Appendix B table).
    pub fn property_code(&self) -> u8 {
        match self {
            Interpretation::None => 1,
            Interpretation::BaseOffset(_) => 2,
            Interpretation::Delta(_) => 3,
            Interpretation::Default(_) => 4,
            Interpretation::SectionOffset(_) => 5,
            Interpretation::Stride { .. } => 6,
            Interpretation::SectionStride { .. } => 7,
        }
    }

    /// True when the interpretation forces the field's width to zero.
    pub fn is_zero_width(&self) -> bool {
        matches!(
            self,
            Interpretation::Default(_)
                | Interpretation::Stride { .. }
                | Interpretation::SectionStride { .. }
        )
    }
}

impl Schema {
    /// Every section number with the records valid in it: the section's own records followed by
    /// the global ones. A local record shadows a global record with the same tag.
    pub fn section(&self, number: u8) -> Option<&Section> {
        self.sections.iter().find(|s| s.number == number)
    }

    /// Looks a record up by tag in a section (local records first, then global ones).
    pub fn record_by_tag(&self, section: Option<u8>, tag: u64) -> Option<&RecordDef> {
        section
            .and_then(|n| self.section(n))
            .and_then(|s| s.records.iter().find(|r| r.tag == tag))
            .or_else(|| self.global_records.iter().find(|r| r.tag == tag))
    }
}

impl RecordDef {
    /// The scalar or byte-string field at `position`, looking inside composites and repetition
    /// elements (this is how a metadata record's `field` byte is resolved). Position 0 is the
    /// tag, which has no [`FieldDef`], so it gives `None`.
    pub fn field_at(&self, position: u16) -> Option<&FieldDef> {
        fn find(fields: &[FieldDef], position: u16) -> Option<&FieldDef> {
            fields.iter().find_map(|f| match &f.kind {
                FieldKind::Scalar { .. } | FieldKind::Bytes { .. } => {
                    (f.position == position).then_some(f)
                }
                FieldKind::Repeated { element, .. } => find(element, position),
                FieldKind::Composite(children) => find(children, position),
            })
        }
        find(&self.fields, position)
    }

    /// The scalar and byte-string fields in position order (the tag excluded).
    pub fn leaves(&self) -> Vec<&FieldDef> {
        fn walk<'a>(fields: &'a [FieldDef], out: &mut Vec<&'a FieldDef>) {
            for f in fields {
                match &f.kind {
                    FieldKind::Scalar { .. } | FieldKind::Bytes { .. } => out.push(f),
                    FieldKind::Repeated { element, .. } => walk(element, out),
                    FieldKind::Composite(children) => walk(children, out),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.fields, &mut out);
        out
    }
}
