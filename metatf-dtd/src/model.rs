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
    /// The model interpretations the DTD fixes (`field.model = ...;`), one per scalar field of
    /// a trace record whose `model` property is not `auto`, in the order the records are
    /// declared. Fields not listed get the model engine's automatic choice.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<FieldModel>,
}

/// Longest list of hit predictors a `model` property may give after its primary predictor.
pub const MODEL_MAX_LIST: usize = 4;
/// Largest order of `fcm` and `dfcm`.
pub const MODEL_MAX_ORDER: u8 = 3;

/// The model interpretation a DTD fixes for one scalar field of one record
/// (docs/FORMAT.md §4, "The `model` property"; §7, "Model entries").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldModel {
    /// The section the record belongs to (`None`: a global record, valid in every section).
    pub section: Option<u8>,
    /// The record's name.
    pub record: String,
    /// The record's tag.
    pub tag: u64,
    /// The field's position in the record (see [`FieldDef::position`]).
    pub position: u16,
    /// The field's name.
    pub field: String,
    /// The predictor a value no listed predictor hits is coded against, as a residual.
    pub primary: Predictor,
    /// Up to [`MODEL_MAX_LIST`] predictors; a value is coded as the index of the first that
    /// hits.
    pub list: Vec<Predictor>,
}

/// A field of the same record (`record` is `None`) or of another record of the same scope,
/// named by a predictor.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct FieldRef {
    /// The other record's name, or `None` for the record the model belongs to.
    pub record: Option<String>,
    /// The field's name.
    pub field: String,
    /// The field's position in its record.
    pub position: u16,
}

/// One model interpretation of a field (a predictor of the model engine, docs/FORMAT.md §7).
/// *Value* predictors guess the next value; *rank* predictors ([`Predictor::is_rank`]) keep a
/// list in which the value is looked up by rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum Predictor {
    /// `none`: always 0 (the value itself is the residual).
    None,
    /// `last` (the field's own last value: delta) or `last F` (the last value of field F).
    Last(Option<FieldRef>),
    /// `stride`: last value plus the last difference.
    Stride,
    /// `sum F`: the field's last value plus the last value of field F.
    Sum(FieldRef),
    /// `fcm K`: the value that followed the same last K values (1 to [`MODEL_MAX_ORDER`]).
    Fcm(u8),
    /// `dfcm K`: last value plus the difference that followed the same last K differences.
    Dfcm(u8),
    /// `key F`: the field's value the last time field F had its current value.
    Key(FieldRef),
    /// `keystride F`: as `key F`, plus the difference seen the last two times under that key.
    KeyStride(FieldRef),
    /// `keyshift F`: as `key F`, plus the last nonzero difference from that guess under any
    /// key (a shift every key undergoes alike).
    KeyShift(FieldRef),
    /// `keydelta F` (rank): rank of the difference from the `key F` guess among the recent
    /// distinct nonzero such differences under any key.
    KeyDelta(FieldRef),
    /// `live F` (rank): rank among the live values field F created; a hit ends the value.
    Live(FieldRef),
    /// `mtf` (rank): rank in the move-to-front list of the field's own values.
    Mtf,
    /// `livenext F` (rank): as `live F`, coded as an offset from where the last ended value
    /// stood.
    LiveNext(FieldRef),
    /// `reuse` or `reuse F` (rank): rank among the values that ended, first among those
    /// created with the current value of field F.
    Reuse(Option<FieldRef>),
    /// `top F`: the largest value so far plus the step that followed the last largest value
    /// created with the same value of field F (a bump allocator's next block).
    Top(FieldRef),
    /// `recent` or `recent F` (rank): rank in one move-to-front list of the values of this
    /// field and of every field of the same name in the scope's other records, coded in the
    /// context of field F's value.
    Recent(Option<FieldRef>),
    /// `match`: the field's value in the record after the last earlier occurrence of the
    /// previous record (a run of records that repeats, followed through changed values).
    Match,
}

impl Predictor {
    /// The predictor's name in a DTD.
    pub fn name(&self) -> &'static str {
        match self {
            Predictor::None => "none",
            Predictor::Last(_) => "last",
            Predictor::Stride => "stride",
            Predictor::Sum(_) => "sum",
            Predictor::Fcm(_) => "fcm",
            Predictor::Dfcm(_) => "dfcm",
            Predictor::Key(_) => "key",
            Predictor::KeyStride(_) => "keystride",
            Predictor::KeyShift(_) => "keyshift",
            Predictor::KeyDelta(_) => "keydelta",
            Predictor::Live(_) => "live",
            Predictor::Mtf => "mtf",
            Predictor::LiveNext(_) => "livenext",
            Predictor::Reuse(_) => "reuse",
            Predictor::Top(_) => "top",
            Predictor::Recent(_) => "recent",
            Predictor::Match => "match",
        }
    }

    /// True for predictors that code a rank in a list rather than guess a value.
    pub fn is_rank(&self) -> bool {
        matches!(
            self,
            Predictor::Live(_)
                | Predictor::Mtf
                | Predictor::LiveNext(_)
                | Predictor::Reuse(_)
                | Predictor::KeyDelta(_)
                | Predictor::Recent(_)
        )
    }

    /// The field the predictor names, if any.
    pub fn field(&self) -> Option<&FieldRef> {
        match self {
            Predictor::Last(f) | Predictor::Reuse(f) | Predictor::Recent(f) => f.as_ref(),
            Predictor::Sum(f)
            | Predictor::Key(f)
            | Predictor::KeyStride(f)
            | Predictor::KeyShift(f)
            | Predictor::KeyDelta(f)
            | Predictor::Live(f)
            | Predictor::LiveNext(f)
            | Predictor::Top(f) => Some(f),
            Predictor::None | Predictor::Stride | Predictor::Fcm(_) | Predictor::Dfcm(_) => None,
            Predictor::Mtf | Predictor::Match => None,
        }
    }
}

impl std::fmt::Display for FieldRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.record {
            Some(r) => write!(f, "{r}.{}", self.field),
            None => f.write_str(&self.field),
        }
    }
}

/// The DTD spelling: `sum size`, `live alloc.ptr`, `fcm 2`.
impl std::fmt::Display for Predictor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())?;
        match self {
            Predictor::Fcm(k) | Predictor::Dfcm(k) => write!(f, " {k}"),
            other => match other.field() {
                Some(r) => write!(f, " {r}"),
                None => Ok(()),
            },
        }
    }
}

/// The DTD spelling of the whole property value: the primary, then the list, separated by `, `.
impl std::fmt::Display for FieldModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.primary)?;
        for p in &self.list {
            write!(f, ", {p}")?;
        }
        Ok(())
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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

    /// The model interpretation the DTD fixes for the field at `position` of the record named
    /// `record` in `section` (`None`: a global record), if any.
    pub fn model_of(
        &self,
        section: Option<u8>,
        record: &str,
        position: u16,
    ) -> Option<&FieldModel> {
        self.models
            .iter()
            .find(|m| m.section == section && m.record == record && m.position == position)
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
