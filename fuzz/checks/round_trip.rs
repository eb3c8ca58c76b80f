//! The check behind the `round_trip` fuzz target, shared with the stable replay test
//! `metatf/tests/fuzz_corpus.rs`: a schema and records drawn from the fuzz bytes,
//! written by the universal writer and read back, give the same records (with only the
//! metadata records the writer adds in between), and rewriting what was read gives the same
//! bytes.

#[path = "draw.rs"]
mod draw;
#[path = "round_trip_schema.rs"]
mod round_trip_schema;

use draw::Draw;
use metatf::container::{Codec, ContainerHeader, PROPERTY_BYTE_ORDER};
use metatf::dtd::{FieldDef, FieldKind, Interpretation, Schema};
use metatf::{DynRecord, Event, UniversalReader, UniversalWriter, Value};
use round_trip_schema::{interpretation, schema, VALUE_SECTIONS};

fn record(name: &str, tag: u64, fields: Vec<Value>) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields,
    }
}

/// Values for `fields`: a length scalar holds the length of the byte string or group after it.
fn values(d: &mut Draw, fields: &[FieldDef]) -> Vec<Value> {
    let mut out = vec![];
    for (i, f) in fields.iter().enumerate() {
        match (&f.kind, fields.get(i + 1).map(|n| &n.kind)) {
            (FieldKind::Scalar { .. }, Some(FieldKind::Bytes { .. })) => {
                let b = d.bytes(24);
                out.push(Value::Uint(b.len() as u64));
                out.push(Value::Bytes(b));
            }
            (FieldKind::Scalar { .. }, Some(FieldKind::Repeated { element, .. })) => {
                let n = d.below(4);
                out.push(Value::Uint(n as u64));
                let items = (0..n)
                    .map(|_| element.iter().map(|_| Value::Uint(d.value())).collect())
                    .collect();
                out.push(Value::List(items));
            }
            (FieldKind::Scalar { .. }, _) => out.push(Value::Uint(d.value())),
            _ => {}
        }
    }
    out
}

/// A metadata record changing the width or interpretation of one scalar of `def`, if it has any.
fn metadata(d: &mut Draw, def: &metatf::dtd::RecordDef) -> Option<DynRecord> {
    let scalars: Vec<u16> = def
        .fields
        .iter()
        .flat_map(|f| match &f.kind {
            FieldKind::Scalar { .. } => vec![f.position],
            FieldKind::Repeated { element, .. } => element.iter().map(|e| e.position).collect(),
            _ => vec![],
        })
        .collect();
    let position = *scalars.get(d.below(scalars.len().max(1)))?;
    let mut fields = vec![def.tag, u64::from(position)];
    if d.byte().is_multiple_of(2) {
        fields.extend([0, d.below(9) as u64]);
    } else {
        let i = interpretation(d);
        fields.push(u64::from(i.property_code()));
        fields.extend(match i {
            Interpretation::None => vec![],
            Interpretation::Default(v)
            | Interpretation::BaseOffset(v)
            | Interpretation::Delta(v) => {
                vec![v]
            }
            Interpretation::SectionOffset(s) => vec![u64::from(s)],
            Interpretation::Stride { initial, stride } => vec![initial, stride],
            Interpretation::SectionStride { section, stride } => vec![u64::from(section), stride],
        });
    }
    Some(record(
        "metadata",
        3,
        fields.into_iter().map(Value::Uint).collect(),
    ))
}

/// Up to 64 records: section switches, comments, metadata and data records.
fn records(d: &mut Draw, schema: &Schema) -> Vec<DynRecord> {
    let record_sections = schema.sections.len() - VALUE_SECTIONS.len();
    let mut out = vec![record("section", 2, vec![Value::Uint(1)])];
    let mut section = 0;
    while !d.is_empty() && out.len() < 64 {
        let defs = &schema.sections[section].records;
        let def = &defs[d.below(defs.len())];
        match d.below(8) {
            0 => {
                section = d.below(record_sections);
                out.push(record("section", 2, vec![Value::Uint(section as u64 + 1)]));
            }
            1 => {
                let b = d.bytes(40);
                out.push(record(
                    "comment",
                    1,
                    vec![Value::Uint(b.len() as u64), Value::Bytes(b)],
                ));
            }
            2 => out.extend(metadata(d, def)),
            _ => out.push(record(&def.name, def.tag, values(d, &def.fields))),
        }
    }
    out
}

fn header(little: bool) -> ContainerHeader {
    ContainerHeader {
        dtd: "(schema drawn by the fuzz target)".into(),
        format: "fuzz".into(),
        properties: vec![(
            PROPERTY_BYTE_ORDER.into(),
            if little { "little" } else { "big" }.into(),
        )],
    }
}

/// Draws a schema, records and writer settings from `data` and checks the round trip.
pub fn check(data: &[u8]) {
    let mut d = Draw(data);
    let little = d.byte().is_multiple_of(2);
    let codec = [Codec::None, Codec::None, Codec::Zstd, Codec::Gzip][d.below(4)];
    let per_block = [0, 1, 3, 7][d.below(4)];
    let schema = schema(&mut d);
    let input = records(&mut d, &schema);

    let mut w = UniversalWriter::new(Vec::new(), schema.clone(), &header(little), codec, 1)
        .unwrap_or_else(|e| panic!("{e}"));
    w.set_block_records(per_block);
    for r in &input {
        if let Err(e) = w.write(r) {
            panic!("writing {r:?}: {e}");
        }
    }
    let bytes = w.finish().unwrap_or_else(|e| panic!("{e}"));

    let mut reader =
        UniversalReader::with_schema(&bytes[..], schema.clone()).unwrap_or_else(|e| panic!("{e}"));
    let mut events = vec![];
    while let Some(e) = reader.next_event().unwrap_or_else(|e| panic!("{e}")) {
        events.push(match e {
            Event::Record(r) => Event::Record(DynRecord { section: None, ..r }),
            block => block,
        });
    }

    // The records read are the input with metadata records added, and nothing else.
    let mut want = input.iter().peekable();
    for e in &events {
        if let Event::Record(r) = e {
            if want.peek() == Some(&r) {
                want.next();
            } else {
                assert_eq!(r.name, "metadata", "unexpected record {r:?}");
            }
        }
    }
    assert!(want.peek().is_none(), "records lost from {:?}", want.peek());

    // Writing what was read, cutting blocks where they were, gives the same bytes.
    let mut w = UniversalWriter::new(Vec::new(), schema, &header(little), codec, 1)
        .unwrap_or_else(|e| panic!("{e}"));
    w.set_block_records(0);
    let mut first = true;
    for e in &events {
        match e {
            Event::Block { .. } if first => first = false,
            Event::Block { .. } => w.end_block().unwrap_or_else(|e| panic!("{e}")),
            Event::Record(r) => w.write(r).unwrap_or_else(|e| panic!("{e}")),
        }
    }
    if !first {
        w.end_block().unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(
        w.finish().unwrap_or_else(|e| panic!("{e}")) == bytes,
        "rewriting changed the bytes"
    );
}
