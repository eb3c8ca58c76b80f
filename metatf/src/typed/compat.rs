//! Whether a trace's embedded DTD codes the records of a typed format the way the format's own
//! DTD does. Only the records the format reads are compared (its records and the built-ins), so
//! a trace written with a larger DTD — more sections, more records, other names — is accepted as
//! long as those records agree; otherwise the error names the first record or field that
//! differs.

use metatf_dtd::{FieldDef, FieldKind, RecordDef, Schema};

use super::plan::FormatPlan;

/// `Ok` when every record the plan decodes has the same wire layout in `embedded`; otherwise
/// what differs first, in words.
pub(crate) fn check(plan: &FormatPlan, embedded: &Schema) -> Result<(), String> {
    let ours = &plan.schema;
    if embedded.tag_width != ours.tag_width {
        return Err(format!(
            "tag.width is {} in the trace's DTD but {} in format {}",
            embedded.tag_width,
            ours.tag_width,
            plan.format()
        ));
    }
    for &n in &plan.sections {
        if embedded.section(n).is_none() {
            return Err(format!(
                "the trace's DTD declares no section {n}, which holds records of format {}",
                plan.format()
            ));
        }
    }
    for (i, slot) in plan.slots.iter().enumerate() {
        // The format's records live in their sections; the built-ins are global.
        let section = plan.slot_sections.get(i).copied().flatten();
        let Some(mine) = ours.record_by_tag(section, slot.tag) else {
            continue;
        };
        let Some(theirs) = embedded.record_by_tag(section, slot.tag) else {
            return Err(format!(
                "record {} (tag {}) is not in {} of the trace's DTD",
                slot.name,
                slot.tag,
                place(section)
            ));
        };
        if let Some(difference) = first_difference(mine, theirs) {
            return Err(format!(
                "record {} (tag {}) differs in the trace's DTD ({}): {difference}",
                slot.name, slot.tag, theirs.name
            ));
        }
    }
    Ok(())
}

fn place(section: Option<u8>) -> String {
    match section {
        None => "the global records".to_string(),
        Some(n) => format!("section {n}"),
    }
}

/// The first field whose layout differs between two definitions of a record, in words.
pub(crate) fn first_difference(mine: &RecordDef, theirs: &RecordDef) -> Option<String> {
    let (a, b) = (flat(&mine.fields), flat(&theirs.fields));
    for (x, y) in a.iter().zip(&b) {
        if x.position != y.position || x.kind != y.kind {
            return Some(format!(
                "field {} at position {}: {} ({}) there, {} here",
                x.name,
                x.position,
                describe(y),
                y.name,
                describe(x)
            ));
        }
    }
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Less => Some(format!(
            "it has {} more field(s) there, the first {}",
            b.len() - a.len(),
            b[a.len()].name
        )),
        std::cmp::Ordering::Greater => Some(format!(
            "it lacks field {} and {} more there",
            a[b.len()].name,
            a.len() - b.len() - 1
        )),
    }
}

fn describe(f: &FieldDef) -> String {
    match &f.kind {
        FieldKind::Scalar {
            width,
            interpretation,
        } => format!(
            "width {width}, interpretation {}",
            metatf_dtd::codegen::interpretation_text(*interpretation)
        ),
        FieldKind::Bytes { length_position } => {
            format!("bytes whose length is field {length_position}")
        }
        FieldKind::Repeated { count_position, .. } => {
            format!("repeated by field {count_position}, with other elements")
        }
        FieldKind::Composite(_) => "a group".to_string(),
    }
}

/// Leaves and repetitions in position order, composites flattened, names kept for messages:
/// two records whose flat lists agree (names aside) code the same bytes.
fn flat(fields: &[FieldDef]) -> Vec<FieldDef> {
    fn walk(fs: &[FieldDef], out: &mut Vec<FieldDef>) {
        for f in fs {
            match &f.kind {
                FieldKind::Composite(parts) => walk(parts, out),
                FieldKind::Repeated {
                    count_position,
                    element,
                } => {
                    let mut inner = Vec::new();
                    walk(element, &mut inner);
                    for e in &mut inner {
                        e.name.clear();
                    }
                    out.push(FieldDef {
                        name: f.name.clone(),
                        position: f.position,
                        kind: FieldKind::Repeated {
                            count_position: *count_position,
                            element: inner,
                        },
                    });
                }
                _ => out.push(f.clone()),
            }
        }
    }
    let mut out = Vec::new();
    walk(fields, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::typed::plan::FormatPlan;
    use crate::typed::{FormatSpec, GroupSpec, RecordSpec};
    use metatf_dtd::Interpretation;

    fn plan() -> FormatPlan {
        let spec = FormatSpec {
            format: "heap",
            tag_width: 1,
            source: None,
            groups: vec![GroupSpec {
                section: Some(("heap", 1)),
                records: vec![RecordSpec {
                name: "alloc",
                tag: 4,
                dtd:
                    "alloc : (tag, size, address) {\n    tag.value = 4;\n    size.width = 4;\n    \
                      size.interpretation = none;\n    address.width = 8;\n    \
                      address.interpretation = delta 0;\n}\n",
                scalars: 2,
                value_sections: &[],
                layout: &[Some(Interpretation::None), Some(Interpretation::Delta(0))],
            }],
            }],
        };
        FormatPlan::new(&spec).expect("plan")
    }

    fn schema(text: &str) -> metatf_dtd::Schema {
        metatf_dtd::parse_schema(text, "t.dtd").expect("valid DTD")
    }

    #[test]
    fn a_larger_dtd_whose_used_records_agree_is_accepted() {
        let p = plan();
        let big = schema(
            "tag.width = 1;\ns.width = 4;\ns.interpretation = none;\na.width = 8;\n\
             a.interpretation = delta 0;\nx.width = 2;\nx.interpretation = none;\n\
             section heap 1 {\n malloc : (tag, s, a) { tag.value = 4; }\n \
             gone : (tag, s) { tag.value = 5; }\n}\n\
             section other 2 {\n y : (tag, x) { tag.value = 4; }\n}\n",
        );
        check(&p, &big).expect("compatible");
    }

    #[test]
    fn the_error_names_the_record_and_field_that_differ() {
        let p = plan();
        let wider = schema(
            "tag.width = 1;\ns.width = 2;\ns.interpretation = none;\na.width = 8;\n\
             a.interpretation = delta 0;\n\
             section heap 1 {\n alloc : (tag, s, a) { tag.value = 4; }\n}\n",
        );
        let err = check(&p, &wider).expect_err("width differs");
        assert!(err.contains("record alloc (tag 4)"), "{err}");
        assert!(err.contains("field size at position 1"), "{err}");
        assert!(err.contains("width 2") && err.contains("width 4"), "{err}");

        let missing = schema("tag.width = 1;\nsection heap 1 {\n}\n");
        let err = check(&p, &missing).expect_err("record missing");
        assert!(err.contains("alloc (tag 4) is not in section 1"), "{err}");

        let no_section = schema("tag.width = 1;\nsection other 2 {\n}\n");
        let err = check(&p, &no_section).expect_err("section missing");
        assert!(err.contains("no section 1"), "{err}");

        let tags = schema("tag.width = 2;\nsection heap 1 {\n}\n");
        let err = check(&p, &tags).expect_err("tag width differs");
        assert!(err.contains("tag.width is 2"), "{err}");
    }
}
