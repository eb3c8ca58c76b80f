//! `format_dtd` properties on generated DTDs: the formatted text parses to the same schema, and
//! formatting is idempotent. Comments and odd spacing are sprinkled in to exercise the layout.

use metatf_dtd::{format_dtd, parse_schema};
use proptest::prelude::*;

const FIELDS: [&str; 5] = ["size", "address", "time", "count", "len"];

/// A global or local setting of one field: width and interpretation that are valid together.
fn setting() -> impl Strategy<Value = (Option<u8>, String)> {
    prop_oneof![
        (0u8..=8).prop_map(|w| (Some(w), "none".to_string())),
        (1u8..=8, any::<u32>()).prop_map(|(w, b)| (Some(w), format!("baseOffset {b}"))),
        (1u8..=8, any::<u16>()).prop_map(|(w, b)| (Some(w), format!("delta {b}"))),
        any::<u16>().prop_map(|v| (None, format!("default {v}"))),
        (any::<u16>(), -16i32..16).prop_map(|(i, s)| (None, format!("stride {i} {s}"))),
        (1u8..=8).prop_map(|w| (Some(w), "sectionOffset 200".to_string())),
        (0u64..4).prop_map(|s| (None, format!("sectionStride 200 {s}"))),
    ]
}

fn comment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(String::new()),
        "[a-z ]{0,12}".prop_map(|t| format!("// {t}\n")),
        "[a-z ]{0,12}".prop_map(|t| format!("/* {t} */ ")),
        "[a-z ]{0,12}".prop_map(|t| format!("/* {t}\n   more */\n")),
    ]
}

fn space() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("\t".to_string())
    ]
}

fn props(field: &str, (width, interp): &(Option<u8>, String), sp: &str) -> String {
    let mut s = String::new();
    if let Some(w) = width {
        s.push_str(&format!("{field}.width = {w};{sp}"));
    }
    s.push_str(&format!("{field}.interpretation={interp} ;{sp}"));
    s
}

#[derive(Debug, Clone)]
struct Rec {
    fields: Vec<usize>,
    repeat: Option<usize>,
    local: Option<(usize, (Option<u8>, String))>,
    note: String,
}

fn record() -> impl Strategy<Value = Rec> {
    (
        prop::collection::vec(0..FIELDS.len(), 0..5),
        prop::option::of(0..FIELDS.len()),
        prop::option::of((0..FIELDS.len(), setting())),
        comment(),
    )
        .prop_map(|(fields, repeat, local, note)| Rec {
            fields,
            repeat,
            local,
            note,
        })
}

fn dtd() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(setting(), FIELDS.len()),
        prop::collection::vec(record(), 0..4),
        prop::collection::vec(prop::collection::vec(record(), 0..4), 0..3),
        comment(),
        space(),
        any::<bool>(),
    )
        .prop_map(|(globals, global_recs, sections, head, sp, vfield)| {
            let mut s = head;
            s.push_str("section values 200 { }\n");
            for (f, g) in FIELDS.iter().zip(&globals) {
                s.push_str(&props(f, g, &sp));
            }
            let mut tag = 10;
            let emit = |s: &mut String, r: &Rec, tag: &mut u32| {
                s.push_str(&r.note);
                s.push_str(&format!("r{tag} : (tag"));
                for f in &r.fields {
                    s.push_str(&format!(",{sp}{}", FIELDS[*f]));
                }
                if let Some(c) = r.repeat {
                    // `count` is the counter; repeat one field or a pair.
                    s.push_str(&format!(
                        ", count * ({}, {})",
                        FIELDS[c],
                        FIELDS[(c + 1) % FIELDS.len()]
                    ));
                }
                if vfield {
                    s.push_str(", vfield");
                }
                s.push_str(&format!(") {{{sp}tag.value = {tag};{sp}"));
                if let Some((f, setting)) = &r.local {
                    if r.fields.contains(f) {
                        s.push_str(&props(FIELDS[*f], setting, &sp));
                    }
                }
                s.push_str("}\n");
                *tag += 1;
            };
            for r in &global_recs {
                emit(&mut s, r, &mut tag);
            }
            for (i, recs) in sections.iter().enumerate() {
                s.push_str(&format!("section s{i} {} {{{sp}", i + 1));
                for r in recs {
                    emit(&mut s, r, &mut tag);
                }
                s.push_str("}\n");
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn formatting_keeps_the_schema_and_is_idempotent(text in dtd()) {
        let schema = parse_schema(&text, "gen.dtd").map_err(|e| TestCaseError::fail(format!("{text}\n{e}")))?;
        let once = format_dtd(&text, "gen.dtd").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let reparsed = parse_schema(&once, "formatted.dtd").map_err(|e| TestCaseError::fail(format!("{once}\n{e}")))?;
        prop_assert_eq!(&schema, &reparsed, "formatted:\n{}", once);
        let twice = format_dtd(&once, "formatted.dtd").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&once, &twice);
        // Every comment survives.
        let count = |t: &str| t.matches("//").count() + t.matches("/*").count();
        prop_assert_eq!(count(&text), count(&once));
    }
}

#[test]
fn formatting_the_shipped_dtds_changes_nothing() {
    for rel in ["../dtds/hatf10.dtd", "src/builtins.dtd"] {
        let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let formatted = format_dtd(&text, rel).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(formatted, text, "{rel} is not in canonical form");
    }
}

#[test]
fn formatting_normalises_layout_and_keeps_comments() {
    let text = "// header\ntag.width=1;  size.width=4; size.interpretation = none; // trailing\n\
                section   heap 1{alloc:(tag,size,/* inside */vfield){tag.value=4;}\n\n\n free : (tag) { tag.value = 5; }}";
    let formatted = format_dtd(text, "x.dtd").unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!(formatted);
    assert_eq!(
        parse_schema(text, "x").ok(),
        parse_schema(&formatted, "y").ok()
    );
}

#[test]
fn formatting_reports_syntax_errors_only() {
    assert!(format_dtd("size.width = 4", "x.dtd").is_err());
    // Semantically wrong but well formed: still formatted.
    assert_eq!(
        format_dtd("size.width=99;", "x.dtd").ok().as_deref(),
        Some("size.width = 99;\n")
    );
}

#[test]
fn windows_line_endings_format_like_unix_ones() {
    let unix = "// head\nsize.width = 4; // w\nsize.interpretation = none;\n\nr : (tag, size) {\n    tag.value = 4;\n}\n";
    let windows = unix.replace('\n', "\r\n");
    let a = format_dtd(unix, "u.dtd").unwrap_or_else(|e| panic!("{e}"));
    let b = format_dtd(&windows, "w.dtd").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a, unix);
    assert_eq!(b, unix);
    assert_eq!(
        parse_schema(&windows, "w.dtd").ok(),
        parse_schema(unix, "u.dtd").ok()
    );
}
