//! Property test of the text form: for random DTDs (as text) and random record streams,
//! `dump` → `encode_text` → `dump` prints the same text and re-encoding gives the same bytes.

mod common;

use common::{dtd_text, op, schema_specs, stream};
use metatf::container::{Codec, ContainerHeader};
use metatf::{dump, encode_text, UniversalWriter};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn dump_encode_dump_is_the_identity(
        (tag_width, specs) in schema_specs(),
        ops in prop::collection::vec(op(), 0..30),
        per_block in prop_oneof![Just(0u64), Just(2), Just(5)],
        codec in prop_oneof![Just(Codec::None), Just(Codec::Zstd)],
    ) {
        let dtd = dtd_text(tag_width, &specs);
        let schema = match metatf::dtd::parse_schema(&dtd, "random.dtd") {
            Ok(s) => s,
            Err(d) => panic!("generated DTD does not parse:\n{dtd}\n{d}"),
        };
        let records = stream(&schema, &ops);
        let header = ContainerHeader {
            dtd: dtd.clone(),
            format: "random".into(),
            properties: vec![("seed".into(), "\u{e9}\"\\".into())],
        };
        let mut w = UniversalWriter::new(Vec::new(), schema, &header, codec, 1).unwrap();
        w.set_block_records(per_block);
        for r in &records {
            w.write(r).unwrap();
        }
        let bytes = w.finish().unwrap();
        let mut text = Vec::new();
        dump(&bytes[..], &mut text, false).unwrap();
        let mut again = Vec::new();
        if let Err(e) = encode_text(&dtd, "random.dtd", &text[..], &mut again, codec, 1) {
            panic!("{e}\n{}", String::from_utf8_lossy(&text));
        }
        let mut text2 = Vec::new();
        dump(&again[..], &mut text2, false).unwrap();
        prop_assert_eq!(String::from_utf8(text2).unwrap(), String::from_utf8(text).unwrap());
        prop_assert!(again == bytes, "same text, different bytes");
    }
}

#[test]
fn generated_dtds_have_byte_strings_and_groups() {
    use common::Spec;
    use metatf::dtd::{FieldKind, Interpretation};
    let specs = vec![vec![vec![
        Spec::Bytes(2, Interpretation::None),
        Spec::Repeated(
            1,
            Interpretation::Delta(3),
            vec![(0, Interpretation::Default(7))],
        ),
        Spec::Scalar(
            0,
            Interpretation::SectionStride {
                section: 10,
                stride: 1,
            },
        ),
    ]]];
    let dtd = dtd_text(1, &specs);
    let schema = metatf::dtd::parse_schema(&dtd, "g.dtd").unwrap_or_else(|d| panic!("{dtd}\n{d}"));
    let kinds: Vec<&FieldKind> = schema.sections[0].records[0]
        .fields
        .iter()
        .map(|f| &f.kind)
        .collect();
    assert!(
        matches!(kinds[1], FieldKind::Bytes { length_position: 1 }),
        "{kinds:?}"
    );
    assert!(
        matches!(
            kinds[3],
            FieldKind::Repeated {
                count_position: 3,
                ..
            }
        ),
        "{kinds:?}"
    );
    assert!(
        matches!(
            kinds[4],
            FieldKind::Scalar {
                width: 0,
                interpretation: Interpretation::SectionStride {
                    section: 10,
                    stride: 1
                }
            }
        ),
        "{kinds:?}"
    );
}
