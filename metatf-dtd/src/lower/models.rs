//! Resolving `model` properties once every record is lowered: each predictor's field operand
//! becomes a position in the same record or in another record of the same scope.

use crate::ast::{Span, Token};
use crate::diagnostic::Problem;
use crate::model::{FieldKind, FieldModel, FieldRef, Predictor, RecordDef, Schema};
use crate::predictors::Checked;
use crate::validate::Home;
use crate::values::suggest;

/// A field whose `model` property fixes predictors, found while lowering its record.
pub(super) struct Pending {
    pub(super) home: Home,
    pub(super) record: String,
    pub(super) tag: u64,
    pub(super) position: u16,
    pub(super) field: String,
    pub(super) checked: Vec<Checked>,
}

/// The records visible from a scope, and the scope's name for messages.
struct View<'s> {
    own: &'s [RecordDef],
    global: &'s [RecordDef],
    section: Option<(&'s str, u8)>,
    schema: &'s Schema,
}

impl<'s> View<'s> {
    fn new(schema: &'s Schema, home: Home) -> View<'s> {
        match home {
            Home::Global => View {
                own: &[],
                global: &schema.global_records,
                section: None,
                schema,
            },
            Home::Section(i) => {
                let s = &schema.sections[i];
                View {
                    own: &s.records,
                    global: &schema.global_records,
                    section: Some((s.name.as_str(), s.number)),
                    schema,
                }
            }
        }
    }

    /// The record named `name` in this scope: a local one, else a global one whose tag no
    /// local record takes.
    fn record(&self, name: &str) -> Option<&'s RecordDef> {
        self.own.iter().find(|r| r.name == name).or_else(|| {
            self.global
                .iter()
                .find(|r| r.name == name && !self.own.iter().any(|o| o.tag == r.tag))
        })
    }

    fn names(&self) -> impl Iterator<Item = &'s str> + '_ {
        self.own
            .iter()
            .chain(self.global)
            .map(|r| r.name.as_str())
            .filter(|n| *n != "metadata")
    }
}

/// Resolves every pending model, reporting operands that name no usable field.
pub(super) fn resolve(
    pending: &[Pending],
    schema: &Schema,
    problems: &mut Vec<Problem>,
) -> Vec<FieldModel> {
    let mut out = Vec::new();
    for p in pending {
        let view = View::new(schema, p.home);
        let Some(own) = view.record(&p.record).filter(|r| r.tag == p.tag) else {
            continue;
        };
        let mut ok = true;
        let mut predictors = Vec::new();
        for c in &p.checked {
            match predictor(c, p, own, &view, problems) {
                Some(x) => predictors.push(x),
                None => ok = false,
            }
        }
        if !ok || predictors.is_empty() {
            continue;
        }
        let primary = predictors.remove(0);
        out.push(FieldModel {
            section: view.section.map(|(_, n)| n),
            record: p.record.clone(),
            tag: p.tag,
            position: p.position,
            field: p.field.clone(),
            primary,
            list: predictors,
        });
    }
    out
}

fn predictor(
    c: &Checked,
    p: &Pending,
    own: &RecordDef,
    view: &View<'_>,
    problems: &mut Vec<Problem>,
) -> Option<Predictor> {
    let name = c.info().name;
    let field = match &c.field {
        Some(t) => Some(operand(t, name, p, own, view, problems)?),
        None => None,
    };
    let itself = field
        .as_ref()
        .is_some_and(|f| f.record.is_none() && f.position == p.position);
    if itself && matches!(name, "live" | "livenext") {
        let t = c.field.as_ref().map_or(c.name.span, |t| t.span);
        problems.push(
            Problem::new(t, format!("`{name}` of the field itself"))
                .label("the field being modelled")
                .hint(format!(
                    "`{name}` ranks the live values another field created: name that field, e.g. `{name} alloc.{}`",
                    p.field
                )),
        );
        return None;
    }
    // `last F`, `reuse F` and `recent F` of the field itself are `last`, `reuse` and `recent`.
    let own_or = |f: Option<FieldRef>| if itself { None } else { f };
    Some(match name {
        "none" => Predictor::None,
        "last" => Predictor::Last(own_or(field.clone())),
        "stride" => Predictor::Stride,
        "sum" => Predictor::Sum(field.clone()?),
        "fcm" => Predictor::Fcm(c.order),
        "dfcm" => Predictor::Dfcm(c.order),
        "key" => Predictor::Key(field.clone()?),
        "keystride" => Predictor::KeyStride(field.clone()?),
        "keyshift" => Predictor::KeyShift(field.clone()?),
        "keydelta" => Predictor::KeyDelta(field.clone()?),
        "live" => Predictor::Live(field.clone()?),
        "mtf" => Predictor::Mtf,
        "livenext" => Predictor::LiveNext(field.clone()?),
        "top" => Predictor::Top(field.clone()?),
        "recent" => Predictor::Recent(own_or(field.clone())),
        "match" => Predictor::Match,
        _ => Predictor::Reuse(own_or(field.clone())),
    })
}

/// The span of the part of `t` from byte `from` on.
fn tail(t: &Token, from: usize) -> Span {
    Span {
        start: t.span.start + from,
        ..t.span
    }
}

/// Resolves a field operand: `name` (the same record) or `record.name`.
fn operand(
    t: &Token,
    predictor: &str,
    p: &Pending,
    own: &RecordDef,
    view: &View<'_>,
    problems: &mut Vec<Problem>,
) -> Option<FieldRef> {
    let (record, field, field_span) = match t.text.split_once('.') {
        Some((r, f)) => (Some(r), f, tail(t, r.len() + 1)),
        None => (None, t.text.as_str(), t.span),
    };
    let target = match record {
        None => own,
        Some(r) if r == own.name => own,
        Some(r) => match view.record(r) {
            Some(def) if def.name == "metadata" => {
                problems.push(
                    Problem::new(
                        Span {
                            end: t.span.start + r.len(),
                            ..t.span
                        },
                        "the metadata record has no modelled fields",
                    )
                    .label("metadata")
                    .hint("name a field of a trace record"),
                );
                return None;
            }
            Some(def) => def,
            None => {
                problems.push(absent_record(t, r, p, view));
                return None;
            }
        },
    };
    let leaves = target.leaves();
    let same: Vec<_> = leaves.iter().filter(|f| f.name == field).collect();
    let found = if std::ptr::eq(target, own) {
        // The nearest earlier field of that name, else the first later one, as for the
        // references of `width` and `interpretation`.
        same.iter()
            .rev()
            .find(|f| f.position < p.position)
            .or_else(|| same.iter().find(|f| f.position != p.position))
            .or_else(|| same.first())
    } else {
        same.first()
    };
    let Some(f) = found else {
        let names: Vec<&str> = leaves.iter().map(|f| f.name.as_str()).collect();
        let mut problem = Problem::new(
            field_span,
            format!("record `{}` has no field `{field}`", target.name),
        )
        .label(format!("named by `{predictor}`"));
        problem = match suggest(field, names.iter().copied()) {
            Some(s) => problem.hint(format!("did you mean `{s}`?")),
            None => problem.hint(format!(
                "`{}` has: {}",
                target.name,
                if names.is_empty() {
                    "no fields".to_string()
                } else {
                    names.join(", ")
                }
            )),
        };
        problems.push(problem);
        return None;
    };
    if matches!(f.kind, FieldKind::Bytes { .. }) {
        problems.push(
            Problem::new(
                field_span,
                format!("`{}.{field}` is a byte string", target.name),
            )
            .label("not an integer field")
            .hint(format!(
                "`{predictor}` reads the values of an integer field"
            )),
        );
        return None;
    }
    Some(FieldRef {
        record: (!std::ptr::eq(target, own)).then(|| target.name.clone()),
        field: field.to_string(),
        position: f.position,
    })
}

fn absent_record(t: &Token, r: &str, p: &Pending, view: &View<'_>) -> Problem {
    let span = Span {
        end: t.span.start + r.len(),
        ..t.span
    };
    let elsewhere = view
        .schema
        .sections
        .iter()
        .find(|s| s.records.iter().any(|x| x.name == r));
    let here = match view.section {
        Some((name, _)) => format!("section `{name}`"),
        None => "the global records".to_string(),
    };
    match elsewhere {
        Some(s) => Problem::new(
            span,
            format!(
                "record `{r}` is in section `{}`, not in the scope of `{}`",
                s.name, p.record
            ),
        )
        .label("a field of another scope")
        .hint(format!(
            "a predictor names fields of records valid where `{}` is: those of {here}{}",
            p.record,
            if view.section.is_some() {
                " and the global ones"
            } else {
                ""
            }
        )),
        None => {
            let problem = Problem::new(span, format!("no record `{r}`")).label("not a record");
            match suggest(r, view.names()) {
                Some(s) => problem.hint(format!("did you mean `{s}`?")),
                None => problem.hint(format!(
                    "write `record.field` with a record of {here}, or a field of `{}` alone",
                    p.record
                )),
            }
        }
    }
}
