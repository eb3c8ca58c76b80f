//! The model interpretations a DTD fixes (`field.model = ...;`, [`metatf_dtd::FieldModel`]),
//! as the engine's per-stream choices. A fixed stream is not measured: the writer takes the
//! DTD's predictors as they are, and writes them into every block's model table like a
//! chosen one, so readers need nothing new.

use metatf_dtd::{FieldModel, FieldRef, Predictor, Schema};

use super::choice::Choice;
use super::predict::{Kind, Spec};
use super::streams::Streams;
use crate::error::Error;
use crate::universal::plan::Catalog;

/// Per stream: the choice the DTD fixes, or `None` for the automatic choice.
pub(crate) fn fixed_choices(
    schema: &Schema,
    catalog: &Catalog,
    streams: &Streams,
) -> Result<Vec<Option<Choice>>, Error> {
    let mut fixed = vec![None; streams.len()];
    for m in &schema.models {
        for plan in plans_of(schema, catalog, m) {
            let s = streams
                .of(plan, m.position)
                .ok_or_else(|| invalid(m, "names no integer field"))?;
            let spec = |p: &Predictor| spec(catalog, streams, plan, s, m, p);
            let primary = spec(&m.primary)?;
            let list = m.list.iter().map(spec).collect::<Result<Vec<_>, _>>()?;
            if primary.kind.is_rank() || list.len() > super::choose::MAX_LIST {
                return Err(invalid(m, "is not a primary predictor and a short list"));
            }
            fixed[s] = Some(Choice { primary, list });
        }
    }
    Ok(fixed)
}

fn invalid(m: &FieldModel, what: &str) -> Error {
    Error::Schema {
        message: format!("the model of {}.{} ({m}) {what}", m.record, m.field),
    }
}

/// The catalog plans of the record `m` belongs to: one for a section's record, one per scope
/// that does not shadow it for a global record.
fn plans_of(schema: &Schema, catalog: &Catalog, m: &FieldModel) -> Vec<usize> {
    let local_in = |scope: usize| -> bool {
        // Scope 0 is the global one, scope i the DTD's section i - 1 (see `Catalog::new`).
        scope
            .checked_sub(1)
            .and_then(|i| schema.sections.get(i))
            .is_some_and(|s| s.records.iter().any(|r| r.name == m.record))
    };
    catalog
        .plans()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.name == m.record && p.tag == m.tag)
        .filter(|(_, p)| match m.section {
            Some(n) => p.scope == catalog.scope_index(Some(n)) && local_in(p.scope),
            None => !local_in(p.scope),
        })
        .map(|(i, _)| i)
        .collect()
}

/// The stream a predictor's field operand names, in the scope of `plan`.
fn stream_of(
    catalog: &Catalog,
    streams: &Streams,
    plan: usize,
    own: usize,
    m: &FieldModel,
    field: Option<&FieldRef>,
) -> Result<u32, Error> {
    let Some(f) = field else {
        return Ok(own as u32);
    };
    let target = match &f.record {
        None => Some(plan),
        Some(name) => {
            let scope = catalog.plans()[plan].scope;
            catalog
                .plans()
                .iter()
                .position(|p| p.scope == scope && p.name == *name)
        }
    };
    target
        .and_then(|t| streams.of(t, f.position))
        .map(|s| s as u32)
        .ok_or_else(|| invalid(m, &format!("names {f}, which is no integer field here")))
}

fn spec(
    catalog: &Catalog,
    streams: &Streams,
    plan: usize,
    own: usize,
    m: &FieldModel,
    p: &Predictor,
) -> Result<Spec, Error> {
    let stream = |f: Option<&FieldRef>| stream_of(catalog, streams, plan, own, m, f);
    let (kind, arg) = match p {
        Predictor::None => (Kind::Zero, 0),
        Predictor::Last(f) => (Kind::Last, stream(f.as_ref())?),
        Predictor::Stride => (Kind::Stride, 0),
        Predictor::Sum(f) => (Kind::Sum, stream(Some(f))?),
        Predictor::Fcm(k) => (Kind::Fcm, u32::from(*k)),
        Predictor::Dfcm(k) => (Kind::Dfcm, u32::from(*k)),
        Predictor::Key(f) => (Kind::Key, stream(Some(f))?),
        Predictor::KeyStride(f) => (Kind::KeyStride, stream(Some(f))?),
        Predictor::KeyShift(f) => (Kind::KeyShift, stream(Some(f))?),
        Predictor::KeyDelta(f) => (Kind::KeyDelta, stream(Some(f))?),
        Predictor::Live(f) => (Kind::Live, stream(Some(f))?),
        Predictor::Mtf => (Kind::Mtf, 0),
        Predictor::LiveNext(f) => (Kind::LiveNext, stream(Some(f))?),
        Predictor::Reuse(f) => (Kind::Reuse, stream(f.as_ref())?),
        Predictor::Top(f) => (Kind::Top, stream(Some(f))?),
        Predictor::Recent(f) => (Kind::Recent, stream(f.as_ref())?),
        Predictor::Match => (Kind::Match, 0),
    };
    let order_ok = |k: u32| (1..=super::predict::MAX_ORDER).contains(&k);
    let valid = match kind {
        Kind::Fcm | Kind::Dfcm => order_ok(arg),
        Kind::Live | Kind::LiveNext => arg as usize != own,
        _ => true,
    };
    if !valid {
        return Err(invalid(m, &format!("has an invalid predictor {p}")));
    }
    Ok(Spec { kind, arg })
}
