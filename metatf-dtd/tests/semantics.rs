//! The meaning docs/FORMAT.md §4 gives to the paper's open points, one test per rule.

use metatf_dtd::{parse_schema, FieldKind, Interpretation, RecordDef, Schema};

fn schema(text: &str) -> Schema {
    parse_schema(text, "t.dtd").unwrap_or_else(|e| panic!("should parse:\n{e}"))
}

fn errors(text: &str) -> String {
    match parse_schema(text, "t.dtd") {
        Ok(s) => panic!("should fail, got {s:?}"),
        Err(e) => e.to_string(),
    }
}

fn scalar(width: u8, interpretation: Interpretation) -> FieldKind {
    FieldKind::Scalar {
        width,
        interpretation,
    }
}

fn record(s: &Schema, section: Option<u8>, tag: u64) -> &RecordDef {
    s.record_by_tag(section, tag).expect("record exists")
}

const BASE: &str = "size.width = 4; size.interpretation = none;\n";

#[test]
fn an_outer_record_overrides_properties_of_a_group_it_uses() {
    let s = schema("note : vfield { tag.value = 9; length.width = 2; }");
    let note = record(&s, None, 9);
    assert_eq!(note.fields[0].name, "length");
    assert_eq!(note.fields[0].kind, scalar(2, Interpretation::None));
    assert_eq!(note.fields[1].kind, FieldKind::Bytes { length_position: 1 });
}

#[test]
fn groups_may_be_used_before_their_definition_and_live_in_sections() {
    let s = schema(&format!(
        "{BASE}section a 1 {{ r : (tag, pair) {{ tag.value = 4; }} pair : (size, size) {{ size.width = 1; }} }}"
    ));
    let r = record(&s, Some(1), 4);
    let FieldKind::Composite(pair) = &r.fields[0].kind else {
        panic!("pair is a group")
    };
    assert_eq!(pair.len(), 2);
    assert_eq!(pair[1].kind, scalar(1, Interpretation::None));
    // Not visible from another section.
    assert!(errors(&format!(
        "{BASE}section a 1 {{ pair : (size) }} section b 2 {{ r : (tag, pair) {{ tag.value = 4; }} }}"
    ))
    .contains("unknown field or record `pair`"));
}

#[test]
fn a_record_with_an_implicit_tag_is_a_trace_record() {
    let s = schema(&format!("{BASE}bare : size {{ tag.value = 7; }}"));
    let bare = record(&s, None, 7);
    assert_eq!(bare.fields.len(), 1);
    assert_eq!(bare.fields[0].position, 1);
}

#[test]
fn references_copy_widths_and_interpretations() {
    let s = schema(&format!(
        "{BASE}tag.width = 2;\nr : (tag, size, other, again) {{ tag.value = 4; other.width = tag.width; other.interpretation = size.interpretation; again.width = size.width; again.interpretation = delta 5; }}"
    ));
    let r = record(&s, None, 4);
    assert_eq!(r.fields[1].kind, scalar(2, Interpretation::None));
    assert_eq!(r.fields[2].kind, scalar(4, Interpretation::Delta(5)));
}

#[test]
fn a_zero_width_interpretation_set_closer_overrides_a_global_width() {
    let s = schema(&format!(
        "{BASE}r : (tag, size) {{ tag.value = 4; size.interpretation = stride 16 16; }}"
    ));
    assert_eq!(
        record(&s, None, 4).fields[0].kind,
        scalar(
            0,
            Interpretation::Stride {
                initial: 16,
                stride: 16
            }
        )
    );
    // ...but not a width set in the same scope.
    assert!(
        errors("t.width = 2; t.interpretation = default 1; r : (tag, t) { tag.value = 4; }")
            .contains("stores nothing")
    );
}

#[test]
fn the_same_field_type_twice_gets_two_positions_and_shared_properties() {
    let s = schema(&format!(
        "{BASE}r : (tag, size, size) {{ tag.value = 4; size.width = 2; }}"
    ));
    let r = record(&s, None, 4);
    assert_eq!((r.fields[0].position, r.fields[1].position), (1, 2));
    assert_eq!(r.fields[0].kind, r.fields[1].kind);
}

#[test]
fn a_length_inside_a_repetition_measures_fields_of_the_same_element() {
    let s = schema(
        "n.width = 1; n.interpretation = none; len.width = 1; len.interpretation = none;\n\
         data.width = len.value; data.interpretation = none;\n\
         r : (tag, n * (len, data)) { tag.value = 4; }",
    );
    let r = record(&s, None, 4);
    let FieldKind::Repeated { element, .. } = &r.fields[1].kind else {
        panic!("repetition")
    };
    assert_eq!(element[1].kind, FieldKind::Bytes { length_position: 2 });
    // A length inside a repetition cannot measure a field after it.
    assert!(errors(
        "n.width = 1; n.interpretation = none; len.width = 1; len.interpretation = none;\n\
         data.width = len.value; data.interpretation = none;\n\
         r : (tag, n * len, data) { tag.value = 4; }",
    )
    .contains("inside a repetition"));
}

#[test]
fn global_records_are_visible_in_sections_and_their_tags_are_reserved_there() {
    let s = schema(&format!(
        "{BASE}g : (tag, size) {{ tag.value = 4; }} section a 1 {{ }}"
    ));
    assert_eq!(record(&s, Some(1), 4).name, "g");
    assert!(errors(&format!(
        "{BASE}g : (tag, size) {{ tag.value = 4; }} section a 1 {{ l : (tag) {{ tag.value = 4; }} }}"
    ))
    .contains("tag 4 is already used by record `g`"));
    // The same name and tag in two different sections is fine.
    let s = schema(
        "section a 1 { x : (tag) { tag.value = 4; } } section b 2 { x : (tag) { tag.value = 4; } }",
    );
    assert_eq!(s.sections.len(), 2);
}

#[test]
fn section_level_properties_sit_between_record_and_global_ones() {
    let s = schema(&format!(
        "{BASE}section a 1 {{ size.width = 1; r : (tag, size) {{ tag.value = 4; }} }} r2 : (tag, size) {{ tag.value = 5; }}"
    ));
    assert_eq!(
        record(&s, Some(1), 4).fields[0].kind,
        scalar(1, Interpretation::None)
    );
    assert_eq!(
        record(&s, None, 5).fields[0].kind,
        scalar(4, Interpretation::None)
    );
}

#[test]
fn every_error_is_reported_not_just_the_first() {
    let text = errors(
        "a.width = 9;\nb.width = -1;\nc.interpretation = nope;\nsection s 300 { }\nr : (tag, zz) { tag.value = 1; }\n",
    );
    for needle in [
        "width 9",
        "negative",
        "unknown interpretation",
        "out of range",
        "unknown field or record `zz`",
        "tag 1 is already used",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert!(text.contains("error: 6 errors"), "{text}");
}
