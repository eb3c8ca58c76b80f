//! Which embedded DTDs the typed reader accepts: the DTD the code was generated from, or a
//! larger one (more sections, more records, other names) whose records the format reads agree;
//! otherwise an error naming the record and field that differ.

use hatf_tests::dtd_codecs::mtrace;
use metatf::typed::{TypedEvent, TypedReader};
use metatf::{Codec, DynRecord, UniversalWriter, Value};

fn mtrace_dtd() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds/mtrace.dtd"))
        .expect("mtrace.dtd")
}

fn rec(name: &str, tag: u64, fields: Vec<Value>) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields,
    }
}

fn section(n: u64) -> DynRecord {
    rec("section", 2, vec![Value::Uint(n)])
}

fn malloc(address: u64) -> DynRecord {
    rec(
        "malloc",
        8,
        vec![
            Value::Uint(0x40_1000),
            Value::Uint(address),
            Value::Uint(32),
        ],
    )
}

/// mtrace.dtd with one more section of records, as a user's own larger DTD might have.
fn larger_dtd() -> String {
    format!(
        "{}\nsection dead 2 {{\n    gone : (tag, size) {{\n        tag.value = 4;\n    }}\n}}\n",
        mtrace_dtd()
    )
}

fn write(dtd: &str, records: &[DynRecord]) -> Vec<u8> {
    let mut w = UniversalWriter::from_dtd(Vec::new(), dtd, "mtrace", vec![], Codec::None, 0)
        .expect("writer");
    for r in records {
        w.write(r).expect("write");
    }
    w.finish().expect("finish")
}

#[test]
fn a_trace_of_a_larger_dtd_that_switches_sections_is_read() {
    let bytes = write(
        &larger_dtd(),
        &[
            section(1),
            malloc(0x1000),
            section(2),
            rec(
                "comment",
                1,
                vec![Value::Uint(2), Value::Bytes(b"hi".to_vec())],
            ),
            section(1),
            malloc(0x2000),
        ],
    );
    let mut r = TypedReader::<mtrace::Mtrace, _>::new(&bytes[..]).expect("compatible DTD");
    let mut addresses = Vec::new();
    let mut sections = Vec::new();
    while let Some(e) = r.next_event().expect("event") {
        match e {
            TypedEvent::Record(mtrace::Mtrace::Malloc(m)) => addresses.push(m.address),
            TypedEvent::Section(n) => sections.push(n),
            _ => {}
        }
    }
    assert_eq!(addresses, vec![0x1000, 0x2000]);
    assert_eq!(sections, vec![1, 2, 1]);
}

#[test]
fn a_record_of_a_section_the_format_does_not_know_is_a_clear_error() {
    let bytes = write(
        &larger_dtd(),
        &[section(2), rec("gone", 4, vec![Value::Uint(7)])],
    );
    let err = TypedReader::<mtrace::Mtrace, _>::new(&bytes[..])
        .expect("compatible DTD")
        .collect::<Result<Vec<_>, _>>()
        .expect_err("gone is not an mtrace record");
    assert!(
        err.to_string()
            .contains("tag 4 names no record in section 2"),
        "{err}"
    );
}

#[test]
fn a_dtd_whose_record_differs_is_refused_naming_record_and_field() {
    let changed = mtrace_dtd().replace("address.width = 8;", "address.width = 4;");
    assert_ne!(changed, mtrace_dtd(), "the DTD sets address.width");
    let bytes = write(&changed, &[]);
    let err = TypedReader::<mtrace::Mtrace, _>::new(&bytes[..])
        .err()
        .expect("address is narrower");
    let text = err.to_string();
    assert!(text.contains("does not describe"), "{text}");
    assert!(text.contains("record malloc (tag 8)"), "{text}");
    assert!(text.contains("field address at position 2"), "{text}");
}
