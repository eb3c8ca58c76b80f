//! The model of the DTDs that matter, pinned by snapshots, plus checks of the facts the rest of
//! the project relies on (tags, positions, widths).

use metatf_dtd::{parse_schema, FieldKind, Interpretation, Schema};

fn read(rel: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    std::fs::read_to_string(format!("{path}{rel}")).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn parse(rel: &str) -> Schema {
    let text = read(rel);
    match parse_schema(&text, rel) {
        Ok(s) => s,
        Err(e) => panic!("{rel} should parse:\n{e}"),
    }
}

#[test]
fn builtins_alone_give_comment_section_and_metadata() {
    let schema = parse_schema("", "empty.dtd").expect("the empty DTD is valid");
    assert_eq!(schema.tag_width, 1);
    let tags: Vec<(&str, u64)> = schema
        .global_records
        .iter()
        .map(|r| (r.name.as_str(), r.tag))
        .collect();
    assert_eq!(tags, [("comment", 1), ("section", 2), ("metadata", 3)]);
    assert!(schema.sections.is_empty());
    insta::assert_json_snapshot!("builtins", schema);
}

#[test]
fn metadata_record_field_follows_tag_width() {
    let schema = parse_schema("tag.width = 2;", "t.dtd").expect("valid");
    let metadata = schema.record_by_tag(None, 3).expect("metadata is global");
    assert_eq!(
        metadata.fields[0].kind,
        FieldKind::Scalar {
            width: 2,
            interpretation: Interpretation::None
        }
    );
}

#[test]
fn hatf10_dtd_matches_the_corrected_appendix_c() {
    let schema = parse("../dtds/hatf10.dtd");
    let heap = schema.section(1).expect("section heap 1");
    assert_eq!(heap.name, "heap");
    let realloc = schema.record_by_tag(Some(1), 5).expect("realloc is tag 5");
    let names: Vec<&str> = realloc.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["size", "address", "address", "time", "thread", "heap", "vfield"]
    );
    let positions: Vec<u16> = realloc.fields.iter().map(|f| f.position).collect();
    assert_eq!(positions, [1, 2, 3, 4, 5, 6, 7]);
    // vfield expands to length (position 7) and data (position 8) measured by it.
    let FieldKind::Composite(v) = &realloc.fields[6].kind else {
        panic!("vfield is a composite")
    };
    assert_eq!(v[1].kind, FieldKind::Bytes { length_position: 7 });
    insta::assert_json_snapshot!("hatf10", schema);
}

#[test]
fn appendix_c_as_printed_parses_with_realloc_without_size() {
    let schema = parse("tests/data/appendix_c.dtd");
    let realloc = schema.record_by_tag(Some(1), 5).expect("realloc");
    assert_eq!(realloc.fields[0].name, "address");
    assert_eq!(realloc.fields[1].name, "address");
    insta::assert_json_snapshot!("appendix_c", schema);
}

#[test]
fn local_properties_override_section_and_global_ones() {
    let text = "size.width = 4; size.interpretation = none;
        section s 1 {
            size.width = 2;
            a : (tag, size) { tag.value = 4; }
            b : (tag, size) { tag.value = 5; size.interpretation = default 16; }
            c : (tag, size) { tag.value = 6; size.width = 8; }
        }
        d : (tag, size) { tag.value = 7; }";
    let schema = parse_schema(text, "o.dtd").unwrap_or_else(|e| panic!("{e}"));
    let kind = |section, tag| {
        schema.record_by_tag(section, tag).expect("record").fields[0]
            .kind
            .clone()
    };
    let scalar = |width, interpretation| FieldKind::Scalar {
        width,
        interpretation,
    };
    assert_eq!(kind(Some(1), 4), scalar(2, Interpretation::None));
    assert_eq!(kind(Some(1), 5), scalar(0, Interpretation::Default(16)));
    assert_eq!(kind(Some(1), 6), scalar(8, Interpretation::None));
    assert_eq!(kind(None, 7), scalar(4, Interpretation::None));
}

#[test]
fn repetitions_nested_records_and_every_interpretation_lower() {
    let text = "
        n.width = 1; n.interpretation = none;
        k.width = 2; k.interpretation = delta 100;
        v.width = 4; v.interpretation = baseOffset 0x1000;
        s.interpretation = stride 0 -8;
        o.width = 2; o.interpretation = sectionOffset 2;
        w.interpretation = sectionStride 2 1;
        section main 1 {
            r : (tag, n * (k, v), s, o, w, extra : (n, k) { k.width = 1; }) { tag.value = 4; }
            one : n * v { tag.value = 5; }
        }
        section strings 2 { }";
    let schema = parse_schema(text, "r.dtd").unwrap_or_else(|e| panic!("{e}"));
    let r = schema.record_by_tag(Some(1), 4).expect("r");
    assert_eq!(r.fields[0].name, "n");
    let FieldKind::Repeated {
        count_position,
        element,
    } = &r.fields[1].kind
    else {
        panic!("n * (k, v) is a repetition: {:?}", r.fields[1])
    };
    assert_eq!(*count_position, 1);
    assert_eq!(element.len(), 2);
    assert_eq!(element[0].position, 2);
    assert_eq!(
        element[1].kind,
        FieldKind::Scalar {
            width: 4,
            interpretation: Interpretation::BaseOffset(0x1000)
        }
    );
    assert_eq!(
        r.fields[2].kind,
        FieldKind::Scalar {
            width: 0,
            interpretation: Interpretation::Stride {
                initial: 0,
                stride: 8u64.wrapping_neg()
            }
        }
    );
    assert_eq!(
        r.fields[4].kind,
        FieldKind::Scalar {
            width: 0,
            interpretation: Interpretation::SectionStride {
                section: 2,
                stride: 1
            }
        }
    );
    let FieldKind::Composite(extra) = &r.fields[5].kind else {
        panic!("extra is nested")
    };
    assert_eq!(r.fields[5].name, "extra");
    assert_eq!(
        extra[1].kind,
        FieldKind::Scalar {
            width: 1,
            interpretation: Interpretation::Delta(100)
        }
    );
    let one = schema.record_by_tag(Some(1), 5).expect("one");
    assert!(matches!(
        one.fields[1].kind,
        FieldKind::Repeated {
            count_position: 1,
            ..
        }
    ));
    let positions: Vec<u16> = r.leaves().iter().map(|f| f.position).collect();
    assert_eq!(positions, (1..=8).collect::<Vec<u16>>());
    assert_eq!(r.field_at(3).map(|f| f.name.as_str()), Some("v"));
    assert_eq!(r.field_at(8).map(|f| f.name.as_str()), Some("k"));
    assert!(r.field_at(0).is_none() && r.field_at(9).is_none());
    insta::assert_json_snapshot!("every_construct", schema);
}

#[test]
fn diagnostics_list_every_error_with_positions() {
    let errors =
        parse_schema("a.width = 9;\nb.width = -1;\nsection x 0 { }\n", "m.dtd").unwrap_err();
    assert_eq!(errors.len(), 3);
    let lines: Vec<usize> = errors.iter().map(|d| d.line).collect();
    assert_eq!(lines, [1, 2, 3]);
    let text = errors.to_string();
    assert!(text.contains("m.dtd:2:11"), "{text}");
    assert!(text.ends_with("error: 3 errors\n"), "{text}");
    let as_error: &dyn std::error::Error = &errors;
    assert!(as_error.to_string().starts_with("error: width 9"));
}
