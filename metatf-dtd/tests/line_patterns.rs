//! `line = ...;` in a DTD: what it lowers to, and the errors for patterns that cannot work.

use metatf_dtd::lines::{Digits, LinePiece};
use metatf_dtd::parse_schema_with_lines;

const FIELDS: &str = "size.width = 8; size.interpretation = none;\n\
                      ptr.width = 8; ptr.interpretation = none;\n\
                      length.width = 2; length.interpretation = none;\n\
                      name.width = length.value; name.interpretation = none;\n";

fn errors(record: &str) -> String {
    let dtd = format!("{FIELDS}{record}");
    parse_schema_with_lines(&dtd, "p.dtd")
        .expect_err("the pattern is refused")
        .to_string()
}

#[test]
fn a_pattern_lowers_to_pieces_in_source_order() {
    let dtd = format!(
        "{FIELDS}section s 1 {{ b : (tag, ptr) {{ tag.value = 5; line = \"- \" ptr:#08X; }} }}\n\
         a : (tag, size, ptr, ptr, length, name) {{ tag.value = 4;\n\
           line = \"+\\t\" size:=3d \"@\" ptr:x \",\" ptr:i \" \" name; }}"
    );
    let (_, spec) = parse_schema_with_lines(&dtd, "p.dtd").unwrap();
    let names: Vec<&str> = spec.records.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["b", "a"],
        "source order decides which pattern is tried first"
    );
    assert_eq!(spec.records[0].section, Some(1));
    let a = &spec.records[1];
    assert_eq!(a.pieces[0], LinePiece::Literal(b"+\t".to_vec()));
    match &a.pieces[1] {
        LinePiece::Number { field: 0, spelling } => {
            assert_eq!(spelling.digits, Digits::Exactly(3));
            assert_eq!(spelling.radix, 10);
        }
        other => panic!("{other:?}"),
    }
    // The second `ptr` is the record's second field of that name; the string's length is implied.
    assert!(matches!(a.pieces[5], LinePiece::Number { field: 2, .. }));
    assert_eq!(
        a.pieces[7],
        LinePiece::Bytes {
            field: 4,
            length_field: 3
        }
    );
}

#[test]
fn a_spaced_spelling_lowers_with_its_width() {
    let dtd = format!(
        "{FIELDS}a : (tag, size, ptr) {{ tag.value = 4; line = \"\\t\" size:_8d \" \" ptr:#_18X; }}"
    );
    let (_, spec) = parse_schema_with_lines(&dtd, "p.dtd").unwrap();
    let spellings: Vec<_> = spec.records[0]
        .pieces
        .iter()
        .filter_map(|p| match p {
            LinePiece::Number { spelling, .. } => Some(*spelling),
            _ => None,
        })
        .collect();
    assert_eq!(spellings[0].digits, Digits::Spaced(8));
    assert_eq!((spellings[0].radix, spellings[0].prefix), (10, false));
    assert_eq!(spellings[1].digits, Digits::Spaced(18));
    assert!(spellings[1].prefix && spellings[1].upper && spellings[1].radix == 16);
    let e = errors("a : (tag, size) { tag.value = 4; line = \"+\" size:_0d; }");
    assert!(e.contains("the digit count must be 1 to"), "{e}");
}

#[test]
fn mistakes_get_located_errors() {
    let e = errors("a : (tag, size) { tag.value = 4; line = \"+ \" sise; }");
    assert!(
        e.contains("has no field `sise`") && e.contains("p.dtd:5:"),
        "{e}"
    );
    let e = errors("a : (tag, size, ptr) { tag.value = 4; line = \"+ \" size; }");
    assert!(e.contains("field `ptr` is not in the line pattern"), "{e}");
    let e = errors("a : (tag, size) { tag.value = 4; line = size:q; }");
    assert!(e.contains("unknown letter `q`"), "{e}");
    let e = errors("a : (tag, size, ptr) { tag.value = 4; line = size ptr; }");
    assert!(e.contains("two fields with nothing between them"), "{e}");
    let e = errors("a : (tag, length, name) { tag.value = 4; line = length \" \" name; }");
    assert!(e.contains("is the length of a byte string"), "{e}");
    let e = errors("a : (tag, size) { tag.value = 4; line = \"\\q\" size; }");
    assert!(e.contains("unknown escape"), "{e}");
    let e = errors("a : (tag, size) { tag.value = 4; line = size; line = size; }");
    assert!(e.contains("two line patterns"), "{e}");
    let e = errors("a : (tag, size) { tag.value = 4; line = \"x\" size:#d; }");
    assert!(e.contains("goes with `x` or `X`"), "{e}");
}

#[test]
fn formatting_keeps_patterns() {
    let dtd =
        format!("{FIELDS}a : (tag, size) {{ tag.value = 4;   line = \"a {{(\"   size:08x ; }}");
    let formatted = metatf_dtd::format_dtd(&dtd, "p.dtd").unwrap();
    assert!(
        formatted.contains("    line = \"a {(\" size:08x;\n"),
        "{formatted}"
    );
    let (_, again) = parse_schema_with_lines(&formatted, "p.dtd").unwrap();
    let (_, original) = parse_schema_with_lines(&dtd, "p.dtd").unwrap();
    assert_eq!(again, original);
}

const KEEPER: &str = "other : (tag, length, name) { tag.value = 9; }\n\
                      a : (tag, size) { tag.value = 4; line = \"a \" size; }\n";

fn unmatched_of(decl: &str) -> Result<metatf_dtd::lines::Unmatched, String> {
    let dtd = format!("{FIELDS}{KEEPER}{decl}");
    parse_schema_with_lines(&dtd, "u.dtd")
        .map(|(_, spec)| spec.unmatched)
        .map_err(|d| d.to_string())
}

#[test]
fn unmatched_lines_go_where_the_dtd_says() {
    use metatf_dtd::lines::Unmatched;
    assert_eq!(unmatched_of(""), Ok(Unmatched::Verbatim), "the default");
    assert_eq!(
        unmatched_of("unmatched = verbatim;"),
        Ok(Unmatched::Verbatim)
    );
    assert_eq!(unmatched_of("unmatched = error;"), Ok(Unmatched::Error));
    assert_eq!(
        unmatched_of("unmatched = other;"),
        Ok(Unmatched::Record {
            name: "other".into(),
            section: None,
            tag: 9
        })
    );
    // The built-in comment is one byte string too.
    assert_eq!(
        unmatched_of("unmatched = comment;"),
        Ok(Unmatched::Record {
            name: "comment".into(),
            section: None,
            tag: 1
        })
    );
}

#[test]
fn unmatched_mistakes_get_located_errors() {
    let unknown = unmatched_of("unmatched = othr;").unwrap_err();
    assert!(unknown.contains("no trace record `othr`"), "{unknown}");
    assert!(unknown.contains("did you mean `other`?"), "{unknown}");
    assert!(unknown.contains("u.dtd:7:13"), "{unknown}");
    let patterned = unmatched_of("unmatched = a;").unwrap_err();
    assert!(
        patterned.contains("record `a` has a line pattern"),
        "{patterned}"
    );
    let shape = unmatched_of("unmatched = section;").unwrap_err();
    assert!(shape.contains("is not one byte string"), "{shape}");
    let twice = unmatched_of("unmatched = error;\nunmatched = verbatim;").unwrap_err();
    assert!(twice.contains("`unmatched` is declared twice"), "{twice}");
}

#[test]
fn formatting_keeps_the_unmatched_declaration() {
    let dtd = format!("{FIELDS}{KEEPER}unmatched   =   other ;");
    let formatted = metatf_dtd::format_dtd(&dtd, "u.dtd").expect("formats");
    assert!(formatted.contains("\nunmatched = other;\n"), "{formatted}");
    let (_, spec) = parse_schema_with_lines(&formatted, "u.dtd").expect("still parses");
    assert_ne!(spec.unmatched, metatf_dtd::lines::Unmatched::Verbatim);
}

#[test]
fn fixed_point_clock_and_space_run_spellings_lower() {
    let dtd = format!(
        "{FIELDS}a : (tag, size, ptr) {{ tag.value = 4; line = \"[\" size:_12d.6 \"]\" ptr:sp; }}\n\
         b : (tag, size, ptr) {{ tag.value = 5; line = size:02t.3 \" \" ptr:t; }}\n\
         c : (tag) {{ tag.value = 6; line = \"\"; }}"
    );
    let (_, spec) = parse_schema_with_lines(&dtd, "p.dtd").unwrap();
    match &spec.records[0].pieces[1] {
        LinePiece::Number { field: 0, spelling } => {
            assert_eq!(spelling.digits, Digits::Spaced(12));
            assert_eq!((spelling.fraction, spelling.clock), (6, false));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(spec.records[0].pieces[3], LinePiece::Spaces { field: 1 });
    match (&spec.records[1].pieces[0], &spec.records[1].pieces[2]) {
        (LinePiece::Number { spelling: a, .. }, LinePiece::Number { spelling: b, .. }) => {
            assert_eq!(
                (a.digits, a.fraction, a.clock),
                (Digits::AtLeast(2), 3, true)
            );
            assert_eq!((b.digits, b.fraction, b.clock), (Digits::Minimal, 0, true));
        }
        other => panic!("{other:?}"),
    }
    // `line = "";` spells the empty line: a record with no pieces.
    assert!(spec.records[2].pieces.is_empty());
}

#[test]
fn misused_fixed_point_and_space_runs_get_located_errors() {
    let cases = [
        (
            "(tag, size)",
            "\"+\" size:x.6",
            "a fraction `.K` goes with `d` or `t`",
        ),
        (
            "(tag, size)",
            "\"+\" size:i.6",
            "a fraction `.K` goes with `d` or `t`",
        ),
        (
            "(tag, size)",
            "\"+\" size:d.19",
            "the fraction digit count after `.` must be 1 to 18",
        ),
        ("(tag, size)", "\"+\" size:d.", "must be 1 to 18"),
        ("(tag, size)", "\"+\" size:#t", "goes with `x` or `X`"),
        (
            "(tag, size, ptr)",
            "\"+\" size:sp ptr:sp",
            "two runs of spaces with nothing between them",
        ),
        (
            "(tag, size, ptr)",
            "\"+\" size:sp ptr:_8d",
            "a right-aligned number after a run of spaces",
        ),
        (
            "(tag, size)",
            "\"+\" size:sp \" x\"",
            "a literal starting with a space after a run of spaces",
        ),
        (
            "(tag, size, length, name)",
            "\"+\" name size:sp",
            "two fields with nothing between them",
        ),
        (
            "(tag, length, name)",
            "\"+\" name:sp",
            "`name` is a byte string",
        ),
    ];
    for (fields, line, want) in cases {
        let e = errors(&format!("a : {fields} {{ tag.value = 4; line = {line}; }}"));
        assert!(e.contains(want) && e.contains("p.dtd:5:"), "{line}: {e}");
    }
    // A run then a number, or a number then a run, end where the spaces do.
    for line in ["size:sp ptr", "ptr size:sp \"x\""] {
        let ok = format!("{FIELDS}a : (tag, size, ptr) {{ tag.value = 4; line = {line}; }}");
        parse_schema_with_lines(&ok, "p.dtd").unwrap();
    }
}
