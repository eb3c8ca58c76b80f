//! The coding plan of a typed format, built once from its DTD: for every record type (and the
//! built-in comment, section and metadata records) the positions and initial states of its
//! scalar fields, and per section scope a table from tag to record type.

use std::collections::HashMap;

use metatf_dtd::{FieldDef, FieldKind, Interpretation, RecordDef, Schema};

use super::compat::first_difference;
use super::spec::FormatSpec;
use crate::field::bits::unsigned_width;
use crate::field::{FieldState, MAX_WIDTH};

/// One record type the typed codec knows: a format's record or a built-in.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) tag: u64,
    /// Field position of each scalar, in field order (ordinal → position).
    pub(crate) positions: Vec<u16>,
    /// Initial state of each scalar, from the DTD.
    pub(crate) initial: Vec<FieldState>,
    /// Index of the slot's first scalar in a scope's flat state array.
    pub(crate) offset: usize,
    /// Whether the tag fits the DTD's `tag.width`.
    pub(crate) tag_fits: bool,
    /// The states the generated fast path assumes (see [`super::RecordSpec::layout`]); empty
    /// for the built-ins, which have no fast path.
    pub(crate) layout: Vec<Option<Interpretation>>,
}

impl Slot {
    /// Whether `states` (this slot's) are those the fast path was compiled for.
    fn fast(&self, states: &[FieldState]) -> bool {
        !self.layout.is_empty()
            && self.layout.len() == states.len()
            && self.layout.iter().zip(states).all(|(want, s)| match want {
                // `none` too: the state a writer switches a misfit to, which the fast path
                // codes as well, so that one such switch does not cost it for good.
                Some(i) => s.interpretation() == *i || s.is_none(),
                None => true,
            })
    }

    pub(crate) fn ordinal(&self, position: u16) -> Option<usize> {
        self.positions.iter().position(|&p| p == position)
    }
}

/// What a tag means in one section scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A record of the format: its variant index (= slot index).
    Variant(usize),
    /// The built-in comment record.
    Comment,
    /// The built-in section record.
    Section,
    /// The built-in metadata record.
    Metadata,
}

/// The tags valid while one section (or none) is current.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub(crate) section: Option<u8>,
    dense: Vec<Option<Kind>>,
    sparse: HashMap<u64, Kind>,
}

impl Scope {
    #[inline]
    pub(crate) fn kind(&self, tag: u64) -> Option<Kind> {
        match self.dense.get(tag as usize) {
            Some(k) if tag < 256 => *k,
            _ => self.sparse.get(&tag).copied(),
        }
    }

    fn insert(&mut self, tag: u64, kind: Kind) {
        if self.kind(tag).is_some() {
            return; // shadowed by a local record
        }
        if tag < 256 {
            self.dense[tag as usize] = Some(kind);
        } else {
            self.sparse.insert(tag, kind);
        }
    }
}

/// Everything the typed reader and writer need, built once per format.
#[derive(Debug)]
pub struct FormatPlan {
    pub(crate) dtd: String,
    pub(crate) format: String,
    pub(crate) schema: Schema,
    pub(crate) slots: Vec<Slot>,
    pub(crate) variants: usize,
    /// The DTD section holding the format's records, if they are all in one.
    pub(crate) records_section: Option<u8>,
    /// The sections holding the format's records, in variant order.
    pub(crate) sections: Vec<u8>,
    /// Per variant, the section its records belong to (`None`: global).
    pub(crate) slot_sections: Vec<Option<u8>>,
    pub(crate) scopes: Vec<Scope>,
    /// The tags valid in a section that a trace's DTD declares and the format's does not.
    pub(crate) foreign: Scope,
    pub(crate) total_states: usize,
}

/// The field states of one section scope, and per slot whether its fast path applies.
#[derive(Debug, Clone)]
pub(crate) struct ScopeStates {
    /// Every slot's states, back to back (slot `i` at `slots[i].offset`).
    pub(crate) fields: Vec<FieldState>,
    /// Per slot: its states are those its generated fast path was compiled for.
    pub(crate) fast: Vec<bool>,
}

/// Slot index of the built-in comment record, relative to the number of variants.
pub(crate) const COMMENT: usize = 0;
/// Slot index of the built-in section record, relative to the number of variants.
pub(crate) const SECTION: usize = 1;
/// Slot index of the built-in metadata record, relative to the number of variants.
pub(crate) const METADATA: usize = 2;

impl FormatPlan {
    /// Builds the plan from what generated code describes; the error says what does not fit.
    pub fn new(spec: &FormatSpec) -> Result<FormatPlan, String> {
        let derived_text = spec.derived_dtd();
        let derived = metatf_dtd::parse_schema(&derived_text, spec.format)
            .map_err(|d| format!("the DTD of format {} is invalid:\n{d}", spec.format))?;
        let (dtd, schema) = match spec.source {
            None => (derived_text, derived.clone()),
            Some(text) => {
                let schema = metatf_dtd::parse_schema(text, spec.format).map_err(|d| {
                    format!("the DTD given to format {} is invalid:\n{d}", spec.format)
                })?;
                (text.to_string(), schema)
            }
        };
        if schema.tag_width != spec.tag_width {
            return Err(format!(
                "tag.width is {} in the DTD given to format {} but {} in its records",
                schema.tag_width, spec.format, spec.tag_width
            ));
        }
        let mut slots = Vec::new();
        let mut sections_of_slots = Vec::new();
        for (section, r) in spec.records() {
            let place =
                section.map_or("the global records".to_string(), |n| format!("section {n}"));
            let mine = derived
                .record_by_tag(section, r.tag)
                .filter(|d| d.name == r.name)
                .ok_or_else(|| format!("record {} (tag {}) is not in the DTD", r.name, r.tag))?;
            let def = schema.record_by_tag(section, r.tag).ok_or_else(|| {
                format!(
                    "record {} (tag {}) is not in {place} of the DTD given to format {}",
                    r.name, r.tag, spec.format
                )
            })?;
            if let Some(difference) = first_difference(mine, def) {
                return Err(format!(
                    "record {} (tag {}, {place}) differs in the DTD given to format {} ({}): \
                     {difference}",
                    r.name, r.tag, spec.format, def.name
                ));
            }
            let mut slot = slot(def)?;
            slot.layout = r.layout.to_vec();
            if slot.positions.len() != r.scalars {
                return Err(format!(
                    "record {} has {} scalar fields in the DTD but {} in Rust",
                    r.name,
                    slot.positions.len(),
                    r.scalars
                ));
            }
            slots.push(slot);
            sections_of_slots.push(section);
        }
        let variants = slots.len();
        for name in ["comment", "section", "metadata"] {
            let def = schema
                .global_records
                .iter()
                .find(|d| d.name == name)
                .ok_or_else(|| format!("built-in record {name} is missing"))?;
            slots.push(slot(def)?);
        }
        let mut offset = 0;
        for s in &mut slots {
            s.tag_fits = unsigned_width(s.tag) <= schema.tag_width;
            s.offset = offset;
            offset += s.positions.len();
        }
        let mut scopes = Vec::new();
        let numbers = std::iter::once(None).chain(schema.sections.iter().map(|s| Some(s.number)));
        // A section's own records first: they shadow global records of the same tag.
        let scope_for = |section: Option<u8>| {
            let mut scope = Scope {
                section,
                dense: vec![None; 256],
                sparse: HashMap::new(),
            };
            for (i, s) in sections_of_slots.iter().enumerate() {
                if s.is_some() && *s == section {
                    scope.insert(slots[i].tag, Kind::Variant(i));
                }
            }
            for (i, s) in sections_of_slots.iter().enumerate() {
                if s.is_none() {
                    scope.insert(slots[i].tag, Kind::Variant(i));
                }
            }
            let builtin = [Kind::Comment, Kind::Section, Kind::Metadata];
            for (k, kind) in builtin.into_iter().enumerate() {
                scope.insert(slots[variants + k].tag, kind);
            }
            scope
        };
        for section in numbers {
            scopes.push(scope_for(section));
        }
        // A section only a trace's DTD declares holds none of the format's records but the
        // global ones; the built-ins are valid there as everywhere.
        let foreign = scope_for(None);
        let mut sections: Vec<u8> = spec.sections().collect();
        sections.dedup();
        Ok(FormatPlan {
            dtd,
            format: spec.format.to_string(),
            schema,
            slots,
            variants,
            records_section: match sections.as_slice() {
                [one] => Some(*one),
                _ => None,
            },
            sections,
            slot_sections: sections_of_slots,
            scopes,
            foreign,
            total_states: offset,
        })
    }

    /// The format's DTD text (written into every container the typed writer makes).
    pub fn dtd(&self) -> &str {
        &self.dtd
    }

    /// The schema the DTD text lowers to.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The format identifier.
    pub fn format(&self) -> &str {
        &self.format
    }

    /// The number of the DTD section holding the format's records (the section record a
    /// writer writes before them), or `None` when they are global records or span several
    /// sections (see [`Self::sections`]).
    ///
    /// ```
    /// use metatf::typed::Format;
    /// use metatf::MetaTf;
    ///
    /// #[derive(MetaTf)]
    /// #[metatf(tag = 4)]
    /// struct Alloc {
    ///     size: u32,
    /// }
    ///
    /// #[derive(MetaTf)]
    /// #[metatf(section = 3, name = "heap")]
    /// enum Heap {
    ///     Alloc(Alloc),
    /// }
    ///
    /// assert_eq!(Heap::plan()?.records_section(), Some(3));
    /// assert_eq!(Heap::plan()?.sections(), &[3]);
    /// # Ok::<(), metatf::Error>(())
    /// ```
    pub fn records_section(&self) -> Option<u8> {
        self.records_section
    }

    /// The numbers of the DTD sections holding the format's records, in variant order (empty
    /// for a format of global records).
    pub fn sections(&self) -> &[u8] {
        &self.sections
    }

    /// The section the records of variant `variant` belong to (`None`: global records, or no
    /// such variant).
    pub fn variant_section(&self, variant: usize) -> Option<u8> {
        self.slot_sections.get(variant).copied().flatten()
    }

    pub(crate) fn scope_index(&self, section: Option<u8>) -> Option<usize> {
        self.scopes.iter().position(|s| s.section == section)
    }

    /// Fresh field states for one scope: every slot's initial states, back to back.
    pub(crate) fn fresh_states(&self) -> ScopeStates {
        let mut fields = Vec::with_capacity(self.total_states);
        for s in &self.slots {
            fields.extend_from_slice(&s.initial);
        }
        let mut st = ScopeStates {
            fields,
            fast: vec![false; self.slots.len()],
        };
        for i in 0..self.slots.len() {
            self.refresh_fast(&mut st, i);
        }
        st
    }

    /// Recomputes whether slot `slot` may take its fast path, after its states changed.
    pub(crate) fn refresh_fast(&self, st: &mut ScopeStates, slot: usize) {
        if let (Some(s), Some(flag)) = (self.slots.get(slot), st.fast.get_mut(slot)) {
            *flag = st
                .fields
                .get(s.offset..s.offset + s.positions.len())
                .is_some_and(|states| s.fast(states));
        }
    }

    /// The tag of the record named `record` valid in `section`, and the position of its scalar
    /// field named `field` (DTD names); the error says which name is unknown or ambiguous.
    pub(crate) fn field_position(
        &self,
        section: Option<u8>,
        record: &str,
        field: &str,
    ) -> Result<(u64, u16), String> {
        field_position(&self.schema, section, record, field)
    }

    pub(crate) fn builtin(&self, which: usize) -> &Slot {
        &self.slots[self.variants + which]
    }
}

/// The tag of the record named `record` valid in `section` of `schema`, and the position of its
/// scalar field named `field` (DTD names); the error says which name is unknown or ambiguous.
pub(crate) fn field_position(
    schema: &Schema,
    section: Option<u8>,
    record: &str,
    field: &str,
) -> Result<(u64, u16), String> {
    let local = section
        .and_then(|n| schema.section(n))
        .into_iter()
        .flat_map(|s| s.records.iter());
    let def = local
        .chain(schema.global_records.iter())
        .find(|r| r.name == record)
        .ok_or_else(|| {
            let place = match section {
                None => "the global records".to_string(),
                Some(n) => format!("section {n}"),
            };
            format!("no record named {record} in {place}")
        })?;
    let scalars: Vec<&FieldDef> = def
        .leaves()
        .into_iter()
        .filter(|f| matches!(f.kind, FieldKind::Scalar { .. }))
        .collect();
    let mut named = scalars.iter().filter(|f| f.name == field);
    match (named.next(), named.next()) {
        (Some(f), None) => Ok((def.tag, f.position)),
        (Some(a), Some(b)) => Err(format!(
            "record {record} has several fields named {field} (positions {}, {}, ...): \
             name it by position",
            a.position, b.position
        )),
        (None, _) => {
            let names: Vec<&str> = scalars.iter().map(|f| f.name.as_str()).collect();
            Err(format!(
                "record {record} has no scalar field named {field}; its scalar fields are: {}",
                names.join(", ")
            ))
        }
    }
}

fn slot(def: &RecordDef) -> Result<Slot, String> {
    let mut s = Slot {
        name: def.name.clone(),
        tag: def.tag,
        positions: Vec::new(),
        initial: Vec::new(),
        offset: 0,
        tag_fits: true,
        layout: Vec::new(),
    };
    collect(&def.name, &def.fields, &mut s)?;
    Ok(s)
}

fn collect(record: &str, fields: &[FieldDef], s: &mut Slot) -> Result<(), String> {
    for f in fields {
        match &f.kind {
            FieldKind::Scalar {
                width,
                interpretation,
            } => {
                if *width > MAX_WIDTH {
                    return Err(format!("{record}.{} is wider than 8 bytes", f.name));
                }
                s.positions.push(f.position);
                s.initial.push(FieldState::new(*width, *interpretation));
            }
            FieldKind::Bytes { .. } => {}
            FieldKind::Composite(parts) => collect(record, parts, s)?,
            // One state per element leaf, shared by the repetitions (as the universal codec).
            FieldKind::Repeated { element, .. } => collect(record, element, s)?,
        }
    }
    Ok(())
}
