//! Walks the records of a block in the order the engine codes them: tag, then each field
//! (scalars, byte strings, repeated groups) as the record plan lays them out. The same walk
//! drives measuring, encoding and decoding, so the three cannot disagree on the order. A record
//! with a coding order ([`super::order`]) is walked in that order; its scalar values keep their
//! places in the flat block ([`Side::open`]).

use super::flat::lookup;
use super::order::{Orders, RecordOrder};
use crate::universal::plan::{Builtin, Catalog, Leaf};

/// One direction of coding; each call either codes the next item or reports why not.
pub(crate) trait Side {
    /// The next record's tag, in scope number `scope`.
    fn tag(&mut self, catalog: &Catalog, scope: usize) -> Result<u64, String>;
    /// The next value of stream `s`.
    fn scalar(&mut self, s: usize) -> Result<u64, String>;
    /// A record coded out of walking order begins: its `n` scalar values take the next `n`
    /// places, filled by [`Side::scalar_at`] in coding order.
    fn open(&mut self, n: usize) -> Result<(), String>;
    /// The value of stream `s` at place `slot` of the open record.
    fn scalar_at(&mut self, s: usize, slot: usize) -> Result<u64, String>;
    /// The open record's `n` places are done.
    fn close(&mut self, n: usize);
    /// The next `len` bytes of a byte string of the field whose name hashes to `field`
    /// ([`super::strings::field_id`]); the string's hash is then the value of stream `key`
    /// ([`super::streams::string_key`]).
    fn bytes(&mut self, field: u64, len: u64, key: Option<usize>) -> Result<(), String>;
    /// Whether stream `s`, the length of a byte string ([`super::streams::Streams::endable`]),
    /// is coded with its string's end in this block instead of as a scalar.
    fn ended(&self, _s: usize) -> bool {
        false
    }
    /// The value of stream `s`, a length that [`Side::ended`] accepts, comes with its string:
    /// its place is the next one, or place `slot` of the open record.
    fn defer(&mut self, _s: usize, _slot: Option<usize>) -> Result<(), String> {
        Err("a length coded with its string, in a walk that codes none".to_string())
    }
    /// The byte string whose length is the deferred value of stream `s`, coded with its end;
    /// gives its length. `field` and `key` as for [`Side::bytes`].
    fn ended_bytes(&mut self, _field: u64, _s: usize, _key: Option<usize>) -> Result<u64, String> {
        Err("a string coded with its end, in a walk that codes none".to_string())
    }
    /// The number of fields of a metadata record.
    fn meta_count(&mut self) -> Result<u64, String>;
    /// Metadata field `i`.
    fn meta_value(&mut self, i: u64) -> Result<u64, String>;
    /// The record is complete.
    fn end_record(&mut self);
    /// Fields the side may still produce (the decoder's bound on damaged input).
    fn budget(&mut self) -> &mut u64;
}

/// Walks `records` records starting in `section`; returns the section at the end.
pub(crate) fn walk<S: Side>(
    catalog: &Catalog,
    streams: &super::streams::Streams,
    side: &mut S,
    records: u64,
    mut section: Option<u8>,
    declared: &dyn Fn(u8) -> bool,
    orders: &Orders,
) -> Result<Option<u8>, (u64, String)> {
    let mut scalars = Vec::new();
    for r in 0..records {
        let fail = |m: String| (r, m);
        let tag = side
            .tag(catalog, catalog.scope_index(section))
            .map_err(fail)?;
        let pi = catalog.plan_index(section, tag).ok_or_else(|| {
            fail(format!(
                "tag {tag} names no record in {}",
                crate::universal::section_label(section)
            ))
        })?;
        let plan = &catalog.plans()[pi];
        scalars.clear();
        if plan.builtin == Builtin::Metadata {
            let n = side.meta_count().map_err(fail)?;
            spend(side, n).map_err(fail)?;
            for i in 0..n {
                side.meta_value(i).map_err(fail)?;
            }
        } else if let Some(order) = orders.of(pi) {
            ordered(streams, side, pi, &plan.leaves, order, &mut scalars)
                .map_err(|m| fail(format!("{}: {m}", plan.name)))?;
        } else {
            leaves(streams, side, pi, &plan.leaves, &mut scalars)
                .map_err(|m| fail(format!("{}: {m}", plan.name)))?;
        }
        if plan.builtin == Builtin::Section {
            let n = scalars.first().map_or(0, |&(_, v)| v);
            match u8::try_from(n).ok().filter(|&n| declared(n)) {
                Some(n) => section = Some(n),
                None => return Err(fail(format!("section {n} is not declared in the DTD"))),
            }
        }
        side.end_record();
    }
    Ok(section)
}

fn spend<S: Side>(side: &mut S, n: u64) -> Result<(), String> {
    let b = side.budget();
    if n > *b {
        return Err(format!("{n} fields exceed what the block can hold"));
    }
    *b -= n;
    Ok(())
}

/// Whether stream `s` is a length coded with its string's end in this block.
fn ended<S: Side>(streams: &super::streams::Streams, side: &S, s: usize) -> bool {
    streams.endable(s) && side.ended(s)
}

/// The byte string of plan `plan` whose length is at `length_position`: coded with its end
/// when its length was deferred, else with the length already walked.
fn string<S: Side>(
    streams: &super::streams::Streams,
    side: &mut S,
    plan: usize,
    length_position: u16,
    name: &str,
    scalars: &mut Vec<(u16, u64)>,
) -> Result<(), String> {
    let key = streams.string_key_of(plan, length_position);
    let field = super::strings::field_id(name);
    let length = streams.of(plan, length_position);
    if let Some(s) = length.filter(|&s| ended(streams, side, s)) {
        let len = side.ended_bytes(field, s, key)?;
        spend(side, len)?;
        scalars.push((length_position, len));
        return Ok(());
    }
    let len = lookup(scalars, length_position)
        .ok_or_else(|| format!("{name}: length field has no value"))?;
    spend(side, len)?;
    side.bytes(field, len, key)
}

fn leaves<S: Side>(
    streams: &super::streams::Streams,
    side: &mut S,
    plan: usize,
    leaves_: &[Leaf],
    scalars: &mut Vec<(u16, u64)>,
) -> Result<(), String> {
    spend(side, leaves_.len() as u64)?;
    for leaf in leaves_ {
        match leaf {
            Leaf::Scalar { position, .. } => {
                let s = streams
                    .of(plan, *position)
                    .ok_or("field without a stream")?;
                if ended(streams, side, s) {
                    side.defer(s, None)?;
                } else {
                    let v = side.scalar(s)?;
                    scalars.push((*position, v));
                }
            }
            Leaf::Bytes {
                length_position,
                name,
            } => string(streams, side, plan, *length_position, name, scalars)?,
            Leaf::Repeated {
                count_position,
                element,
                name,
            } => {
                let count = lookup(scalars, *count_position)
                    .ok_or_else(|| format!("{name}: count field has no value"))?;
                spend(side, count)?;
                for _ in 0..count {
                    leaves(streams, side, plan, element, scalars)?;
                }
            }
        }
    }
    Ok(())
}

/// The leaves of a record (with no repeated group, [`super::order::check`]) in `order`.
fn ordered<S: Side>(
    streams: &super::streams::Streams,
    side: &mut S,
    plan: usize,
    leaves_: &[Leaf],
    order: &RecordOrder,
    scalars: &mut Vec<(u16, u64)>,
) -> Result<(), String> {
    spend(side, leaves_.len() as u64)?;
    side.open(order.scalars)?;
    for &i in &order.leaves {
        match &leaves_[i] {
            Leaf::Scalar { position, .. } => {
                let s = streams
                    .of(plan, *position)
                    .ok_or("field without a stream")?;
                if ended(streams, side, s) {
                    side.defer(s, Some(order.slot[i]))?;
                } else {
                    let v = side.scalar_at(s, order.slot[i])?;
                    scalars.push((*position, v));
                }
            }
            Leaf::Bytes {
                length_position,
                name,
            } => string(streams, side, plan, *length_position, name, scalars)?,
            Leaf::Repeated { name, .. } => {
                return Err(format!("{name}: a repeated group in a reordered record"));
            }
        }
    }
    side.close(order.scalars);
    Ok(())
}
