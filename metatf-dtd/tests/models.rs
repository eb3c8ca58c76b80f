//! The `model` property: what each predictor lowers to, where the property comes from (record,
//! group, section, global: the nearest wins), `auto`, and the formatter keeping it.

use metatf_dtd::{FieldRef, Predictor, Schema};

const DTD: &str = "tag.width = 1;
size.width = 4; size.interpretation = none;
ptr.width = 8; ptr.interpretation = none;
pc.width = 8; pc.interpretation = none;
addr.width = 8; addr.interpretation = none;
addr.model = stride;
site : (pc) { pc.model = none, mtf; }
section heap 1 {
    size.model = fcm 1;
    alloc : (tag, size, ptr) { tag.value = 4; ptr.model = stride, reuse size, reuse; }
    free : (tag, ptr) { tag.value = 5; ptr.model = none, live alloc.ptr, livenext alloc.ptr; }
    load : (tag, addr, size, site) {
        tag.value = 6;
        addr.model = sum size, last, key pc, keystride alloc.size;
    }
    store : (tag, addr, size) { tag.value = 7; size.model = auto; }
    copy : (tag, addr, addr) { tag.value = 8; addr.model = dfcm 2, last load.addr, last addr; }
}
";

fn schema(text: &str) -> Schema {
    metatf_dtd::parse_schema(text, "models.dtd").unwrap_or_else(|e| panic!("{e}"))
}

fn model(s: &Schema, record: &str, position: u16) -> Option<(Predictor, Vec<Predictor>)> {
    s.model_of(Some(1), record, position)
        .map(|m| (m.primary.clone(), m.list.clone()))
}

fn same(field: &str, position: u16) -> FieldRef {
    FieldRef {
        record: None,
        field: field.into(),
        position,
    }
}

fn other(record: &str, field: &str, position: u16) -> FieldRef {
    FieldRef {
        record: Some(record.into()),
        field: field.into(),
        position,
    }
}

#[test]
fn every_predictor_lowers_to_its_field_positions() {
    let s = schema(DTD);
    assert_eq!(
        model(&s, "alloc", 2),
        Some((
            Predictor::Stride,
            vec![
                Predictor::Reuse(Some(same("size", 1))),
                Predictor::Reuse(None)
            ]
        ))
    );
    assert_eq!(
        model(&s, "free", 1),
        Some((
            Predictor::None,
            vec![
                Predictor::Live(other("alloc", "ptr", 2)),
                Predictor::LiveNext(other("alloc", "ptr", 2))
            ]
        ))
    );
    assert_eq!(
        model(&s, "load", 1),
        Some((
            Predictor::Sum(same("size", 2)),
            vec![
                Predictor::Last(None),
                Predictor::Key(same("pc", 3)),
                Predictor::KeyStride(other("alloc", "size", 1)),
            ]
        ))
    );
    // The group's own property reaches the field inside the record using it.
    assert_eq!(
        model(&s, "load", 3),
        Some((Predictor::None, vec![Predictor::Mtf]))
    );
    // `last addr` in the second `addr` names the first one; in the first, it is the field
    // itself (there is no earlier one, so the later one): two different models.
    assert_eq!(
        model(&s, "copy", 2),
        Some((
            Predictor::Dfcm(2),
            vec![
                Predictor::Last(Some(other("load", "addr", 1))),
                Predictor::Last(Some(same("addr", 1)))
            ]
        ))
    );
    assert_eq!(
        model(&s, "copy", 1).map(|m| m.1[1].clone()),
        Some(Predictor::Last(Some(same("addr", 2))))
    );
}

#[test]
fn the_nearest_scope_wins_and_auto_fixes_nothing() {
    let s = schema(DTD);
    // Section property over the global one's absence, for `size` of alloc and load.
    assert_eq!(model(&s, "alloc", 1), Some((Predictor::Fcm(1), vec![])));
    assert_eq!(model(&s, "load", 2), Some((Predictor::Fcm(1), vec![])));
    // The record's `auto` overrides the section's `fcm 1`; the global `stride` reaches store.
    assert_eq!(model(&s, "store", 2), None);
    assert_eq!(model(&s, "store", 1), Some((Predictor::Stride, vec![])));
    // Fields of records without a model property, and the built-ins, are left to the engine.
    assert!(s.models.iter().all(|m| m.section == Some(1)));
    assert!(s.model_of(None, "comment", 1).is_none());
}

#[test]
fn a_model_prints_back_in_dtd_spelling() {
    let s = schema(DTD);
    let printed: Vec<String> = s.models.iter().map(|m| m.to_string()).collect();
    assert!(printed.contains(&"sum size, last, key pc, keystride alloc.size".to_string()));
    assert!(printed.contains(&"none, live alloc.ptr, livenext alloc.ptr".to_string()));
    assert!(printed.contains(&"stride, reuse size, reuse".to_string()));
}

#[test]
fn formatting_keeps_the_models() {
    let formatted = metatf_dtd::format_dtd(DTD, "models.dtd").unwrap_or_else(|e| panic!("{e}"));
    assert!(formatted.contains("addr.model = sum size, last, key pc, keystride alloc.size;"));
    assert_eq!(schema(&formatted), schema(DTD));
    assert_eq!(
        metatf_dtd::format_dtd(&formatted, "models.dtd").ok(),
        Some(formatted.clone())
    );
}

#[test]
fn a_dtd_without_models_has_none() {
    let s = schema(
        "tag.width = 1; a.width = 1; a.interpretation = none;\nr : (tag, a) { tag.value = 4; }",
    );
    assert!(s.models.is_empty());
}
