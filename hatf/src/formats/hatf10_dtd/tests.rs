//! The generated codec against the universal codec on the same records, and event round trips.

use metatf::typed::Format;
use metatf::{Codec, ContainerHeader, DynRecord, UniversalReader, UniversalWriter, Value};
use proptest::prelude::*;

use super::generated::Heap;
use super::{decode, encode, to_record, EventWriter};
use crate::shared::allocation::event::{AllocEvent, AllocKind};

fn ev(kind: AllocKind, address: u64, old_address: u64, size: u64, extra: u64) -> AllocEvent {
    AllocEvent {
        kind,
        address,
        old_address,
        size,
        extra,
        thread: 0,
    }
}

/// Every kind, 32- and 64-bit addresses (the latter make the writers widen `address`), a
/// thread id (makes them leave `default 0`), and the rare values that go to the attributes.
fn mixed_events(n: u64) -> Vec<AllocEvent> {
    let mut out = Vec::new();
    for i in 0..n {
        let base = if i % 1000 < 500 {
            0x1000
        } else {
            0x7f00_0000_0000
        };
        let a = base + 0x40 * i;
        let mut e = match i % 9 {
            0 => ev(AllocKind::Malloc, a, 0, 16 + i % 100, 0),
            1 => ev(AllocKind::Calloc, a, 0, 64, 4),
            2 => ev(AllocKind::Memalign, a, 0, 128, 64),
            3 => ev(AllocKind::Free, a - 0x40, 0, 0, 0),
            4 => ev(AllocKind::Realloc, a + 8, a, 200, 0),
            5 => ev(AllocKind::Realloc, a, 0, 30, 0),
            6 => ev(AllocKind::Realloc, 0, a, 0, 0),
            7 => ev(AllocKind::CreateThread, 0, 0, 0, 0),
            _ => ev(AllocKind::Free, a, 0, 5, 9),
        };
        if i % 7 == 3 {
            e.thread = 1 + i % 5;
        }
        out.push(e);
    }
    out
}

/// A generated record as the universal codec's dynamic record (fields in DTD order, the
/// vfield as its length then its bytes).
fn to_dyn(r: &Heap) -> DynRecord {
    let u = Value::Uint;
    let bytes = |v: &Vec<u8>| [u(v.len() as u64), Value::Bytes(v.clone())];
    let (name, tag, mut fields, vfield) = match r {
        Heap::Alloc(a) => (
            "alloc",
            4,
            vec![u(a.size), u(a.address), u(a.time), u(a.thread), u(a.heap)],
            &a.vfield,
        ),
        Heap::Realloc(a) => (
            "realloc",
            5,
            vec![
                u(a.size),
                u(a.address_1),
                u(a.address_2),
                u(a.time),
                u(a.thread),
                u(a.heap),
            ],
            &a.vfield,
        ),
        Heap::Free(a) => (
            "free",
            6,
            vec![u(a.address), u(a.time), u(a.thread), u(a.heap)],
            &a.vfield,
        ),
        Heap::CreateHeap(a) => ("createHeap", 7, vec![u(a.thread), u(a.heap)], &a.vfield),
        Heap::DestroyHeap(a) => ("destroyHeap", 8, vec![u(a.thread), u(a.heap)], &a.vfield),
        Heap::CreateThread(a) => ("createThread", 9, vec![u(a.thread)], &a.vfield),
        Heap::DestroyThread(a) => ("destroyThread", 10, vec![u(a.thread)], &a.vfield),
    };
    fields.extend(bytes(vfield));
    DynRecord {
        section: Some(1),
        name: name.to_string(),
        tag,
        fields,
    }
}

fn universal_write(records: &[DynRecord], properties: Vec<(String, String)>) -> Vec<u8> {
    let plan = Heap::plan().expect("plan");
    let header = ContainerHeader {
        dtd: plan.dtd().to_string(),
        format: plan.format().to_string(),
        properties,
    };
    let mut w = UniversalWriter::new(Vec::new(), plan.schema().clone(), &header, Codec::None, 0)
        .expect("universal writer");
    let section = DynRecord {
        section: None,
        name: "section".into(),
        tag: 2,
        fields: vec![Value::Uint(1)],
    };
    // The typed writer writes the section record before the first record only.
    if !records.is_empty() {
        w.write(&section).expect("section record");
    }
    for r in records {
        w.write(r).expect("record");
    }
    w.finish().expect("finish")
}

/// The data records (section `heap`) a universal reader finds.
fn universal_read(bytes: &[u8]) -> (Vec<DynRecord>, usize) {
    let mut r = UniversalReader::new(bytes).expect("universal reader");
    let mut data = Vec::new();
    let mut metadata = 0;
    while let Some(rec) = r.next_record().expect("record") {
        match rec.name.as_str() {
            "metadata" => metadata += 1,
            "section" | "comment" => {}
            _ => data.push(rec),
        }
    }
    (data, metadata)
}

#[test]
fn generated_writer_writes_the_universal_writers_bytes() {
    // More than one block (65536 records each), so block boundaries are compared too.
    let events = mixed_events(70_000);
    let props = vec![("source-format".to_string(), "mtrace".to_string())];
    let mut w = EventWriter::new(Vec::new(), props.clone(), Codec::None, 0).expect("writer");
    for e in &events {
        w.write(e).expect("event");
    }
    let typed = w.finish().expect("finish");
    let dyns: Vec<DynRecord> = events.iter().map(|e| to_dyn(&to_record(e))).collect();
    let universal = universal_write(&dyns, props);
    assert_eq!(typed.len(), universal.len());
    assert!(typed == universal, "the two writers' bytes differ");
}

#[test]
fn universal_reader_reads_the_same_records_and_the_widening_metadata() {
    let events = mixed_events(2_000);
    let bytes = encode(&events).expect("encode");
    let (data, metadata) = universal_read(&bytes);
    let expected: Vec<DynRecord> = events.iter().map(|e| to_dyn(&to_record(e))).collect();
    assert_eq!(data, expected);
    // 64-bit addresses and thread ids do not fit the DTD's initial fields: the writer said so.
    assert!(metadata >= 2, "{metadata} metadata records");
}

#[test]
fn generated_reader_reads_what_the_universal_writer_wrote() {
    let events = mixed_events(3_000);
    let dyns: Vec<DynRecord> = events.iter().map(|e| to_dyn(&to_record(e))).collect();
    let bytes = universal_write(&dyns, Vec::new());
    assert_eq!(decode(&bytes[..]).expect("decode"), events);
}

#[test]
fn calloc_and_memalign_travel_in_the_vfield() {
    let Heap::Alloc(a) = to_record(&ev(AllocKind::Calloc, 0x10, 0, 64, 4)) else {
        panic!("calloc is an alloc record");
    };
    assert_eq!((a.size, a.address, a.vfield), (64, 0x10, vec![0x11, 4]));
    let Heap::Realloc(r) = to_record(&ev(AllocKind::Realloc, 0x20, 0x10, 8, 0)) else {
        panic!("realloc is a realloc record");
    };
    assert_eq!((r.address_1, r.address_2), (0x10, 0x20), "old, then new");
}

#[test]
fn a_file_of_another_dtd_is_refused() {
    let header = ContainerHeader {
        dtd: "size.width = 2; size.interpretation = none;\n\
              section heap 1 { alloc : (tag, size) { tag.value = 4; } }\n"
            .to_string(),
        format: "heap".to_string(),
        properties: vec![],
    };
    let schema = metatf::dtd::parse_schema(&header.dtd, "tiny").expect("schema");
    let w = UniversalWriter::new(Vec::new(), schema, &header, Codec::None, 0).expect("writer");
    let bytes = w.finish().expect("finish");
    let err = decode(&bytes[..]).expect_err("a different DTD");
    assert!(err.contains("DTD"), "{err}");
}

#[test]
fn heap_records_and_times_have_no_event() {
    use super::generated::{Alloc, CreateHeap};
    assert!(super::to_event(&Heap::CreateHeap(CreateHeap::default())).is_err());
    let timed = Heap::Alloc(Alloc {
        time: 5,
        ..Alloc::default()
    });
    assert!(super::to_event(&timed).unwrap_err().contains("time"));
}

fn any_event() -> impl Strategy<Value = AllocEvent> {
    let kind = prop_oneof![
        Just(AllocKind::Malloc),
        Just(AllocKind::Calloc),
        Just(AllocKind::Memalign),
        Just(AllocKind::Free),
        Just(AllocKind::Realloc),
        Just(AllocKind::CreateThread),
        Just(AllocKind::DestroyThread),
    ];
    let value = prop_oneof![0..64u64, 0..1u64 << 32, any::<u64>()];
    (
        kind,
        value.clone(),
        value.clone(),
        value.clone(),
        value.clone(),
        value,
    )
        .prop_map(
            |(kind, address, old_address, size, extra, thread)| AllocEvent {
                kind,
                address,
                old_address,
                size,
                extra,
                thread,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn events_round_trip_and_both_writers_agree(events in prop::collection::vec(any_event(), 0..200)) {
        let bytes = encode(&events).expect("encode");
        prop_assert_eq!(decode(&bytes[..]).expect("decode"), events.clone());
        let dyns: Vec<DynRecord> = events.iter().map(|e| to_dyn(&to_record(e))).collect();
        prop_assert!(universal_write(&dyns, Vec::new()) == bytes, "writers disagree");
        prop_assert_eq!(universal_read(&bytes).0, dyns);
    }
}
