//! Text traces through line patterns: every input comes back byte for byte, hostile input is
//! kept or refused with an error, and strict mode says where a line stops matching.

use metatf::lines::{
    decode_lines, encode_lines,
    infer::{infer_dtd, infer_dtd_bare, infer_dtd_to_store, stored_len},
    LineOptions, MAX_LINE,
};
use proptest::prelude::*;

const HEAP_DTD: &str = r#"
size.width = 8; size.interpretation = none;
ptr.width = 8;  ptr.interpretation = none;
count.width = 8; count.interpretation = none;
length.width = 4; length.interpretation = none;
name.width = length.value; name.interpretation = none;
section heap 1 {
    alloc : (tag, size, ptr) { tag.value = 4; line = "+ " size " 0x" ptr:08x; }
    free : (tag, ptr) { tag.value = 5; line = "- " ptr:#X; }
    note : (tag, count, length, name) { tag.value = 6; line = "n " count:i " " name; }
    fixed : (tag, size, ptr) { tag.value = 7; line = "f" size:=4d ptr:=2x; }
}
"#;

fn round_trip(dtd: &str, text: &[u8], options: LineOptions) -> metatf::lines::LineReport {
    let mut file = Vec::new();
    let report = encode_lines(dtd, "test.dtd", text, &mut file, options).expect("encodes");
    let mut back = Vec::new();
    decode_lines(&file[..], &mut back).expect("decodes");
    assert_eq!(
        String::from_utf8_lossy(&back),
        String::from_utf8_lossy(text),
        "decoded text differs"
    );
    assert_eq!(back, text);
    report
}

#[test]
fn records_and_respelled_lines_come_back_exactly() {
    let text = b"+ 16 0x00007f00\n- 0x7F00\nn -5 hello world\nf001203\n\
                 + 016 0x00007f00\n- 0x7f00\nn -0 x\nf99999\n\nrandom words\n+ 16 0x1234567890\n";
    let r = round_trip(HEAP_DTD, text, LineOptions::default());
    // Leading zero, lower-case hex, `-0`, a number too wide for `=4d`, the blank line and the
    // unmatched line are kept verbatim; the 10-digit address still fits `08x`.
    assert_eq!((r.lines, r.records, r.verbatim), (11, 5, 6));
}

#[test]
fn line_endings_and_a_missing_final_newline_are_kept() {
    let crlf = b"+ 1 0x00000001\r\n- 0x1\r\nodd\n+ 2 0x00000002";
    let r = round_trip(HEAP_DTD, crlf, LineOptions::default());
    assert_eq!(r.records, 2, "CRLF is the file's usual ending");
    assert_eq!(r.verbatim, 2);
    round_trip(HEAP_DTD, b"", LineOptions::default());
    round_trip(HEAP_DTD, b"\n\n\r\n", LineOptions::default());
}

#[test]
fn hostile_text_is_kept() {
    let mut text = Vec::new();
    text.extend_from_slice(b"+ 99999999999999999999999 0x00000001\n"); // over 64 bits
    text.extend_from_slice(b"+ 1\0 0x00000001\n"); // a NUL byte
    text.extend((0..=255u8).cycle().take(5000)); // binary garbage with newlines inside
    text.extend_from_slice(b"\n- 0xFFFFFFFFFFFFFFFFF\n"); // 17 hex digits
    text.extend(std::iter::repeat_n(b'+', MAX_LINE * 2 + 17)); // longer than a piece
    text.extend_from_slice(b"\n+ 5 0x00000005\n");
    let r = round_trip(HEAP_DTD, &text, LineOptions::default());
    assert_eq!(r.records, 1, "only the last line is a record");
}

#[test]
fn strict_mode_names_the_line_and_column() {
    let mut file = Vec::new();
    let options = LineOptions {
        strict: true,
        ..LineOptions::default()
    };
    let err = encode_lines(
        HEAP_DTD,
        "t.dtd",
        &b"+ 1 0x00000001\n+ 2 0y3\n"[..],
        &mut file,
        options,
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("2:6:"), "{err}");
    assert!(err.contains("alloc"), "{err}");
    let err = encode_lines(
        HEAP_DTD,
        "t.dtd",
        &b"+ 01 0x00000001\n"[..],
        &mut Vec::new(),
        options,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("spelled differently"), "{err}");
}

#[test]
fn a_line_one_pattern_respells_goes_to_a_later_pattern_that_spells_it() {
    let dtd = r#"
n.width = 8; n.interpretation = none;
narrow : (tag, n) { tag.value = 4; line = "v " n:_4d; }
wide : (tag, n) { tag.value = 5; line = "v " n:_6d; }
"#;
    // Both patterns match every line (a spaced number reads any run of spaces); `narrow`
    // prints the first line back, `wide` the second, neither the third (one space too many
    // for `narrow`, too few for `wide`).
    let text = b"v   12\nv     12\nv    12\n";
    let r = round_trip(dtd, text, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (2, 1), "{r:?}");
    // In strict mode the third line is refused, naming the first pattern that matched it.
    let strict = LineOptions {
        strict: true,
        ..LineOptions::default()
    };
    let err = encode_lines(dtd, "t.dtd", &text[..], &mut Vec::new(), strict)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("3:1:"), "{err}");
    assert!(
        err.contains("spelled differently") && err.contains("`narrow`"),
        "{err}"
    );
}

/// HEAP_DTD with unmatched lines kept in a record of its own, local to another section.
fn keeper_dtd(decl: &str) -> String {
    format!(
        "{HEAP_DTD}\nsection rest 2 {{ other : (tag, length, name) {{ tag.value = 4; }} }}\n{decl}"
    )
}

#[test]
fn unmatched_lines_go_to_the_record_the_dtd_names() {
    let dtd = keeper_dtd("unmatched = other;");
    let text = b"+ 1 0x00000001\nzzz\n- 0x1\n+ 01 0x00000001\r\n+ 2 0x00000002";
    let r = round_trip(&dtd, text, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (2, 3));
    let mut file = Vec::new();
    encode_lines(&dtd, "k.dtd", &text[..], &mut file, LineOptions::default()).unwrap();
    let mut reader = metatf::UniversalReader::new(&file[..]).unwrap();
    let mut names = Vec::new();
    while let Some(rec) = reader.next_record().unwrap() {
        names.push(rec.name);
    }
    // Same tag as `alloc`, told apart by the section records between them.
    assert_eq!(
        names,
        ["section", "alloc", "section", "other", "section", "free", "section", "other", "other"]
    );
}

#[test]
fn unmatched_error_refuses_like_strict() {
    let dtd = keeper_dtd("unmatched = error;");
    round_trip(&dtd, b"+ 1 0x00000001\n- 0x1\n", LineOptions::default());
    let err = encode_lines(
        &dtd,
        "e.dtd",
        &b"+ 1 0x00000001\nzzz\n"[..],
        &mut Vec::new(),
        LineOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("2:1:"), "{err}");
    assert!(err.contains("unmatched = error"), "{err}");
    // A last line without its line ending is still kept as it is, as with --strict.
    let r = round_trip(&dtd, b"- 0x1\n- 0x1", LineOptions::default());
    assert_eq!((r.records, r.verbatim), (1, 1));
}

#[test]
fn text_with_no_repeated_shape_still_round_trips() {
    for text in [
        &b"just one line\n"[..],
        b"",
        b"a\nb b\n(c)\n{d: 1}\n\n--\n",
        b"no newline at all",
    ] {
        let dtd = infer_dtd(text);
        let r = round_trip(&dtd, text, LineOptions::default());
        assert_eq!(r.records + r.verbatim, r.lines, "{dtd}");
    }
    let text: Vec<u8> = (0..300u32)
        .flat_map(|i| {
            format!(
                "{}{}\n",
                "x.".repeat(i as usize % 7 + 1),
                "-".repeat(i as usize)
            )
            .into_bytes()
        })
        .collect();
    let dtd = infer_dtd(&text);
    let r = round_trip(&dtd, &text, LineOptions::default());
    assert!(r.records > 0, "{dtd}");
}

#[test]
fn a_dtd_without_patterns_is_refused() {
    let err = encode_lines(
        "a.width = 1; a.interpretation = none; r : (tag, a) { tag.value = 4; }",
        "plain.dtd",
        &b"1\n"[..],
        &mut Vec::new(),
        LineOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("no record has a line pattern"), "{err}");
}

#[test]
fn the_plain_layout_round_trips_too() {
    let options = LineOptions {
        model: false,
        ..LineOptions::default()
    };
    let r = round_trip(HEAP_DTD, b"+ 1 0x00000001\n- 0x1\nzzz\n", options);
    assert_eq!(r.records, 2);
}

#[test]
fn an_inferred_dtd_parses_and_covers_regular_lines() {
    let mut text = Vec::new();
    for i in 0..500u64 {
        text.extend_from_slice(format!("load 0x{:08x} size={} ok\n", i * 64, i % 9).as_bytes());
        text.extend_from_slice(format!("FREE {:X}\n", i * 64 + 7).as_bytes());
    }
    text.extend_from_slice(b"a one-off line\n");
    let dtd = infer_dtd(&text);
    metatf::dtd::parse_schema_with_lines(&dtd, "inferred.dtd").expect("inferred DTD is valid");
    let r = round_trip(&dtd, &text, LineOptions::default());
    assert_eq!(r.records, 1000, "{dtd}");
    assert_eq!(r.verbatim, 1);
}

#[test]
fn right_aligned_numbers_are_spaced_fields() {
    let dtd = r#"
a.width = 8; a.interpretation = none;
b.width = 8; b.interpretation = none;
r : (tag, a, b) { tag.value = 4; line = "[" a:_5d "] " b:#_10x; }
"#;
    let text = b"[   12]       0x1f\n[    1] 0x12345678\n[123456] 0x12345678ab\n[-1]       0x1f\n\
                 [ 12]       0x1f\n[   12]    0x1f\n[   12]        0x1f\n[00012]       0x1f\n";
    let r = round_trip(dtd, text, LineOptions::default());
    // Spelled exactly: the first three (the third wider than both widths: no spaces). Kept
    // verbatim: a sign `d` does not write, too few or too many spaces, leading zeros.
    assert_eq!((r.records, r.verbatim), (3, 5), "{r:?}");
}

#[test]
fn inference_finds_right_aligned_columns() {
    let mut text = Vec::new();
    for i in 0..2000u64 {
        let size = (i * 7919) % 100_000;
        let name = "load";
        text.extend_from_slice(
            format!("{name} {i:>8}:{size:>7} [{:>16x}]\n", i * i * 977).as_bytes(),
        );
    }
    let dtd = infer_dtd(&text);
    // One record, the numbers right-aligned (`_N`): with the spaces before them literal text,
    // each count of spaces would be a shape of its own, too rare to be a record.
    assert_eq!(dtd.matches("line =").count(), 1, "{dtd}");
    assert_eq!(dtd.matches(":_").count(), 3, "{dtd}");
    let r = round_trip(&dtd, &text, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (2000, 0), "{dtd}");
}

/// Lines `NAME PID  SEC.USEC: event N`, the name spelled with `punct` between two letters.
fn named_lines(names: &[&str], count: u64) -> Vec<u8> {
    let mut text = Vec::new();
    for i in 0..count {
        let name = names[(i * 7 % names.len() as u64) as usize];
        let (pid, usec) = (14000 + i % 5, 100 + i * 251);
        text.extend_from_slice(
            format!(
                "{name} {pid}  {}.{:06}: event {}\n",
                usec / 1_000_000,
                usec % 1_000_000,
                i % 3
            )
            .as_bytes(),
        );
    }
    text
}

#[test]
fn a_first_token_of_varying_punctuation_is_one_text_field() {
    // Each name's punctuation makes a shape of its own (100 lines, fewer than the 200 a
    // record needs here), and no prefix is shared: only with the name as a text field up to
    // the first space do the lines have one shape.
    let names = [
        "a-b", "a.b", "a/b", "a:b", "a+b", "a=b", "a,b", "a@b", "a%b", "a~b",
    ];
    let text = named_lines(&names, 1000);
    let dtd = infer_dtd(&text);
    assert_eq!(dtd.matches("line =").count(), 1, "{dtd}");
    assert!(
        dtd.contains(r#"line = text1:s " " n1 "  " n2:d.6 ": event " n3;"#),
        "{dtd}"
    );
    let r = round_trip(&dtd, &text, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (1000, 0), "{dtd}");
    // A name with a space in it is not the first token: the text stops at the first space,
    // the rest does not match, and the line is kept verbatim.
    let mut odd = text.clone();
    odd.extend_from_slice(b"a b 14000  0.000100: event 1\n");
    let r = round_trip(&dtd, &odd, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (1000, 1), "{dtd}");
}

#[test]
fn lines_other_shapes_take_get_no_leading_text_field() {
    // Names that are words: every line has one whole-line shape (the name a keyword column
    // too varied to split it, so a text field), and no head shape is added beside it.
    let words = [
        "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota",
    ];
    let text = named_lines(&words, 1000);
    let dtd = infer_dtd(&text);
    assert_eq!(dtd.matches("line =").count(), 1, "{dtd}");
    // Names of a few spellings that a prefix shape spells as literal keywords keep them: the
    // head shape would mix them into one text field.
    let text = named_lines(&["a-b", "c-d"], 1000);
    let dtd = infer_dtd(&text);
    assert!(!dtd.contains("line = text"), "{dtd}");
    let r = round_trip(&dtd, &text, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (1000, 0), "{dtd}");
    // Lines whose rests share no shape either stay verbatim.
    let text: Vec<u8> = (0..1000u64)
        .flat_map(|i| format!("x-{i} {}\n", "(,".repeat(i as usize % 11)).into_bytes())
        .collect();
    let dtd = infer_dtd(&text);
    assert!(!dtd.contains(r#"line = text1:s " ""#), "{dtd}");
    round_trip(&dtd, &text, LineOptions::default());
}

/// Lines `f SIZE x I` in blocks of 300, each block right-aligning its sizes to its widest one.
fn padded_blocks(widths: &[usize], word: bool) -> Vec<u8> {
    let mut text = Vec::new();
    for (b, &w) in widths.iter().enumerate() {
        for i in 0..300u64 {
            // The block's first size has all `w` digits; the others fewer or as many.
            let size = if i == 0 {
                10u64.pow(w as u32 - 1)
            } else {
                (i * 7919 + b as u64) % 10u64.pow(w as u32 - (i % 3) as u32)
            };
            let field = if word {
                format!("w{size}")
            } else {
                size.to_string()
            };
            text.extend_from_slice(format!("f {field:>w$} x {i}\n").as_bytes());
        }
    }
    text
}

#[test]
fn numbers_right_aligned_to_varying_widths_split_by_width() {
    // No width holds 90 % of the lines, so no one `_N` fits the column: the lines are split
    // by their width, one record each, rather than by their count of spaces; the column has
    // one name in all three.
    let text = padded_blocks(&[3, 5, 7], false);
    let dtd = infer_dtd(&text);
    assert_eq!(dtd.matches("line =").count(), 3, "{dtd}");
    for w in [3, 5, 7] {
        assert!(
            dtd.contains(&format!("\"f \" n1:_{w}d \" x \" n2;")),
            "{dtd}"
        );
    }
    let r = round_trip(&dtd, &text, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (900, 0), "{dtd}");
    // Words aligned the same way are not numbers: the lines are split by their spacing.
    let text = padded_blocks(&[3, 5, 7], true);
    let dtd = infer_dtd(&text);
    assert!(!dtd.contains(":_"), "{dtd}");
    round_trip(&dtd, &text, LineOptions::default());
}

#[test]
fn the_stored_dtd_is_the_inferred_one_without_comments() {
    let mut text = Vec::new();
    for i in 0..300u64 {
        text.extend_from_slice(format!("open(\"/tmp/f{i}\") = {}\n", i % 5).as_bytes());
        text.extend_from_slice(format!("// read {i} bytes\n").as_bytes());
    }
    let full = infer_dtd(&text);
    let bare = infer_dtd_bare(&text);
    assert!(full.contains("// ") && !bare.contains("\n// ") && !bare.starts_with("//"));
    let kept: Vec<&str> = full
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && !l.is_empty())
        .collect();
    assert_eq!(kept, bare.lines().collect::<Vec<_>>());
    // A literal `//` in a pattern stays (only comment lines go).
    assert!(bare.contains("\"// read \""), "{bare}");
    let r = round_trip(&bare, &text, LineOptions::default());
    assert_eq!(r.records, 600, "{bare}");
    // The stored one is whichever of the two the header stores in fewer bytes.
    let stored = infer_dtd_to_store(&text);
    assert!(stored == bare || stored == full);
    assert!(stored_len(&stored) <= stored_len(&bare).min(stored_len(&full)));
}

#[test]
fn a_short_modelled_trace_is_compact_and_carries_its_dtd_context_mixed() {
    let mut text = Vec::new();
    for i in 0..400u64 {
        let (pid, n) = (1000 + i % 7, (i * 7919) % 4096);
        text.extend_from_slice(format!("{pid} read(3, \"x\", {n}) = {n}\n").as_bytes());
        text.extend_from_slice(format!("{pid} close({}) = 0\n", i % 11).as_bytes());
    }
    let dtd = infer_dtd_to_store(&text);
    assert!(dtd.len() >= metatf::container::COMPRESS_DTD_FROM, "{dtd}");
    let encode = |options: LineOptions| {
        let mut file = Vec::new();
        encode_lines(&dtd, "inferred.dtd", &text[..], &mut file, options).unwrap();
        let mut back = Vec::new();
        decode_lines(&file[..], &mut back).unwrap();
        assert_eq!(back, text);
        file
    };
    let modelled = encode(LineOptions::default());
    assert!(metatf::container::compact::is_compact(&modelled));
    let reader = metatf::ContainerReader::new(&modelled[..]).unwrap();
    assert_eq!(reader.dtd_storage(), metatf::container::DtdStorage::Mixed);
    // The compact form drops the full form's block framing, index and trailer.
    let full = reader
        .compact_len()
        .map(|_| metatf::container::compact::expand(&modelled).unwrap());
    let full = full.expect("a compact file");
    assert!(
        modelled.len() + 30 < full.len(),
        "{} against {}",
        modelled.len(),
        full.len()
    );
    // The paper's layout stores zstd sections, which the compact form does not carry.
    let plain = encode(LineOptions {
        model: false,
        ..LineOptions::default()
    });
    assert!(!metatf::container::compact::is_compact(&plain));
}

const TIMES_DTD: &str = r#"
t.width = 8; t.interpretation = none;
n.width = 8; n.interpretation = none;
pad.width = 4; pad.interpretation = none;
a : (tag, t, n) { tag.value = 4; line = "[" t:_12d.6 "] n=" n; }
b : (tag, t, n) { tag.value = 5; line = t:02t.6 " " n; }
c : (tag, n, pad, t) { tag.value = 6; line = "x" n pad:sp t:t; }
e : (tag) { tag.value = 7; line = ""; }
"#;

#[test]
fn fixed_point_clock_and_space_run_lines_come_back_exactly() {
    // Taken: right-aligned fixed point, a clock with a fraction, a clock without one after a
    // run of spaces, the empty line.
    let taken: &[u8] = b"[    0.123456] n=1\n[12345678.000001] n=2\n07:58:19.911912 3\n\
                          123:00:00.000000 4\nx5   1:02:03\nx6 0:00:00\n\n";
    let r = round_trip(TIMES_DTD, taken, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (7, 0), "{r:?}");
    // Not taken: another count of fraction digits, too many spaces, minutes of 60, one
    // hour digit where two are written at least, no run of spaces, a sign; each kept verbatim.
    let kept: &[u8] = b"[    0.12345] n=1\n[     0.123456] n=2\n07:60:19.911912 3\n\
                         7:58:19.911912 4\nx5 1:2:03\nx61:02:03\n[   -0.123456] n=1\n\
                         07:58:19.9119120 3\n \n";
    let r = round_trip(TIMES_DTD, kept, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (0, 9), "{r:?}");
    // Values that do not fit 64 bits once scaled are not numbers of the pattern.
    let r = round_trip(
        TIMES_DTD,
        b"[99999999999999999.123456] n=1\n99999999999999999:00:00.000000 1\n",
        LineOptions::default(),
    );
    assert_eq!((r.records, r.verbatim), (0, 2), "{r:?}");
}

#[test]
fn inference_reads_times_as_one_field_and_keeps_blank_lines_as_records() {
    let mut text = Vec::new();
    for i in 0..3000u64 {
        let us = 1_000_000 + i * i * 1000 + i;
        let clock = 7 * 3_600_000_000 + 58 * 60_000_000 + i * 15_001;
        text.extend_from_slice(
            format!(
                "[{:>5}.{:06}] pid {} at {:02}:{:02}:{:02}.{:06} call\n",
                us / 1_000_000,
                us % 1_000_000,
                100 + i % 7,
                clock / 3_600_000_000,
                clock / 60_000_000 % 60,
                clock / 1_000_000 % 60,
                clock % 1_000_000
            )
            .as_bytes(),
        );
        if i % 4 == 0 {
            text.push(b'\n');
        }
    }
    let dtd = infer_dtd(&text);
    assert!(dtd.contains(" n1:_11d.6 "), "{dtd}");
    assert!(dtd.contains(":02t.6"), "{dtd}");
    assert!(dtd.contains("line = \"\";"), "{dtd}");
    let r = round_trip(&dtd, &text, LineOptions::default());
    assert_eq!((r.records, r.verbatim), (3750, 0), "{dtd}");
    // Fraction digits of varying count are not one fixed-point field.
    let mut text = Vec::new();
    for i in 0..3000u64 {
        text.extend_from_slice(format!("t {}.{} end\n", i, i % 1000).as_bytes());
    }
    let dtd = infer_dtd_bare(&text);
    assert!(!dtd.contains("d."), "{dtd}");
    round_trip(&dtd, &text, LineOptions::default());
}

/// A random pattern: literals from a small alphabet and numeric fields of random spellings.
fn pattern() -> impl Strategy<Value = Vec<(String, Option<String>)>> {
    let spelling = prop_oneof![
        Just("d"),
        Just("i"),
        Just("x"),
        Just("X"),
        Just("#x"),
        Just("04d"),
        Just("08x"),
        Just("=3d"),
        Just("=2X"),
        Just("_6d"),
        Just("#_12x"),
        Just("_3i"),
        Just("d.3"),
        Just("_12d.6"),
        Just("=2d.1"),
        Just("02t.6"),
        Just("t"),
        Just("sp"),
    ];
    prop::collection::vec(("[ ,:;ab=]{1,3}", prop::option::of(spelling)), 1..5).prop_map(|v| {
        v.into_iter()
            .map(|(lit, s)| (lit, s.map(str::to_string)))
            .collect()
    })
}

fn dtd_for(parts: &[(String, Option<String>)]) -> String {
    let mut fields = String::new();
    let mut line = String::new();
    let mut props = String::new();
    let mut after_spaces = false;
    for (i, (lit, spelling)) in parts.iter().enumerate() {
        // A run of spaces takes every space after it: the literal after one starts otherwise.
        let lit = if after_spaces && lit.starts_with(' ') {
            format!("a{lit}")
        } else {
            lit.clone()
        };
        after_spaces = spelling.as_deref() == Some("sp");
        line.push_str(&format!(" \"{lit}\""));
        if let Some(s) = spelling {
            fields.push_str(&format!(", f{i}"));
            props.push_str(&format!("f{i}.width = 8; f{i}.interpretation = none; "));
            line.push_str(&format!(" f{i}:{s}"));
        }
    }
    format!("{props}\nr : (tag{fields}) {{ tag.value = 4; line ={line}; }}\nq : (tag, length, text) {{ tag.value = 5; length.width = 2; length.interpretation = none; text.width = length.value; text.interpretation = none; line = \"> \" text; }}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn random_lines_round_trip_against_random_patterns(
        parts in pattern(),
        lines in prop::collection::vec(
            prop_oneof![
                "[0-9a-fA-F ,.:;ab=x+-]{0,24}",
                "> [^\n]{0,20}",
                prop::collection::vec(any::<u8>(), 0..40)
                    .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
            ],
            0..40,
        ),
        values in prop::collection::vec(any::<u64>(), 8),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let dtd = dtd_for(&parts);
        let (schema, spec) = metatf::dtd::parse_schema_with_lines(&dtd, "p.dtd")
            .map_err(|d| TestCaseError::fail(d.to_string()))?;
        drop(schema);
        // Lines printed from the pattern itself, so that some lines are records.
        let mut text = Vec::new();
        let end: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        for (k, l) in lines.iter().enumerate() {
            if k % 2 == 0 {
                // Runs of spaces get short counts; other fields any value, some too wide to print.
                let spellings: Vec<&str> = parts.iter().filter_map(|p| p.1.as_deref()).collect();
                let vals: Vec<metatf::Value> = values
                    .iter()
                    .enumerate()
                    .map(|(j, v)| match spellings.get(j) {
                        Some(&"sp") => metatf::Value::Uint(1 + v % 4),
                        _ => metatf::Value::Uint(v >> (k % 64)),
                    })
                    .collect();
                let mut printed = Vec::new();
                if metatf::lines::printer::print(&spec.records[0], &vals, &mut printed).is_ok() {
                    text.extend_from_slice(&printed);
                    text.extend_from_slice(end);
                }
            }
            text.extend_from_slice(l.as_bytes());
            text.extend_from_slice(if k % 3 == 0 { b"\n" } else { end });
        }
        if !final_newline && text.ends_with(b"\n") {
            text.pop();
        }
        let mut file = Vec::new();
        encode_lines(&dtd, "p.dtd", &text[..], &mut file, LineOptions::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut back = Vec::new();
        decode_lines(&file[..], &mut back).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, text);
    }

    #[test]
    fn damaged_files_give_an_error_never_a_panic(cut in 0usize..400, flip in 0usize..400) {
        let text = b"+ 16 0x00007f00\n- 0x7F00\nn -5 hello\nrandom\n".repeat(4);
        let mut file = Vec::new();
        encode_lines(HEAP_DTD, "t.dtd", &text[..], &mut file, LineOptions::default()).unwrap();
        let mut damaged = file.clone();
        let at = flip % damaged.len();
        damaged[at] ^= 0x5a;
        damaged.truncate(damaged.len() - cut.min(damaged.len()));
        let mut back = Vec::new();
        if decode_lines(&damaged[..], &mut back).is_ok() && damaged.len() == file.len() {
            // A flip the checksums cannot see must still decode to the same text.
            prop_assert_eq!(back, text);
        }
    }
}
