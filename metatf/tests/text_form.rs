//! The text form: dump → encode_text → dump is the identity (and gives the same bytes back),
//! JSON lines parse, and text errors name line and column.

use metatf::container::{Codec, ContainerHeader};
use metatf::{dump, encode_text, inspect, DynRecord, UniversalWriter, Value};

const DTD: &str = "// test DTD
tag.width = 1;
size.width = 1; size.interpretation = none;
address.width = 4; address.interpretation = baseOffset 4096;
time.interpretation = stride 0 10;
n.width = 1; n.interpretation = none;
a.width = 2; a.interpretation = delta 0;
b.width = 1; b.interpretation = none;
section heap 1 {
    alloc : (tag, size, address, time) { tag.value = 4; }
    free : (tag, address) { tag.value = 6; }
    pairs : (tag, n * (a, b)) { tag.value = 9; }
}
";

fn schema() -> metatf::dtd::Schema {
    metatf_dtd_parse(DTD)
}

fn metatf_dtd_parse(src: &str) -> metatf::dtd::Schema {
    match metatf::dtd::parse_schema(src, "test.dtd") {
        Ok(s) => s,
        Err(d) => panic!("{d}"),
    }
}

fn uint(name: &str, tag: u64, f: &[u64]) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields: f.iter().map(|&v| Value::Uint(v)).collect(),
    }
}

fn trace(codec: Codec) -> Vec<u8> {
    let header = ContainerHeader {
        dtd: DTD.into(),
        format: "unit \"test\"".into(),
        properties: vec![("made by".into(), "tests/text_form.rs".into())],
    };
    let mut w = UniversalWriter::new(Vec::new(), schema(), &header, codec, 1).unwrap();
    w.set_block_records(4);
    let records = vec![
        uint("section", 2, &[1]),
        uint("alloc", 4, &[16, 4096 + 64, 10]),
        uint("alloc", 4, &[1000, 4000, 20]), // size widens; address below base (negative offset)
        DynRecord {
            section: None,
            name: "comment".into(),
            tag: 1,
            fields: vec![Value::Uint(6), Value::Bytes(b"a\"b\\\n\xff".to_vec())],
        },
        uint("free", 6, &[4096 + 64]),
        uint("alloc", 4, &[16, 4096, 99]), // time leaves its stride
        DynRecord {
            section: None,
            name: "pairs".into(),
            tag: 9,
            fields: vec![
                Value::Uint(2),
                Value::List(vec![
                    vec![Value::Uint(1), Value::Uint(2)],
                    vec![Value::Uint(70000), Value::Uint(3)],
                ]),
            ],
        },
        uint("metadata", 3, &[4, 2, 6, 0, 16]), // alloc.address stride 0 16
        uint("alloc", 4, &[8, 16, 100]),
    ];
    for r in &records {
        w.write(r).unwrap();
    }
    w.finish().unwrap()
}

fn dump_string(bytes: &[u8], json: bool) -> String {
    let mut out = Vec::new();
    dump(bytes, &mut out, json).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn dump_then_encode_then_dump_is_the_identity() {
    for codec in [Codec::None, Codec::Gzip, Codec::Zstd] {
        let bytes = trace(codec);
        let text = dump_string(&bytes, false);
        let mut again = Vec::new();
        let n = encode_text(DTD, "test.dtd", text.as_bytes(), &mut again, codec, 1).unwrap();
        assert_eq!(dump_string(&again, false), text);
        assert_eq!(again, bytes, "{codec}: re-encoding gives different bytes");
        assert_eq!(n, inspect(&bytes[..]).unwrap().total_records);
    }
}

#[test]
fn the_text_form_reads_as_documented() {
    let text = dump_string(&trace(Codec::None), false);
    let want = r#"#format "unit \"test\""
#property "made by" "tests/text_form.rs"
#block 0
section number=1
alloc size=16 address=4160 time=10
metadata alloc size@1 width 2
alloc size=1000 address=4000 time=20
#block 1
comment length=6 data="a\"b\\\x0a\xff"
free address=4160
metadata alloc time@3 none
metadata alloc time@3 width 1
alloc size=16 address=4096 time=99
#block 2
metadata pairs a@2 width 3
pairs n=2 a+b=[{a=1 b=2} {a=70000 b=3}]
metadata alloc address@2 stride 0 16
alloc size=8 address=16 time=100
"#;
    assert_eq!(text, want);
}

#[test]
fn automatic_metadata_counts_in_the_block_it_precedes() {
    // Blocks are cut before a record is written; metadata the record needs goes with it, so a
    // block may exceed the record count asked for.
    let i = inspect(&trace(Codec::None)[..]).unwrap();
    let counts: Vec<u64> = i.blocks.iter().map(|b| b.record_count).collect();
    assert_eq!(counts, [4, 5, 4]);
}

#[test]
fn json_lines_are_objects() {
    let text = dump_string(&trace(Codec::None), true);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["format"], "unit \"test\"");
    assert_eq!(lines[1]["block"], 0);
    assert_eq!(lines[3]["record"], "alloc");
    assert_eq!(lines[3]["section"], 1);
    assert_eq!(lines[3]["fields"][1], serde_json::json!(["address", 4160]));
    assert_eq!(lines[4]["property"], "width");
    assert_eq!(lines[4]["values"], serde_json::json!([2]));
}

#[test]
fn text_errors_name_line_and_column() {
    let cases = [
        (
            "#block 0\nsection number=1\nalloc size=1 adress=5 time=10\n",
            "3:14: expected field `address`, found `adress`",
        ),
        (
            "#block 0\nalloc size=1\n",
            "2:1: no record `alloc` in the global section",
        ),
        (
            "#block 0\nsection number=1\nfree address=zz\n",
            "3:14: `zz` is not a number",
        ),
        (
            "#block 0\nsection number=1\nmetadata alloc size@2 width 2\n",
            "3:16: field 2 of alloc is `address`, not `size`",
        ),
        ("#block 1\n", "1:8: expected #block 0"),
        (
            "#block 0\nsection number=1\ncomment length=2 data=\"abc\"\n",
            "3:1: record 1 (comment.data)",
        ),
    ];
    for (text, want) in cases {
        let err = encode_text(DTD, "t.dtd", text.as_bytes(), Vec::new(), Codec::None, 0)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(want),
            "{err:?} does not start with {want:?}"
        );
    }
}

#[test]
fn a_byte_strings_length_may_be_left_out_and_numbers_may_be_negative() {
    // What `hatf dump` prints for the built-in formats' records: strings without their
    // lengths, signed numbers with a minus sign.
    let given = "#block 0\ncomment data=\"abc\"\nsection number=1\nalloc size=1 address=4096 time=-2\ncomment length=2 data=\"xy\"\n";
    let mut bytes = Vec::new();
    encode_text(DTD, "t.dtd", given.as_bytes(), &mut bytes, Codec::None, 0).unwrap();
    let text = dump_string(&bytes, false);
    assert!(text.contains("comment length=3 data=\"abc\"\n"), "{text}");
    assert!(text.contains(&format!("time={}\n", -2i64 as u64)), "{text}");
    assert!(text.contains("comment length=2 data=\"xy\"\n"), "{text}");
    let wrong = "#block 0\ncomment length=2 data=\"abc\"\n";
    assert!(encode_text(DTD, "t.dtd", wrong.as_bytes(), Vec::new(), Codec::None, 0).is_err());
    let too_small = "#block 0\nsection number=1\nfree address=-9223372036854775809\n";
    let err = encode_text(
        DTD,
        "t.dtd",
        too_small.as_bytes(),
        Vec::new(),
        Codec::None,
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("3:14: `-9223372036854775809` is not a number"),
        "{err}"
    );
}

#[test]
fn inspection_describes_blocks() {
    let bytes = trace(Codec::Zstd);
    let i = inspect(&bytes[..]).unwrap();
    assert_eq!(i.format, "unit \"test\"");
    assert_eq!(i.dtd, DTD);
    assert_eq!(i.blocks.len(), 3);
    assert_eq!(i.total_records, 13);
    assert_eq!(i.total_bytes, bytes.len() as u64);
    assert_eq!(i.blocks[1].first_record, 4);
    // Some block keeps its section 0 (byte stream) compressed with the codec asked for.
    assert!(i.blocks.iter().flat_map(|b| &b.sections).any(|s| (
        s.number,
        s.element_width,
        s.codec
    ) == (0, 0, Codec::Zstd)));
    let json = serde_json::to_value(&i).unwrap();
    assert_eq!(json["blocks"][2]["record_count"], 4);
}

mod arbitrary_text {
    use super::DTD;
    use metatf::container::Codec;
    use metatf::encode_text;
    use proptest::prelude::*;

    proptest! {
        /// Any text — valid lines with random damage, or random characters — is encoded or
        /// refused with an error; the parser never panics.
        #[test]
        fn arbitrary_text_never_panics(
            lines in prop::collection::vec(
                prop_oneof![
                    Just("#block 0".to_string()),
                    Just("section number=1".to_string()),
                    Just("alloc size=16 address=4160 time=10".to_string()),
                    Just("comment length=2 data=\"\\x0a\u{e9}\"".to_string()),
                    Just("pairs n=1 a+b=[{a=1 b=2}]".to_string()),
                    Just("metadata alloc size@1 width 2".to_string()),
                    "[ -~é\"\\\\\\[\\]{}=@#]{0,40}",
                ],
                0..8,
            ),
            cut in any::<usize>(),
        ) {
            let mut text = lines.join("\n");
            let mut at = cut % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
            let _ = encode_text(DTD, "t.dtd", text.as_bytes(), Vec::new(), Codec::None, 0);
        }
    }
}
