//! Differential tests: the code the DTD compiler generates for every DTD in `dtds/` (compiled
//! by this crate's build script; `dtd_golden` pins it to the golden files) and the universal
//! codec write the same bytes from the same records and read each other's output, including the
//! metadata records that widen fields or switch them to `none`, comments, value sections and
//! block boundaries.

use hatf_tests::differential::{dyn_records, every, header, typed_events, universal_write};
use hatf_tests::dtd_codecs::{self, hatf10};
use hatf_tests::for_each_dtd_format;
use metatf::typed::{Format, TypedEvent, TypedReader, TypedWriter};
use metatf::{Codec, ContainerHeader, DynRecord, UniversalReader, UniversalWriter, Value};
use proptest::prelude::*;

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
    let universal = universal_write::<T>(&input, block, &header::<T>(), Codec::None, 1);
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
    fn every_dtd_generated_codec_agrees_with_universal(
        choices in prop::collection::vec((0usize..100, any::<u64>()), 0..40),
        block in 1u64..20,
    ) {
        macro_rules! check_format {
            ($module:ident, $format:ident) => {
                check::<dtd_codecs::$module::$format>(&choices, block);
            };
        }
        for_each_dtd_format!(check_format);
    }

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

    #[test]
    fn derived_format_spanning_sections_agrees_with_universal(
        choices in prop::collection::vec((0usize..100, any::<u64>()), 0..60),
        block in 1u64..20,
    ) {
        check::<every::Lives>(&choices, block);
    }
}

#[test]
fn the_differential_property_covers_every_dtd() {
    let mut stems: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds"))
        .expect("dtds/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "dtd"))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(String::from))
        .collect();
    stems.sort();
    let mut covered: Vec<&str> = dtd_codecs::COMPILED.to_vec();
    covered.extend(dtd_codecs::SKIPPED);
    covered.sort_unstable();
    assert_eq!(covered, stems, "the build script saw every DTD");
    assert!(
        dtd_codecs::SKIPPED.is_empty(),
        "DTDs without a generated codec: {:?}",
        dtd_codecs::SKIPPED
    );
    let mut formats = 0;
    macro_rules! count {
        ($module:ident, $format:ident) => {
            formats += 1;
        };
    }
    for_each_dtd_format!(count);
    assert!(formats >= dtd_codecs::COMPILED.len(), "a format per DTD");
    // One small deterministic run per format, so that a failure names it plainly.
    macro_rules! smoke {
        ($module:ident, $format:ident) => {
            check::<dtd_codecs::$module::$format>(&[(0, 1), (1, 2), (2, 1 << 40), (10, 3)], 2);
        };
    }
    for_each_dtd_format!(smoke);
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
    let bytes = universal_write::<every::Every>(&[], 10, &header::<every::Every>(), Codec::None, 1);
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

#[test]
fn the_fast_path_stops_when_metadata_changes_a_field_and_resumes_when_it_is_restored() {
    use metatf::field::Change;
    use metatf::MetaTf;

    #[derive(MetaTf, Debug, Clone, PartialEq)]
    #[metatf(tag = 4)]
    struct Tick {
        #[metatf(delta = 0, width = 1)]
        time: u64,
        #[metatf(default = 9)]
        cpu: u64,
    }
    #[derive(MetaTf, Debug, Clone, PartialEq)]
    enum Ticks {
        Tick(Tick),
    }
    let tick = |time, cpu| Ticks::Tick(Tick { time, cpu });
    // Declared state (fast path), a jump that widens `time` (general path), a metadata record
    // that restores width 1 (fast path again), a `cpu` that is not the default (general path).
    let before = [tick(1, 9), tick(3, 9), tick(1000, 9)];
    let after = [tick(1001, 9), tick(1003, 9), tick(1004, 5), tick(1005, 9)];
    let mut w = TypedWriter::<Ticks, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    for r in &before {
        w.write(r).expect("write");
    }
    w.write_metadata(4, 1, Change::Width(1)).expect("metadata");
    for r in &after {
        w.write(r).expect("write");
    }
    let typed = w.finish().expect("finish");

    let plan = Ticks::plan().expect("plan");
    let mut u = UniversalWriter::new(
        Vec::new(),
        plan.schema().clone(),
        &header::<Ticks>(),
        Codec::None,
        0,
    )
    .expect("writer");
    let dynamic = |r: &Ticks| {
        let Ticks::Tick(t) = r;
        DynRecord {
            section: None,
            name: "tick".into(),
            tag: 4,
            fields: vec![Value::Uint(t.time), Value::Uint(t.cpu)],
        }
    };
    for r in &before {
        u.write(&dynamic(r)).expect("write");
    }
    u.write(&DynRecord {
        section: None,
        name: "metadata".into(),
        tag: 3,
        fields: vec![
            Value::Uint(4),
            Value::Uint(1),
            Value::Uint(0),
            Value::Uint(1),
        ],
    })
    .expect("metadata");
    for r in &after {
        u.write(&dynamic(r)).expect("write");
    }
    assert_eq!(
        typed,
        u.finish().expect("finish"),
        "same bytes as the universal writer"
    );

    let read: Vec<Ticks> = TypedReader::new(&typed[..])
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("read");
    let want: Vec<Ticks> = before.iter().chain(&after).cloned().collect();
    assert_eq!(read, want);
    let events = typed_events::<Ticks>(&typed);
    let metadata = events
        .iter()
        .filter(|e| matches!(e, TypedEvent::Metadata { .. }))
        .count();
    // Widen `time` for 1000, restore width 1 (explicit), then `cpu` 5: switch to `none`, whose
    // width 0 is then widened to 1 byte.
    assert_eq!(metadata, 4, "{events:?}");
}

/// A little-endian trace (header property `byteorder = little`) takes the general path, which
/// must agree with the universal codec too: the fast paths write big-endian only.
#[test]
fn little_endian_traces_agree_with_universal_and_read_back() {
    fn little<T: Format + std::fmt::Debug + PartialEq>() {
        let choices: Vec<(usize, u64)> = (0..300u64)
            .map(|i| {
                (
                    (i * 7 % 100) as usize,
                    i.wrapping_mul(0x2545_F491_4F6C_DD1D),
                )
            })
            .collect();
        let input = dyn_records::<T>(&choices);
        let mut head = header::<T>();
        head.properties
            .push(("byteorder".to_string(), "little".to_string()));
        let schema = T::plan().expect("plan").schema().clone();
        let mut w = UniversalWriter::new(Vec::new(), schema, &head, Codec::None, 1).unwrap();
        w.set_block_records(7);
        for r in &input {
            w.write(r).expect("universal write");
        }
        let universal = w.finish().unwrap();
        let events = typed_events::<T>(&universal);
        let mut t =
            TypedWriter::<T, _>::with_properties(Vec::new(), head.properties, Codec::None, 1)
                .unwrap();
        t.set_block_records(7);
        for e in &events {
            if !matches!(e, TypedEvent::Metadata { .. }) {
                t.write_event(e).expect("typed write");
            }
        }
        let typed = t.finish().unwrap();
        assert!(
            typed == universal,
            "typed and universal little-endian bytes differ"
        );
        assert_eq!(typed_events::<T>(&typed), events);
    }
    little::<every::Every>();
    little::<hatf10::Heap>();
}

#[test]
fn a_metadata_width_above_8_is_refused_by_the_typed_writer() {
    let mut w = TypedWriter::<hatf10::Heap, _>::new(Vec::new(), Codec::None, 0).unwrap();
    w.write_section(1).unwrap();
    let err = w
        .write_metadata(4, 1, metatf::field::Change::Width(9))
        .expect_err("width 9");
    assert!(err.to_string().contains("width 9"), "{err}");
}
