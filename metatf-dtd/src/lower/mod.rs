//! From checked declarations to the [`model`](crate::model): expands each trace record's fields
//! (nested records, composites, repetitions), numbers them by position, and resolves every
//! field's width and interpretation through the scopes record → nested record → section → global.
//!
//! `expand.rs` builds the field tree of one record; `resolve.rs` gives each of its fields a width
//! and an interpretation; this file drives both and turns the result into model types.

use std::collections::{HashMap, HashSet};

mod expand;
mod lines;
mod models;
mod resolve;

use crate::ast::{Body, Field, Origin, Record, Span, Token};
use crate::diagnostic::Problem;
use crate::lines::{LineRecord, LineSpec};
use crate::model::{FieldDef, FieldKind, Interpretation, RecordDef, Schema, Section};
use crate::validate::{is_tagged, tag_value, Home, PropTable, Scopes};
use crate::values::{literal, Literal, PropKind};

/// Records nested in records (through named records used as fields) deeper than this are refused.
const MAX_GROUP_DEPTH: usize = 64;
/// Total fields all records of one DTD may expand to; protects against exponential nesting.
const MAX_TOTAL_LEAVES: usize = 1 << 20;
/// Longest chain of properties referring to each other; keeps the resolver's recursion shallow.
const MAX_REFERENCE_DEPTH: usize = 200;

/// Lowers every trace record and its line pattern; problems found on the way are appended to
/// `problems`.
pub fn lower(scopes: &Scopes<'_>, problems: &mut Vec<Problem>) -> (Schema, LineSpec) {
    let mut patterns: Vec<(Span, LineRecord)> = Vec::new();
    let mut pattern_problems = Vec::new();
    let mut line_of = |r: &Record, def: &RecordDef, section: Option<u8>| {
        let at = r
            .body
            .as_ref()
            .and_then(|b| b.lines.first())
            .map(|l| l.span);
        if let (Some(at), Some(lr)) = (
            at,
            lines::line_record(r, def, section, &mut pattern_problems),
        ) {
            patterns.push((at, lr));
        }
    };
    let mut l = Lowerer {
        scopes,
        problems: Vec::new(),
        used_groups: HashSet::new(),
        tables: HashMap::new(),
        budget: MAX_TOTAL_LEAVES,
        models: Vec::new(),
    };
    let global_records = scopes
        .global_records
        .iter()
        .filter(|r| is_tagged(r))
        .filter_map(|r| {
            let def = l.record(r, Home::Global)?;
            line_of(r, &def, None);
            Some(def)
        })
        .collect();
    let mut sections = Vec::new();
    for (i, s) in scopes.sections.iter().enumerate() {
        let records = s
            .records
            .iter()
            .filter(|r| is_tagged(r))
            .filter_map(|r| {
                let def = l.record(r, Home::Section(i))?;
                line_of(r, &def, Some(s.number));
                Some(def)
            })
            .collect();
        sections.push(Section {
            name: s.decl.name.text.clone(),
            number: s.number,
            records,
        });
    }
    let all_groups = scopes
        .global_records
        .iter()
        .chain(scopes.sections.iter().flat_map(|s| s.records.iter()));
    for g in all_groups {
        if !is_tagged(g) && g.name.span.origin == Origin::User && !l.used_groups.contains(&g.header)
        {
            l.problems.push(
                Problem::new(g.name.span, format!("record `{}` has no tag value", g.name.text))
                    .label("no `tag.value`, and not used as a field")
                    .hint("give it `tag.value = N;` to make it a trace record, or use it as a field of another record"),
            );
        }
    }
    for g in scopes
        .global_records
        .iter()
        .chain(scopes.sections.iter().flat_map(|s| s.records.iter()))
        .filter(|r| !is_tagged(r))
    {
        if let Some(l) = g.body.as_ref().and_then(|b| b.lines.first()) {
            pattern_problems.push(
                Problem::new(l.span, format!("record `{}` has no tag value", g.name.text))
                    .label("a line pattern on a group of fields")
                    .hint("line patterns belong to trace records (with `tag.value`)"),
            );
        }
    }
    problems.append(&mut l.problems);
    problems.append(&mut pattern_problems);
    let pending = std::mem::take(&mut l.models);
    // Source order decides which record wins when several patterns match a line.
    patterns.sort_by_key(|(span, _)| *span);
    let mut schema = Schema {
        tag_width: scopes.tag_width,
        global_records,
        sections,
        models: Vec::new(),
    };
    schema.models = models::resolve(&pending, &schema, problems);
    let records: Vec<LineRecord> = patterns.into_iter().map(|(_, r)| r).collect();
    let unmatched = lines::unmatched(scopes.unmatched, &schema, &records, problems);
    let lines = LineSpec { records, unmatched };
    (schema, lines)
}

struct Lowerer<'a, 's> {
    scopes: &'s Scopes<'a>,
    problems: Vec<Problem>,
    used_groups: HashSet<Span>,
    tables: HashMap<Span, PropTable<'a>>,
    budget: usize,
    /// Fields whose `model` property fixes predictors, resolved once every record is lowered.
    models: Vec<models::Pending>,
}

/// A scalar or byte-string field found while expanding a record.
struct Leaf<'a> {
    token: &'a Token,
    position: u16,
    /// Bodies of the record and of the nested records around this field, outermost first.
    chain: Vec<&'a Body>,
    /// Identifiers of the repetitions around this field, outermost first.
    rep: Vec<u32>,
}

enum Node {
    Leaf(usize),
    Composite {
        name: String,
        position: u16,
        children: Vec<Node>,
    },
    Repeated {
        name: String,
        position: u16,
        count: usize,
        element: Vec<Node>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    Fixed(u8),
    Bytes(usize),
}

struct RecordState<'a> {
    record: &'a Record,
    home: Home,
    leaves: Vec<Leaf<'a>>,
    next_position: u32,
    next_rep: u32,
    overflow: bool,
    widths: HashMap<usize, Option<Width>>,
    interps: HashMap<usize, Option<Interpretation>>,
    visiting: Vec<(usize, PropKind)>,
    /// Leaf indices by field name, increasing.
    by_name: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Lowerer<'a, '_> {
    fn record(&mut self, r: &'a Record, home: Home) -> Option<RecordDef> {
        let mut st = RecordState {
            record: r,
            home,
            leaves: Vec::new(),
            next_position: 1,
            next_rep: 0,
            overflow: false,
            widths: HashMap::new(),
            interps: HashMap::new(),
            visiting: Vec::new(),
            by_name: HashMap::new(),
        };
        let chain: Vec<&'a Body> = r.body.iter().collect();
        let mut stack = vec![r.header];
        let nodes: Vec<Node> = match &r.field {
            Field::Composite { fields, .. } => {
                let skip =
                    usize::from(matches!(fields.first(), Some(Field::Name(t)) if t.text == "tag"));
                fields
                    .iter()
                    .skip(skip)
                    .flat_map(|f| self.expand(f, &chain, &[], &mut stack, &mut st))
                    .collect()
            }
            Field::Name(t) if t.text == "tag" => Vec::new(),
            other => {
                let mut nodes = self.expand(other, &chain, &[], &mut stack, &mut st);
                match nodes.pop() {
                    // `comment : vfield` is of type vfield: its fields are vfield's fields.
                    Some(Node::Composite { children, .. }) if matches!(other, Field::Name(_)) => {
                        children
                    }
                    Some(n) => {
                        nodes.push(n);
                        nodes
                    }
                    None => nodes,
                }
            }
        };
        self.check_targets(r, 0, &st);
        for i in 0..st.leaves.len() {
            self.width(&mut st, i);
        }
        let fields = nodes.into_iter().map(|n| self.field_def(n, &st)).collect();
        let tag = tag_value(r)?;
        self.models_of(&st, tag);
        Some(RecordDef {
            name: r.name.text.clone(),
            tag,
            fields,
        })
    }

    /// Notes the fields of the record whose `model` property fixes predictors; a byte string
    /// with one is an error.
    fn models_of(&mut self, st: &RecordState<'a>, tag: u64) {
        let mut seen = HashSet::new();
        for i in 0..st.leaves.len() {
            let Some((_, p)) = self.lookup(st, i, PropKind::Model) else {
                continue;
            };
            let leaf = &st.leaves[i];
            if !seen.insert(leaf.position) {
                continue;
            }
            if let Some(Some(Width::Bytes(_))) = st.widths.get(&i) {
                self.problems.push(
                    Problem::new(
                        p.field.span,
                        format!(
                            "`{}` is a byte string and has no model interpretation",
                            p.field.text
                        ),
                    )
                    .label("a byte string")
                    .hint(format!(
                        "`model` sets the predictors of integer fields; remove it from `{}`",
                        p.field.text
                    )),
                );
                continue;
            }
            // Errors in the value itself were reported when the property was checked.
            if let Ok(Literal::Model(checked)) = literal(p, &self.scopes.declared) {
                if !checked.is_empty() {
                    self.models.push(models::Pending {
                        home: st.home,
                        record: st.record.name.text.clone(),
                        tag,
                        position: leaf.position,
                        field: leaf.token.text.clone(),
                        checked,
                    });
                }
            }
        }
    }

    fn field_def(&mut self, node: Node, st: &RecordState<'a>) -> FieldDef {
        match node {
            Node::Leaf(i) => {
                let leaf = &st.leaves[i];
                let kind = match st.widths.get(&i).copied().flatten() {
                    Some(Width::Bytes(j)) => FieldKind::Bytes {
                        length_position: st.leaves[j].position,
                    },
                    width => FieldKind::Scalar {
                        width: match width {
                            Some(Width::Fixed(n)) => n,
                            _ => 0,
                        },
                        interpretation: st
                            .interps
                            .get(&i)
                            .copied()
                            .flatten()
                            .unwrap_or(Interpretation::None),
                    },
                };
                FieldDef {
                    name: leaf.token.text.clone(),
                    position: leaf.position,
                    kind,
                }
            }
            Node::Composite {
                name,
                position,
                children,
            } => FieldDef {
                name,
                position,
                kind: FieldKind::Composite(
                    children
                        .into_iter()
                        .map(|c| self.field_def(c, st))
                        .collect(),
                ),
            },
            Node::Repeated {
                name,
                position,
                count,
                element,
            } => {
                if let Some(Some(Width::Bytes(_))) = st.widths.get(&count) {
                    let t = st.leaves[count].token;
                    self.problems.push(
                        Problem::new(t.span, format!("the count `{}` is a byte string", t.text))
                            .label("not an integer")
                            .hint("the count before `*` must be an integer field"),
                    );
                }
                FieldDef {
                    name,
                    position,
                    kind: FieldKind::Repeated {
                        count_position: st.leaves[count].position,
                        element: element.into_iter().map(|c| self.field_def(c, st)).collect(),
                    },
                }
            }
        }
    }
}

enum Target {
    Tag,
    Leaf(usize),
}

fn clamp_position(p: u32) -> u16 {
    u16::try_from(p).unwrap_or(u16::MAX)
}

fn interp_name(i: Interpretation) -> &'static str {
    match i {
        Interpretation::None => "none",
        Interpretation::Default(_) => "default",
        Interpretation::BaseOffset(_) => "baseOffset",
        Interpretation::Delta(_) => "delta",
        Interpretation::Stride { .. } => "stride",
        Interpretation::SectionOffset(_) => "sectionOffset",
        Interpretation::SectionStride { .. } => "sectionStride",
    }
}

fn dedup<'x>(names: &[&'x str]) -> Vec<&'x str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(n);
        }
    }
    out
}
