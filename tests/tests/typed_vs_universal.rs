//! Differential tests: the code the DTD compiler generates (the golden files, compiled here)
//! and the universal codec write the same bytes from the same records and read each other's
//! output, including the metadata records that widen fields or switch them to `none`, comments,
//! value sections and block boundaries.

#[allow(missing_docs)]
mod hatf10 {
    include!("../golden/hatf10.rs");
}
/// A hand-written format using every interpretation, value sections included.
mod every {
    use metatf::MetaTf;

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 4)]
    pub struct Sample {
        #[metatf(delta = 100, width = 1)]
        pub time: u64,
        #[metatf(base_offset = 4096, width = 2)]
        pub address: u64,
        #[metatf(stride(0, 16))]
        pub serial: u64,
        #[metatf(default = 7)]
        pub heap: u64,
        #[metatf(section_offset = 3, width = 1)]
        pub site: u64,
        #[metatf(section_stride(4, 1))]
        pub thread: u64,
        pub note: Vec<u8>,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 5, name = "mark")]
    pub struct Mark {
        #[metatf(interpretation = "delta 0", width = 2)]
        pub time: i64,
        pub level: u64,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(format = "every")]
    pub enum Every {
        Sample(Sample),
        Mark(Mark),
    }
}

use metatf::dtd::{FieldDef, FieldKind, RecordDef};
use metatf::typed::{Format, TypedEvent, TypedReader, TypedWriter};
use metatf::{Codec, ContainerHeader, DynRecord, UniversalReader, UniversalWriter, Value};
use proptest::prelude::*;

/// Record types of format `T` as the schema describes them: (section, record definitions).
fn records_of<T: Format>() -> (Option<u8>, Vec<RecordDef>) {
    let schema = T::plan().expect("plan").schema().clone();
    match schema.sections.iter().find(|s| !s.records.is_empty()) {
        Some(s) => (Some(s.number), s.records.clone()),
        None => (
            None,
            schema
                .global_records
                .iter()
                .filter(|r| !["comment", "section", "metadata"].contains(&r.name.as_str()))
                .cloned()
                .collect(),
        ),
    }
}

/// Picks a value: mostly small (fits the declared width), sometimes anything (forces metadata).
fn pick(seed: u64) -> u64 {
    match seed % 4 {
        0 => seed % 3,
        1 => seed % 300,
        2 => seed >> 20,
        _ => seed.rotate_left(17),
    }
}

fn values(fields: &[FieldDef], seeds: &mut impl Iterator<Item = u64>, out: &mut Vec<Value>) {
    for f in fields {
        match &f.kind {
            FieldKind::Scalar { .. } => out.push(Value::Uint(pick(seeds.next().unwrap_or(7)))),
            FieldKind::Composite(parts) => {
                if let [_, FieldDef {
                    kind: FieldKind::Bytes { .. },
                    ..
                }] = parts.as_slice()
                {
                    let n = (seeds.next().unwrap_or(0) % 300) as usize;
                    let data: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
                    out.push(Value::Uint(n as u64));
                    out.push(Value::Bytes(data));
                } else {
                    values(parts, seeds, out);
                }
            }
            other => panic!("generated DTDs hold no {other:?}"),
        }
    }
}

/// Builds dynamic records of format `T` from (record choice, seed) pairs; some become comments.
fn dyn_records<T: Format>(choices: &[(usize, u64)]) -> Vec<DynRecord> {
    let (section, defs) = records_of::<T>();
    let mut out = Vec::new();
    if let Some(n) = section {
        out.push(DynRecord {
            section: None,
            name: "section".into(),
            tag: 2,
            fields: vec![Value::Uint(u64::from(n))],
        });
    }
    for &(choice, seed) in choices {
        if choice % 11 == 10 {
            let text = format!("comment {seed}").into_bytes();
            out.push(DynRecord {
                section,
                name: "comment".into(),
                tag: 1,
                fields: vec![Value::Uint(text.len() as u64), Value::Bytes(text)],
            });
            continue;
        }
        let def = &defs[choice % defs.len()];
        let mut seeds = (0..).map(|i: u64| {
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(i as u32 * 7)
                ^ i
        });
        let mut fields = Vec::new();
        values(&def.fields, &mut seeds, &mut fields);
        out.push(DynRecord {
            section,
            name: def.name.clone(),
            tag: def.tag,
            fields,
        });
    }
    out
}

fn header<T: Format>() -> ContainerHeader {
    let plan = T::plan().expect("plan");
    ContainerHeader {
        dtd: plan.dtd().to_string(),
        format: plan.format().to_string(),
        properties: vec![],
    }
}

fn universal_write<T: Format>(records: &[DynRecord], block: u64, codec: Codec) -> Vec<u8> {
    let schema = T::plan().expect("plan").schema().clone();
    let mut w = UniversalWriter::new(Vec::new(), schema, &header::<T>(), codec, 1).expect("writer");
    w.set_block_records(block);
    for r in records {
        w.write(r).expect("universal write");
    }
    w.finish().expect("finish")
}

fn typed_events<T: Format>(bytes: &[u8]) -> Vec<TypedEvent<T>> {
    let mut r = TypedReader::<T, _>::new(bytes).expect("typed reader");
    std::iter::from_fn(|| r.next_event().expect("typed read")).collect()
}

fn typed_write<T: Format>(events: &[TypedEvent<T>], block: u64, codec: Codec) -> Vec<u8> {
    let mut w = TypedWriter::<T, _>::new(Vec::new(), codec, 1).expect("typed writer");
    w.set_block_records(block);
    for e in events {
        // The writer adds its own metadata, exactly where the universal writer did.
        if !matches!(e, TypedEvent::Metadata { .. }) {
            w.write_event(e).expect("typed write");
        }
    }
    w.finish().expect("finish")
}

fn universal_records(bytes: &[u8]) -> Vec<DynRecord> {
    let mut r = UniversalReader::new(bytes).expect("universal reader");
    std::iter::from_fn(|| r.next_record().expect("universal read"))
        .filter(|r| r.name != "metadata")
        .collect()
}

/// The whole differential check for one format and one set of records.
fn check<T: Format + std::fmt::Debug + PartialEq>(choices: &[(usize, u64)], block: u64) {
    let input = dyn_records::<T>(choices);
    let universal = universal_write::<T>(&input, block, Codec::None);
    let events = typed_events::<T>(&universal);
    let typed = typed_write::<T>(&events, block, Codec::None);
    assert_eq!(typed, universal, "typed and universal writers disagree");
    let mut back = universal_records(&typed);
    for r in &mut back {
        r.section = if r.name == "section" { None } else { r.section };
    }
    let mut want = input.clone();
    for r in &mut want {
        if r.name == "section" {
            r.section = None;
        }
    }
    assert_eq!(
        back, want,
        "the universal reader reads the typed output back"
    );
    let records = events
        .iter()
        .filter(|e| matches!(e, TypedEvent::Record(_)))
        .count();
    let data = input
        .iter()
        .filter(|r| !["section", "comment"].contains(&r.name.as_str()))
        .count();
    assert_eq!(records, data);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn hatf10_generated_and_universal_codecs_agree(
        choices in prop::collection::vec((0usize..100, any::<u64>()), 0..60),
        block in 1u64..20,
    ) {
        check::<hatf10::Heap>(&choices, block);
    }

    #[test]
    fn derived_format_with_every_interpretation_agrees_with_universal(
        choices in prop::collection::vec((0usize..100, any::<u64>()), 0..60),
        block in 1u64..20,
    ) {
        check::<every::Every>(&choices, block);
    }
}

#[test]
fn typed_reader_reads_a_trace_written_with_the_original_hatf10_dtd() {
    let dtd = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds/hatf10.dtd"))
        .expect("hatf10.dtd");
    let schema = metatf::dtd::parse_schema(&dtd, "hatf10.dtd").expect("valid");
    let header = ContainerHeader {
        dtd,
        format: "hatf10".into(),
        properties: vec![],
    };
    let mut w = UniversalWriter::new(Vec::new(), schema, &header, Codec::Zstd, 3).expect("writer");
    let rec = |name: &str, tag, fields: Vec<Value>| DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields,
    };
    w.write(&rec("section", 2, vec![Value::Uint(1)]))
        .expect("section");
    let alloc = vec![
        Value::Uint(1 << 40), // wider than size.width = 4: a metadata record widens it
        Value::Uint(0x1000),
        Value::Uint(0),
        Value::Uint(3), // not the default 0: a metadata record switches thread to none
        Value::Uint(0),
        Value::Uint(2),
        Value::Bytes(vec![9, 8]),
    ];
    w.write(&rec("alloc", 4, alloc)).expect("alloc");
    let bytes = w.finish().expect("finish");
    let read: Vec<hatf10::Heap> = TypedReader::new(&bytes[..])
        .expect("the DTDs describe the same bytes")
        .collect::<Result<_, _>>()
        .expect("typed read");
    assert_eq!(
        read,
        vec![hatf10::Heap::Alloc(hatf10::Alloc {
            size: 1 << 40,
            address: 0x1000,
            time: 0,
            thread: 3,
            heap: 0,
            vfield: vec![9, 8],
        })]
    );
}

#[test]
fn typed_reader_refuses_a_trace_of_another_format() {
    let bytes = universal_write::<every::Every>(&[], 10, Codec::None);
    let err = TypedReader::<hatf10::Heap, _>::new(&bytes[..])
        .err()
        .expect("every is not hatf10");
    assert!(err.to_string().contains("does not describe"), "{err}");
}

#[test]
fn a_value_too_large_for_the_rust_type_is_an_error_not_a_truncation() {
    use metatf::MetaTf;

    #[derive(MetaTf, Debug, PartialEq)]
    #[metatf(tag = 4)]
    struct Narrow {
        level: u8,
    }
    #[derive(MetaTf, Debug, PartialEq)]
    enum NarrowFormat {
        Narrow(Narrow),
    }
    // The universal writer writes 300 into `level` (a metadata record widens it to 2 bytes).
    let plan = NarrowFormat::plan().expect("plan");
    let header = ContainerHeader {
        dtd: plan.dtd().to_string(),
        format: plan.format().to_string(),
        properties: vec![],
    };
    let mut w = UniversalWriter::new(Vec::new(), plan.schema().clone(), &header, Codec::None, 0)
        .expect("writer");
    for v in [255, 300] {
        let r = DynRecord {
            section: None,
            name: "narrow".into(),
            tag: 4,
            fields: vec![Value::Uint(v)],
        };
        w.write(&r).expect("write");
    }
    let bytes = w.finish().expect("finish");
    let mut r = TypedReader::<NarrowFormat, _>::new(&bytes[..]).expect("reader");
    assert_eq!(
        r.next().expect("one").expect("fits"),
        NarrowFormat::Narrow(Narrow { level: 255 })
    );
    let err = r.next().expect("two").expect_err("300 does not fit u8");
    assert!(err.to_string().contains("does not fit in u8"), "{err}");
    assert!(r.next().is_none(), "the reader stops after an error");
}
