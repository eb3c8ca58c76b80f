//! Printing records in the text form (one line each) and as JSON objects.

use std::fmt::Write as _;

use serde_json::json;

use super::quote::quote;
use crate::field::property_name;
use crate::universal::plan::{Builtin, Catalog, Leaf, RecordPlan};
use crate::universal::{DynRecord, Value};

/// The text line for a record, without the newline; the error explains a record the schema
/// cannot name (which the universal reader never produces).
pub(crate) fn record_line(catalog: &Catalog, rec: &DynRecord) -> Result<String, String> {
    let mut s = String::with_capacity(64);
    record_line_into(catalog, rec, &mut s)?;
    Ok(s)
}

/// [`record_line`] appended to `s`, so that a printer of many records reuses one buffer.
pub(crate) fn record_line_into(
    catalog: &Catalog,
    rec: &DynRecord,
    s: &mut String,
) -> Result<(), String> {
    let plan = plan_of(catalog, rec)?;
    s.push_str(&plan.name);
    if plan.builtin == Builtin::Metadata {
        let m = metadata_parts(catalog, rec)?;
        s.push_str(&format!(
            " {} {}@{} {}",
            m.record, m.field, m.position, m.property
        ));
        for v in m.values {
            s.push_str(&format!(" {v}"));
        }
        return Ok(());
    }
    fields(s, &plan.leaves, &rec.fields)
}

fn plan_of<'c>(catalog: &'c Catalog, rec: &DynRecord) -> Result<&'c RecordPlan, String> {
    catalog
        .by_tag(rec.section, rec.tag)
        .ok_or_else(|| format!("tag {} names no record", rec.tag))
}

fn fields(s: &mut String, leaves: &[Leaf], values: &[Value]) -> Result<(), String> {
    if leaves.len() != values.len() {
        return Err("record has the wrong number of fields".into());
    }
    for (i, (leaf, value)) in leaves.iter().zip(values).enumerate() {
        if i > 0 || !s.ends_with('{') {
            s.push(' ');
        }
        s.push_str(leaf.name());
        s.push('=');
        match (leaf, value) {
            (Leaf::Scalar { .. }, Value::Uint(v)) => {
                // Written into the line rather than through a string of its own.
                let _ = write!(s, "{v}");
            }
            (Leaf::Bytes { .. }, Value::Bytes(b)) => quote(s, b),
            (Leaf::Repeated { element, .. }, Value::List(items)) => {
                s.push('[');
                for (j, item) in items.iter().enumerate() {
                    if j > 0 {
                        s.push(' ');
                    }
                    s.push('{');
                    fields(s, element, item)?;
                    s.push('}');
                }
                s.push(']');
            }
            _ => return Err(format!("field {} has the wrong shape", leaf.name())),
        }
    }
    Ok(())
}

/// A metadata record with its target named.
pub(crate) struct MetadataParts {
    pub(crate) record: String,
    pub(crate) field: String,
    pub(crate) position: u64,
    pub(crate) property: &'static str,
    pub(crate) values: Vec<u64>,
}

pub(crate) fn metadata_parts(catalog: &Catalog, rec: &DynRecord) -> Result<MetadataParts, String> {
    let ints: Vec<u64> = rec
        .fields
        .iter()
        .map(|v| match v {
            Value::Uint(v) => Ok(*v),
            _ => Err("metadata fields must be integers".to_string()),
        })
        .collect::<Result<_, _>>()?;
    if ints.len() < 3 {
        return Err("metadata record is too short".into());
    }
    let target = catalog
        .by_tag(rec.section, ints[0])
        .ok_or_else(|| format!("metadata names unknown record tag {}", ints[0]))?;
    let field = u16::try_from(ints[1])
        .ok()
        .and_then(|p| target.scalar(p))
        .map(|l| l.name().to_string())
        .ok_or_else(|| {
            format!(
                "record {} has no field at position {}",
                target.name, ints[1]
            )
        })?;
    let property = u8::try_from(ints[2])
        .ok()
        .filter(|&p| p <= 7)
        .map(property_name)
        .ok_or_else(|| format!("unknown property code {}", ints[2]))?;
    Ok(MetadataParts {
        record: target.name.clone(),
        field,
        position: ints[1],
        property,
        values: ints[3..].to_vec(),
    })
}

/// The JSON object for a record.
pub(crate) fn record_json(catalog: &Catalog, rec: &DynRecord) -> Result<serde_json::Value, String> {
    let plan = plan_of(catalog, rec)?;
    if plan.builtin == Builtin::Metadata {
        let m = metadata_parts(catalog, rec)?;
        return Ok(json!({
            "record": plan.name, "section": rec.section, "target": m.record, "field": m.field,
            "position": m.position, "property": m.property, "values": m.values,
        }));
    }
    Ok(json!({
        "record": plan.name, "section": rec.section, "fields": json_fields(&plan.leaves, &rec.fields)?,
    }))
}

/// Fields as `[name, value]` pairs (names repeat, so not an object); bytes as a hex string.
fn json_fields(leaves: &[Leaf], values: &[Value]) -> Result<serde_json::Value, String> {
    if leaves.len() != values.len() {
        return Err("record has the wrong number of fields".into());
    }
    let mut out = Vec::with_capacity(values.len());
    for (leaf, value) in leaves.iter().zip(values) {
        let v = match (leaf, value) {
            (_, Value::Uint(v)) => json!(v),
            (_, Value::Bytes(b)) => {
                json!(b.iter().map(|x| format!("{x:02x}")).collect::<String>())
            }
            (Leaf::Repeated { element, .. }, Value::List(items)) => json!(items
                .iter()
                .map(|i| json_fields(element, i))
                .collect::<Result<Vec<_>, _>>()?),
            _ => return Err(format!("field {} has the wrong shape", leaf.name())),
        };
        out.push(json!([leaf.name(), v]));
    }
    Ok(serde_json::Value::Array(out))
}
