//! The records of files read through their DTD alone (the universal record layout, the model
//! engine, and the event encodings such as `hatf10-dtd`): the universal reader decodes them,
//! and the DTD names their fields.

use std::ops::Range;

use metatf::dtd::{FieldDef, FieldKind, Schema};
use metatf::{DynRecord, Step, UniversalReader};

use super::value::{FieldSpec, FieldType, Item, Record, RecordType, Value};
use super::Visitor;
use crate::format::FormatError;
use crate::seek::ReadSeek;

/// Built-in records that steer the decoder rather than say anything about the trace.
const MECHANICS: [&str; 2] = ["section", "metadata"];

/// The record types of `schema`, keyed by section (`None` for records valid everywhere) and
/// tag, flattened as the universal reader flattens them.
pub(crate) struct Types {
    pub(crate) types: Vec<RecordType>,
    keys: Vec<(Option<u8>, u64)>,
}

fn leaves(fields: &[FieldDef], out: &mut Vec<FieldSpec>) {
    for f in fields {
        let ty = match &f.kind {
            FieldKind::Composite(inner) => {
                leaves(inner, out);
                continue;
            }
            FieldKind::Scalar { .. } => FieldType::U64,
            // A repetition becomes its JSON text: a column of lists would need a type per DTD.
            FieldKind::Bytes { .. } | FieldKind::Repeated { .. } => FieldType::Bytes,
        };
        let taken = |n: &str| out.iter().any(|s: &FieldSpec| s.name == n);
        let mut name = f.name.clone();
        let mut k = 2;
        while taken(&name) {
            name = format!("{}_{k}", f.name);
            k += 1;
        }
        out.push(FieldSpec { name, ty });
    }
}

impl Types {
    pub(crate) fn of(schema: &Schema) -> Types {
        let mut types = Vec::new();
        let mut keys = Vec::new();
        let global = schema.global_records.iter().map(|r| (None, r));
        let local = schema
            .sections
            .iter()
            .flat_map(|s| s.records.iter().map(move |r| (Some(s.number), r)));
        for (section, r) in global.chain(local) {
            if section.is_none() && MECHANICS.contains(&r.name.as_str()) {
                continue;
            }
            let mut fields = Vec::new();
            leaves(&r.fields, &mut fields);
            types.push(RecordType {
                name: r.name.clone(),
                fields,
            });
            keys.push((section, r.tag));
        }
        Types { types, keys }
    }

    fn find(&self, rec: &DynRecord) -> Option<usize> {
        let local = self.keys.iter().position(|&k| k == (rec.section, rec.tag));
        local.or_else(|| self.keys.iter().position(|&k| k == (None, rec.tag)))
    }
}

/// Visits records `range` of a file the universal reader reads.
pub(crate) fn read(
    input: &mut dyn ReadSeek,
    name: &str,
    types: &Types,
    range: Range<u64>,
    visitor: &mut Visitor<'_>,
) -> Result<u64, FormatError> {
    let fail = |position: String, message: String| FormatError {
        file: name.to_string(),
        position,
        message,
    };
    let mut reader = UniversalReader::new(input).map_err(|e| fail(String::new(), e.to_string()))?;
    let mut index = 0u64;
    let mut visited = 0u64;
    // One record, refilled for each: a modelled block's records then allocate nothing.
    let mut rec = DynRecord::default();
    while index < range.end {
        let step = reader
            .read_event(&mut rec)
            .map_err(|e| fail(format!("record {index}"), e.to_string()))?;
        match step {
            None => break,
            Some(Step::Block {
                index: block,
                record_count,
            }) => {
                if index.saturating_add(record_count) > range.start {
                    visitor(Item::Block {
                        index: block,
                        first_record: index,
                        record_count,
                    })?;
                }
                continue;
            }
            Some(Step::Record) => {}
        }
        let this = index;
        index += 1;
        if this < range.start {
            continue;
        }
        let Some(record_type) = types.find(&rec) else {
            // `section` and `metadata` records: counted, not visited.
            continue;
        };
        let spec = &types.types[record_type];
        if spec.fields.len() != rec.fields.len() {
            return Err(fail(
                format!("record {this}"),
                format!(
                    "`{}` has {} fields, its DTD {}",
                    rec.name,
                    rec.fields.len(),
                    spec.fields.len()
                ),
            ));
        }
        let lists: Vec<Vec<u8>> = rec
            .fields
            .iter()
            .filter_map(|v| match v {
                metatf::Value::List(items) => Some(serde_json::to_vec(items).unwrap_or_default()),
                _ => None,
            })
            .collect();
        let mut lists_at = lists.iter();
        let values: Vec<Value<'_>> = rec
            .fields
            .iter()
            .map(|v| match v {
                metatf::Value::Uint(n) => Value::U64(*n),
                metatf::Value::Bytes(b) => Value::Bytes(b),
                metatf::Value::List(_) => lists_at.next().map_or(Value::Null, |j| Value::Bytes(j)),
            })
            .collect();
        visitor(Item::Record(Record {
            index: this,
            record_type,
            values: &values,
        }))?;
        visited += 1;
    }
    Ok(visited)
}
