//! Generators shared by the property tests: random field specs, schemas built from them (by
//! hand or as DTD text) and random record streams with metadata interleaved.
#![allow(dead_code)]

use metatf::container::{ContainerHeader, PROPERTY_BYTE_ORDER};
use metatf::dtd::{FieldDef, FieldKind, Interpretation, RecordDef, Schema, Section};
use metatf::{DynRecord, Value};
use proptest::prelude::*;

/// Value sections every generated schema declares (no records of their own).
pub const VALUE_SECTIONS: [u8; 2] = [10, 11];

#[derive(Debug, Clone)]
pub enum Spec {
    Scalar(u8, Interpretation),
    /// A 1-byte length scalar followed by the byte string.
    Bytes(u8, Interpretation),
    /// A count scalar followed by repetitions of these scalars.
    Repeated(u8, Interpretation, Vec<(u8, Interpretation)>),
}

pub fn interpretation() -> impl Strategy<Value = Interpretation> {
    let section = prop::sample::select(VALUE_SECTIONS.to_vec());
    prop_oneof![
        Just(Interpretation::None),
        any::<u64>().prop_map(Interpretation::Default),
        (0u64..3).prop_map(Interpretation::Default),
        any::<u64>().prop_map(Interpretation::BaseOffset),
        (0u64..600).prop_map(Interpretation::BaseOffset),
        (0u64..1000).prop_map(Interpretation::Delta),
        (
            0u64..100,
            prop_oneof![Just(0u64), Just(1), Just(8), Just(u64::MAX)]
        )
            .prop_map(|(initial, stride)| Interpretation::Stride { initial, stride }),
        section.clone().prop_map(Interpretation::SectionOffset),
        (section, 0u64..3)
            .prop_map(|(section, stride)| Interpretation::SectionStride { section, stride }),
    ]
}

pub fn scalar() -> impl Strategy<Value = (u8, Interpretation)> {
    (0u8..=8, interpretation()).prop_map(|(w, i)| (if i.is_zero_width() { 0 } else { w }, i))
}

pub fn spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        4 => scalar().prop_map(|(w, i)| Spec::Scalar(w, i)),
        1 => scalar().prop_map(|(w, i)| Spec::Bytes(w, i)),
        1 => (scalar(), prop::collection::vec(scalar(), 1..3))
            .prop_map(|((w, i), e)| Spec::Repeated(w, i, e)),
    ]
}

/// Sections 1..=n, each with records of tags 4.. made of these field specs.
pub fn schema_specs() -> impl Strategy<Value = (u8, Vec<Vec<Vec<Spec>>>)> {
    (
        1u8..=2,
        prop::collection::vec(
            prop::collection::vec(prop::collection::vec(spec(), 0..4), 1..4),
            1..3,
        ),
    )
}

pub fn scalar_def(
    name: String,
    position: u16,
    (width, interpretation): (u8, Interpretation),
) -> FieldDef {
    FieldDef {
        name,
        position,
        kind: FieldKind::Scalar {
            width,
            interpretation,
        },
    }
}

pub fn build_schema(tag_width: u8, sections: &[Vec<Vec<Spec>>]) -> Schema {
    let base = metatf::dtd::parse_schema(&format!("tag.width = {tag_width};"), "base.dtd")
        .unwrap_or_else(|d| panic!("{d}"));
    let mut out = Schema {
        tag_width,
        global_records: base.global_records,
        sections: vec![],
        models: vec![],
    };
    for (si, records) in sections.iter().enumerate() {
        let mut defs = vec![];
        for (ri, specs) in records.iter().enumerate() {
            let mut fields = vec![];
            let mut pos = 1u16;
            for (fi, s) in specs.iter().enumerate() {
                match s {
                    Spec::Scalar(w, i) => {
                        fields.push(scalar_def(format!("f{fi}"), pos, (*w, *i)));
                        pos += 1;
                    }
                    Spec::Bytes(w, i) => {
                        fields.push(scalar_def(format!("len{fi}"), pos, (*w, *i)));
                        fields.push(FieldDef {
                            name: format!("data{fi}"),
                            position: pos + 1,
                            kind: FieldKind::Bytes {
                                length_position: pos,
                            },
                        });
                        pos += 2;
                    }
                    Spec::Repeated(w, i, element) => {
                        fields.push(scalar_def(format!("n{fi}"), pos, (*w, *i)));
                        let count_position = pos;
                        pos += 1;
                        let first = pos;
                        let element = element
                            .iter()
                            .enumerate()
                            .map(|(ei, e)| {
                                pos += 1;
                                scalar_def(format!("e{fi}_{ei}"), pos - 1, *e)
                            })
                            .collect();
                        fields.push(FieldDef {
                            name: format!("rep{fi}"),
                            position: first,
                            kind: FieldKind::Repeated {
                                count_position,
                                element,
                            },
                        });
                    }
                }
            }
            defs.push(RecordDef {
                name: format!("r{si}_{ri}"),
                tag: 4 + ri as u64,
                fields,
            });
        }
        out.sections.push(Section {
            name: format!("s{si}"),
            number: si as u8 + 1,
            records: defs,
        });
    }
    for n in VALUE_SECTIONS {
        out.sections.push(Section {
            name: format!("values{n}"),
            number: n,
            records: vec![],
        });
    }
    out
}

/// Raw choices for one record; interpreted against the schema when the stream is built.
#[derive(Debug, Clone)]
pub enum Op {
    Section(usize),
    Data(usize, Vec<u64>, Vec<u8>),
    Metadata(usize, usize, u8, Interpretation),
    Comment(Vec<u8>),
}

pub fn op() -> impl Strategy<Value = Op> {
    let value = prop_oneof![0u64..4, 0u64..300, any::<u64>(), Just(u64::MAX)];
    prop_oneof![
        1 => any::<usize>().prop_map(Op::Section),
        8 => (any::<usize>(), prop::collection::vec(value, 0..12), prop::collection::vec(any::<u8>(), 0..20))
            .prop_map(|(r, v, b)| Op::Data(r, v, b)),
        3 => (any::<usize>(), any::<usize>(), 0u8..=9, interpretation())
            .prop_map(|(r, f, w, i)| Op::Metadata(r, f, w, i)),
        1 => prop::collection::vec(any::<u8>(), 0..300).prop_map(Op::Comment),
    ]
}

pub fn uint(name: &str, tag: u64, f: &[u64]) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields: f.iter().map(|&v| Value::Uint(v)).collect(),
    }
}

/// Values for `specs`, taking scalars from `values` (cycled) and bytes from `bytes`.
pub fn record_values(
    fields: &[FieldDef],
    values: &[u64],
    bytes: &[u8],
    next: &mut usize,
) -> Vec<Value> {
    let mut take = || {
        let v = if values.is_empty() {
            0
        } else {
            values[*next % values.len()]
        };
        *next += 1;
        v
    };
    let mut out = vec![];
    let mut i = 0;
    while i < fields.len() {
        match (&fields[i].kind, fields.get(i + 1).map(|f| &f.kind)) {
            (FieldKind::Scalar { .. }, Some(FieldKind::Bytes { .. })) => {
                let n = take() as usize % (bytes.len() + 1);
                out.push(Value::Uint(n as u64));
                out.push(Value::Bytes(bytes[..n].to_vec()));
                i += 2;
            }
            (FieldKind::Scalar { .. }, Some(FieldKind::Repeated { element, .. })) => {
                let n = take() % 4;
                out.push(Value::Uint(n));
                let items = (0..n)
                    .map(|_| element.iter().map(|_| Value::Uint(take())).collect())
                    .collect();
                out.push(Value::List(items));
                i += 2;
            }
            _ => {
                out.push(Value::Uint(take()));
                i += 1;
            }
        }
    }
    out
}

pub fn stream(schema: &Schema, ops: &[Op]) -> Vec<DynRecord> {
    let mut out = vec![uint("section", 2, &[1])];
    let mut section = 0usize;
    for op in ops {
        let records = &schema.sections[section].records;
        match op {
            Op::Section(n) => {
                section = n % (schema.sections.len() - VALUE_SECTIONS.len());
                out.push(uint("section", 2, &[section as u64 + 1]));
            }
            Op::Data(r, values, bytes) => {
                let def = &records[r % records.len()];
                let mut next = 0;
                out.push(DynRecord {
                    section: None,
                    name: def.name.clone(),
                    tag: def.tag,
                    fields: record_values(&def.fields, values, bytes, &mut next),
                });
            }
            Op::Metadata(r, f, w, i) => {
                let def = &records[r % records.len()];
                let mut scalars = vec![];
                for fd in &def.fields {
                    match &fd.kind {
                        FieldKind::Scalar { .. } => scalars.push(fd.position),
                        FieldKind::Repeated { element, .. } => {
                            scalars.extend(element.iter().map(|e| e.position))
                        }
                        _ => {}
                    }
                }
                if scalars.is_empty() {
                    continue;
                }
                let pos = u64::from(scalars[f % scalars.len()]);
                let mut fields = vec![def.tag, pos];
                if *w <= 8 {
                    fields.extend([0, u64::from(*w)]);
                } else {
                    fields.push(u64::from(i.property_code()));
                    fields.extend(match *i {
                        Interpretation::None => vec![],
                        Interpretation::Default(v)
                        | Interpretation::BaseOffset(v)
                        | Interpretation::Delta(v) => vec![v],
                        Interpretation::SectionOffset(s) => vec![u64::from(s)],
                        Interpretation::Stride { initial, stride } => vec![initial, stride],
                        Interpretation::SectionStride { section, stride } => {
                            vec![u64::from(section), stride]
                        }
                    });
                }
                out.push(uint("metadata", 3, &fields));
            }
            Op::Comment(b) => out.push(DynRecord {
                section: None,
                name: "comment".into(),
                tag: 1,
                fields: vec![Value::Uint(b.len() as u64), Value::Bytes(b.clone())],
            }),
        }
    }
    out
}

pub fn header(little: bool) -> ContainerHeader {
    ContainerHeader {
        dtd: "(schema built by hand in the test)".into(),
        format: "proptest".into(),
        properties: vec![(
            PROPERTY_BYTE_ORDER.into(),
            if little { "little" } else { "big" }.into(),
        )],
    }
}

fn interpretation_text(i: Interpretation) -> String {
    match i {
        Interpretation::None => "none".into(),
        Interpretation::Default(v) => format!("default {v}"),
        Interpretation::BaseOffset(v) => format!("baseOffset {v}"),
        Interpretation::Delta(v) => format!("delta {v}"),
        Interpretation::SectionOffset(s) => format!("sectionOffset {s}"),
        Interpretation::Stride { initial, stride } => format!("stride {initial} {stride}"),
        Interpretation::SectionStride { section, stride } => {
            format!("sectionStride {section} {stride}")
        }
    }
}

fn props(out: &mut String, name: &str, (width, i): (u8, Interpretation)) {
    if !i.is_zero_width() {
        out.push_str(&format!(" {name}.width = {width};"));
    }
    out.push_str(&format!(
        " {name}.interpretation = {};",
        interpretation_text(i)
    ));
}

/// The same schema as [`build_schema`], written as DTD text.
pub fn dtd_text(tag_width: u8, sections: &[Vec<Vec<Spec>>]) -> String {
    let mut out = format!("tag.width = {tag_width};\n");
    for (si, records) in sections.iter().enumerate() {
        out.push_str(&format!("section s{si} {} {{\n", si + 1));
        for (ri, specs) in records.iter().enumerate() {
            let mut fields = vec!["tag".to_string()];
            let mut p = String::new();
            for (fi, s) in specs.iter().enumerate() {
                let f = format!("f{si}_{ri}_{fi}");
                match s {
                    Spec::Scalar(w, i) => {
                        fields.push(f.clone());
                        props(&mut p, &f, (*w, *i));
                    }
                    Spec::Bytes(w, i) => {
                        fields.push(format!("len{f}"));
                        fields.push(format!("data{f}"));
                        props(&mut p, &format!("len{f}"), (*w, *i));
                        p.push_str(&format!(
                            " data{f}.width = len{f}.value; data{f}.interpretation = none;"
                        ));
                    }
                    Spec::Repeated(w, i, element) => {
                        let names: Vec<String> =
                            (0..element.len()).map(|ei| format!("e{f}_{ei}")).collect();
                        fields.push(format!("n{f} * ({})", names.join(", ")));
                        props(&mut p, &format!("n{f}"), (*w, *i));
                        for (name, e) in names.iter().zip(element) {
                            props(&mut p, name, *e);
                        }
                    }
                }
            }
            out.push_str(&format!(
                "    r{si}_{ri} : ({}) {{ tag.value = {};{p} }}\n",
                fields.join(", "),
                4 + ri
            ));
        }
        out.push_str("}\n");
    }
    for n in VALUE_SECTIONS {
        out.push_str(&format!("section values{n} {n} {{ }}\n"));
    }
    out
}
