//! The decoding plan of each record: its fields flattened to the leaves the bytes hold.

use std::collections::HashMap;

use metatf_dtd::{FieldDef, FieldKind, RecordDef, Schema};

use crate::error::Error;
use crate::field::{FieldState, MAX_WIDTH};

/// One leaf of a record's field tree.
#[derive(Debug, Clone)]
pub(crate) enum Leaf {
    Scalar {
        position: u16,
        name: String,
        /// Index of this field's state in [`Catalog::initial_states`]: one per (scope, record,
        /// field), so decoding looks states up by index, not by hashing.
        slot: usize,
    },
    Bytes {
        name: String,
        length_position: u16,
    },
    Repeated {
        name: String,
        count_position: u16,
        element: Vec<Leaf>,
    },
}

impl Leaf {
    pub(crate) fn name(&self) -> &str {
        match self {
            Leaf::Scalar { name, .. } | Leaf::Bytes { name, .. } | Leaf::Repeated { name, .. } => {
                name
            }
        }
    }
}

/// What kind of built-in a record is, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    /// An ordinary record, or `comment` (decoded like any vfield record).
    No,
    /// `section`: its first field is the new current section.
    Section,
    /// `metadata`: decoded by hand, its value count depends on its property.
    Metadata,
}

/// A record ready for coding.
#[derive(Debug)]
pub(crate) struct RecordPlan {
    pub(crate) name: String,
    pub(crate) tag: u64,
    pub(crate) leaves: Vec<Leaf>,
    pub(crate) builtin: Builtin,
    /// Index of the scope (0: global, then the DTD's sections in order) the plan belongs to.
    pub(crate) scope: usize,
}

impl RecordPlan {
    /// The scalar leaf at `position` (searching repeated groups too).
    pub(crate) fn scalar(&self, position: u16) -> Option<&Leaf> {
        fn find(leaves: &[Leaf], position: u16) -> Option<&Leaf> {
            leaves.iter().find_map(|l| match l {
                Leaf::Scalar { position: p, .. } if *p == position => Some(l),
                Leaf::Repeated { element, .. } => find(element, position),
                _ => None,
            })
        }
        find(&self.leaves, position)
    }
}

fn flatten(
    fields: &[FieldDef],
    out: &mut Vec<Leaf>,
    base: usize,
    slots: &mut Vec<(u16, FieldState)>,
) {
    for f in fields {
        match &f.kind {
            FieldKind::Scalar {
                width,
                interpretation,
            } => {
                // Repetitions of one position share one state.
                let slot = match slots.iter().position(|(p, _)| *p == f.position) {
                    Some(i) => base + i,
                    None => {
                        slots.push((f.position, FieldState::new(*width, *interpretation)));
                        base + slots.len() - 1
                    }
                };
                out.push(Leaf::Scalar {
                    position: f.position,
                    name: f.name.clone(),
                    slot,
                })
            }
            FieldKind::Bytes { length_position } => out.push(Leaf::Bytes {
                name: f.name.clone(),
                length_position: *length_position,
            }),
            FieldKind::Repeated {
                count_position,
                element,
            } => {
                let mut inner = Vec::new();
                flatten(element, &mut inner, base, slots);
                // An anonymous group `n * (a, b)` is named after its members: `a+b`.
                let name = if f.name.is_empty() {
                    inner.iter().map(Leaf::name).collect::<Vec<_>>().join("+")
                } else {
                    f.name.clone()
                };
                out.push(Leaf::Repeated {
                    name,
                    count_position: *count_position,
                    element: inner,
                });
            }
            FieldKind::Composite(parts) => flatten(parts, out, base, slots),
        }
    }
}

/// Plans a record, appending the initial state of each of its scalar fields to `states`.
fn plan(r: &RecordDef, global: bool, states: &mut Vec<FieldState>) -> RecordPlan {
    let mut leaves = Vec::new();
    let mut slots = Vec::new();
    flatten(&r.fields, &mut leaves, states.len(), &mut slots);
    states.extend(slots.into_iter().map(|(_, s)| s));
    let builtin = match r.name.as_str() {
        "section" if global => Builtin::Section,
        "metadata" if global => Builtin::Metadata,
        _ => Builtin::No,
    };
    RecordPlan {
        name: r.name.clone(),
        tag: r.tag,
        leaves,
        builtin,
        scope: 0,
    }
}

/// Tags below this are found by indexing, not hashing.
const DIRECT_TAGS: usize = 256;

/// The records valid in one scope (the global section or one DTD section).
struct Scope {
    /// Plan index + 1 by tag, 0 when no record has the tag.
    direct: Vec<u32>,
    /// Plans of tags `>= DIRECT_TAGS`.
    other: HashMap<u64, usize>,
}

/// Every record plan, by (section, tag) and by (section, name), local records shadowing global.
pub(crate) struct Catalog {
    /// Scope index of each section number (0 = the global scope, for `None` and undeclared).
    scope_of: Vec<usize>,
    scopes: Vec<Scope>,
    by_name: HashMap<(Option<u8>, String), usize>,
    plans: Vec<RecordPlan>,
    states: Vec<FieldState>,
}

impl Catalog {
    /// Plans every record; refuses widths the runtime cannot code (above 8 bytes).
    pub(crate) fn new(schema: &Schema) -> Result<Catalog, Error> {
        check_widths(schema)?;
        let mut c = Catalog {
            scope_of: vec![0; 256],
            scopes: Vec::new(),
            by_name: HashMap::new(),
            plans: Vec::new(),
            states: Vec::new(),
        };
        let scopes = std::iter::once(None).chain(schema.sections.iter().map(|s| Some(s.number)));
        for scope in scopes {
            if let Some(n) = scope {
                c.scope_of[usize::from(n)] = c.scopes.len();
            }
            c.scopes.push(Scope {
                direct: vec![0; DIRECT_TAGS],
                other: HashMap::new(),
            });
            let local = scope
                .and_then(|n| schema.section(n))
                .map(|s| s.records.as_slice())
                .unwrap_or(&[]);
            let records = local
                .iter()
                .map(|r| (r, false))
                .chain(schema.global_records.iter().map(|r| (r, true)));
            for (r, global) in records {
                if c.by_tag(scope, r.tag).is_some() {
                    continue; // shadowed by a local record
                }
                let mut p = plan(r, global, &mut c.states);
                p.scope = c.scopes.len() - 1;
                c.plans.push(p);
                let i = c.plans.len() - 1;
                let Some(s) = c.scopes.last_mut() else {
                    continue;
                };
                match usize::try_from(r.tag) {
                    Ok(t) if t < DIRECT_TAGS => s.direct[t] = i as u32 + 1,
                    _ => {
                        s.other.insert(r.tag, i);
                    }
                }
                c.by_name.entry((scope, r.name.clone())).or_insert(i);
            }
        }
        Ok(c)
    }

    pub(crate) fn by_tag(&self, section: Option<u8>, tag: u64) -> Option<&RecordPlan> {
        self.plans.get(self.plan_index(section, tag)?)
    }

    /// Every record plan, in catalog order (scope by scope).
    pub(crate) fn plans(&self) -> &[RecordPlan] {
        &self.plans
    }

    /// Index into [`Self::plans`] of the record with `tag` in `section`.
    pub(crate) fn plan_index(&self, section: Option<u8>, tag: u64) -> Option<usize> {
        self.plan_in_scope(self.scope_index(section), tag)
    }

    /// Index into [`Self::plans`] of the record with `tag` in scope number `scope`.
    pub(crate) fn plan_in_scope(&self, scope: usize, tag: u64) -> Option<usize> {
        let scope = self.scopes.get(scope)?;
        let i = match usize::try_from(tag) {
            Ok(t) if t < DIRECT_TAGS => (scope.direct[t] as usize).checked_sub(1)?,
            _ => *scope.other.get(&tag)?,
        };
        Some(i)
    }

    /// Index of the scope of `section` (0: global).
    pub(crate) fn scope_index(&self, section: Option<u8>) -> usize {
        section.map_or(0, |n| self.scope_of[usize::from(n)])
    }

    /// The state every scalar field starts with, indexed by its leaf's `slot`.
    pub(crate) fn initial_states(&self) -> Vec<FieldState> {
        self.states.clone()
    }

    pub(crate) fn by_name(&self, section: Option<u8>, name: &str) -> Option<&RecordPlan> {
        self.by_name
            .get(&(section, name.to_string()))
            .map(|&i| &self.plans[i])
    }
}

/// A schema built by hand (not through the DTD validator) may hold widths above 8.
fn check_widths(schema: &Schema) -> Result<(), Error> {
    fn fields(record: &str, fs: &[FieldDef]) -> Result<(), Error> {
        for f in fs {
            match &f.kind {
                FieldKind::Scalar { width, .. } if *width > MAX_WIDTH => {
                    return Err(Error::Schema {
                        message: format!(
                            "{record}.{} has width {width}; at most {MAX_WIDTH} bytes are allowed",
                            f.name
                        ),
                    })
                }
                FieldKind::Repeated { element, .. } => fields(record, element)?,
                FieldKind::Composite(parts) => fields(record, parts)?,
                _ => {}
            }
        }
        Ok(())
    }
    if schema.tag_width == 0 || schema.tag_width > MAX_WIDTH {
        return Err(Error::Schema {
            message: format!(
                "tag.width is {}; the runtime codes tags of 1 to {MAX_WIDTH} bytes",
                schema.tag_width
            ),
        });
    }
    let locals = schema.sections.iter().flat_map(|s| s.records.iter());
    for r in schema.global_records.iter().chain(locals) {
        fields(&r.name, &r.fields)?;
    }
    Ok(())
}
