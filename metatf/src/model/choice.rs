//! The per-block choice of predictors, and its serialised form: a list of model metadata
//! entries at the start of every modelled block (docs/FORMAT.md, "Model engine").

use super::choose::MAX_LIST;
use super::predict::{Kind, Spec, MAX_ORDER};
use super::streams::Streams;
use super::tags::{TagContext, MAX_TAG_ORDER};
use crate::container::PutLe;
use crate::universal::plan::Catalog;

/// Metadata property code of a model entry (after the paper's and the runtime's codes 0–7).
pub(crate) const MODEL_PROPERTY: u8 = 8;

/// The predictors of one stream: the primary (the residual's reference) and the hit list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    pub(crate) primary: Spec,
    pub(crate) list: Vec<Spec>,
}

impl Default for Choice {
    fn default() -> Self {
        Choice {
            primary: Spec {
                kind: Kind::Zero,
                arg: 0,
            },
            list: Vec::new(),
        }
    }
}

/// Reads a varint (the shared reader, [`crate::varint::take`]); `None` at the end of the input or past 64 bits.
pub(crate) fn get_varint(input: &[u8], at: &mut usize) -> Option<u64> {
    crate::varint::take(input, at)
}

fn put_spec(out: &mut Vec<u8>, catalog: &Catalog, streams: &Streams, spec: Spec) {
    out.put_varint(u64::from(spec.kind.code()));
    if spec.kind.arg_is_stream() {
        let t = &streams.info[spec.arg as usize];
        out.put_varint(catalog.plans()[t.plan].tag);
        out.put_varint(u64::from(t.position));
    } else {
        out.put_varint(u64::from(spec.arg));
    }
}

/// Serialises the tag context: its order, then 0 or 1 and the stream (scope, tag, field).
pub(crate) fn write_tag_context(catalog: &Catalog, streams: &Streams, c: TagContext) -> Vec<u8> {
    let mut out = Vec::new();
    out.put_varint(u64::from(c.order));
    match c.stream {
        None => out.put_varint(0),
        Some(s) => {
            let info = &streams.info[s];
            out.put_varint(1);
            out.put_varint(info.scope as u64);
            out.put_varint(catalog.plans()[info.plan].tag);
            out.put_varint(u64::from(info.position));
        }
    }
    out
}

/// Reads what [`write_tag_context`] wrote.
pub(crate) fn read_tag_context(
    catalog: &Catalog,
    streams: &Streams,
    input: &[u8],
    at: &mut usize,
) -> Result<TagContext, String> {
    let end = || "model table: tag context is cut short".to_string();
    let order = get_varint(input, at).ok_or_else(end)?;
    if order > u64::from(MAX_TAG_ORDER) {
        return Err(format!(
            "model table: tag context of order {order}; at most {MAX_TAG_ORDER}"
        ));
    }
    let stream = match get_varint(input, at).ok_or_else(end)? {
        0 => None,
        1 => {
            let scope = get_varint(input, at).ok_or_else(end)?;
            let tag = get_varint(input, at).ok_or_else(end)?;
            let position = get_varint(input, at).ok_or_else(end)?;
            Some(
                resolve(catalog, streams, scope, tag, position)
                    .ok_or("model table: tag context names no field")?,
            )
        }
        f => return Err(format!("model table: tag context flag {f}")),
    };
    Ok(TagContext {
        order: order as u32,
        stream,
    })
}

/// Serialises the choices that differ from the default.
pub(crate) fn write_choices(catalog: &Catalog, streams: &Streams, choices: &[Choice]) -> Vec<u8> {
    let mut out = Vec::new();
    let chosen: Vec<usize> = (0..choices.len())
        .filter(|&s| choices[s] != Choice::default())
        .collect();
    out.put_varint(chosen.len() as u64);
    for s in chosen {
        let info = &streams.info[s];
        out.put_varint(info.scope as u64);
        out.put_varint(catalog.plans()[info.plan].tag);
        out.put_varint(u64::from(info.position));
        out.push(MODEL_PROPERTY);
        let c = &choices[s];
        out.put_varint(1 + c.list.len() as u64);
        put_spec(&mut out, catalog, streams, c.primary);
        for &spec in &c.list {
            put_spec(&mut out, catalog, streams, spec);
        }
    }
    out
}

/// Reads the choices written by [`write_choices`], checking every reference.
pub(crate) fn read_choices(
    catalog: &Catalog,
    streams: &Streams,
    input: &[u8],
    at: &mut usize,
) -> Result<Vec<Choice>, String> {
    let mut choices = vec![Choice::default(); streams.len()];
    let n = get_varint(input, at).ok_or("model table: entry count missing")?;
    if n > streams.len() as u64 {
        return Err(format!(
            "model table: {n} entries for {} fields",
            streams.len()
        ));
    }
    let mut seen = vec![false; streams.len()];
    for e in 0..n {
        let end = || format!("model table: entry {e} is cut short");
        let scope = get_varint(input, at).ok_or_else(end)?;
        let tag = get_varint(input, at).ok_or_else(end)?;
        let position = get_varint(input, at).ok_or_else(end)?;
        let stream = resolve(catalog, streams, scope, tag, position)
            .ok_or_else(|| format!("model table: entry {e} names no field (scope {scope}, tag {tag}, field {position})"))?;
        if streams.is_string_key(stream) {
            return Err(format!("model table: entry {e} names a string key"));
        }
        if std::mem::replace(&mut seen[stream], true) {
            return Err(format!("model table: entry {e} repeats a field"));
        }
        let property = *input.get(*at).ok_or_else(end)?;
        *at += 1;
        if property != MODEL_PROPERTY {
            return Err(format!(
                "model table: entry {e} has property {property}, expected {MODEL_PROPERTY}"
            ));
        }
        let count = get_varint(input, at).ok_or_else(end)?;
        if count == 0 || count > 1 + MAX_LIST as u64 {
            return Err(format!(
                "model table: entry {e} lists {count} predictors; 1 to {} are allowed",
                1 + MAX_LIST
            ));
        }
        let mut specs = Vec::new();
        for _ in 0..count {
            let code = get_varint(input, at).ok_or_else(end)?;
            let kind = Kind::from_code(code)
                .ok_or_else(|| format!("model table: entry {e} has unknown predictor {code}"))?;
            let arg = if kind.arg_is_stream() {
                let tag = get_varint(input, at).ok_or_else(end)?;
                let position = get_varint(input, at).ok_or_else(end)?;
                let t = resolve(catalog, streams, scope, tag, position).ok_or_else(|| {
                    format!(
                        "model table: entry {e}: predictor {} names no field",
                        kind.name()
                    )
                })?;
                if matches!(kind, Kind::Live | Kind::LiveNext | Kind::Stack) && t == stream {
                    return Err(format!(
                        "model table: entry {e}: {} list of its own field",
                        kind.name()
                    ));
                }
                t as u32
            } else {
                let a = get_varint(input, at).ok_or_else(end)?;
                let ok = match kind {
                    Kind::Fcm | Kind::Dfcm => (1..=u64::from(MAX_ORDER)).contains(&a),
                    _ => a == 0,
                };
                if !ok {
                    return Err(format!(
                        "model table: entry {e}: {} with argument {a}",
                        kind.name()
                    ));
                }
                a as u32
            };
            specs.push(Spec { kind, arg });
        }
        let primary = specs.remove(0);
        if primary.kind.is_rank() {
            return Err(format!(
                "model table: entry {e}: primary predictor {} is a rank list",
                primary.kind.name()
            ));
        }
        choices[stream] = Choice {
            primary,
            list: specs,
        };
    }
    Ok(choices)
}

fn resolve(
    catalog: &Catalog,
    streams: &Streams,
    scope: u64,
    tag: u64,
    position: u64,
) -> Option<usize> {
    let plan = catalog.plan_in_scope(usize::try_from(scope).ok()?, tag)?;
    let s = streams.of(plan, u16::try_from(position).ok()?)?;
    (streams.info[s].scope as u64 == scope).then_some(s)
}
