//! Random schemas for the round-trip fuzz target: sections of records whose fields are scalars
//! (any width and interpretation), byte strings and repeated groups, plus two value sections.

use super::draw::Draw;
use metatf::dtd::{FieldDef, FieldKind, Interpretation, RecordDef, Schema, Section};

/// Value sections every generated schema declares (no records of their own).
pub const VALUE_SECTIONS: [u8; 2] = [10, 11];

/// A field interpretation, any of the seven.
pub fn interpretation(d: &mut Draw) -> Interpretation {
    let section = VALUE_SECTIONS[d.below(2)];
    match d.below(7) {
        0 => Interpretation::None,
        1 => Interpretation::Default(d.value()),
        2 => Interpretation::BaseOffset(d.value()),
        3 => Interpretation::Delta(d.value()),
        4 => Interpretation::Stride {
            initial: d.value(),
            stride: d.value(),
        },
        5 => Interpretation::SectionOffset(section),
        _ => Interpretation::SectionStride {
            section,
            stride: d.value() % 3,
        },
    }
}

fn scalar(d: &mut Draw, name: String, position: u16) -> FieldDef {
    let interpretation = interpretation(d);
    let width = if interpretation.is_zero_width() {
        0
    } else {
        d.below(9) as u8
    };
    FieldDef {
        name,
        position,
        kind: FieldKind::Scalar {
            width,
            interpretation,
        },
    }
}

/// Up to three fields; a byte string or repeated group follows its own length scalar.
fn fields(d: &mut Draw) -> Vec<FieldDef> {
    let mut out = vec![];
    let mut pos = 1u16;
    for f in 0..d.below(4) {
        let kind = d.below(6);
        out.push(scalar(d, format!("f{f}"), pos));
        let length_position = pos;
        pos += 1;
        if kind == 4 {
            out.push(FieldDef {
                name: format!("b{f}"),
                position: pos,
                kind: FieldKind::Bytes { length_position },
            });
            pos += 1;
        } else if kind == 5 {
            let first = pos;
            let element = (0..1 + d.below(2))
                .map(|e| {
                    pos += 1;
                    scalar(d, format!("e{f}_{e}"), pos - 1)
                })
                .collect();
            out.push(FieldDef {
                name: format!("r{f}"),
                position: first,
                kind: FieldKind::Repeated {
                    count_position: length_position,
                    element,
                },
            });
        }
    }
    out
}

/// One or two record sections (numbers 1, 2) of one to three records (tags 4..), then the
/// value sections.
pub fn schema(d: &mut Draw) -> Schema {
    let tag_width = 1 + d.below(2) as u8;
    let base = metatf::dtd::parse_schema(&format!("tag.width = {tag_width};"), "base.dtd")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sections: Vec<Section> = (0..1 + d.below(2))
        .map(|s| Section {
            name: format!("s{s}"),
            number: s as u8 + 1,
            records: (0..1 + d.below(3))
                .map(|r| RecordDef {
                    name: format!("r{s}_{r}"),
                    tag: 4 + r as u64,
                    fields: fields(d),
                })
                .collect(),
        })
        .collect();
    sections.extend(VALUE_SECTIONS.map(|n| Section {
        name: format!("values{n}"),
        number: n,
        records: vec![],
    }));
    Schema {
        tag_width,
        global_records: base.global_records,
        sections,
        models: Vec::new(),
    }
}
