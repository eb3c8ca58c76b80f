//! The paper's encodings: events → encode → decode == events, and native events mapping.

use hatf::internal::formats::native::{self, NativeReader, NativeWriter, Record};
use hatf::internal::paper::{self, Encoding};
use hatf::internal::shared::allocation::{AllocEvent, AllocKind};
use proptest::prelude::*;

fn kind() -> impl Strategy<Value = AllocKind> {
    prop_oneof![
        6 => Just(AllocKind::Malloc),
        1 => Just(AllocKind::Calloc),
        1 => Just(AllocKind::Memalign),
        5 => Just(AllocKind::Free),
        2 => Just(AllocKind::Realloc),
        1 => Just(AllocKind::CreateThread),
        1 => Just(AllocKind::DestroyThread),
    ]
}

/// Values that exercise every width: small, runs, 32-bit, 64-bit.
fn value() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 0u64..300,
        2 => 0x5555_5555_0000u64..0x5555_5555_1000,
        1 => any::<u32>().prop_map(u64::from),
        1 => any::<u64>(),
        1 => Just(0u64),
    ]
}

/// Events as front ends make them: fields a kind does not use are 0.
fn typical_event() -> impl Strategy<Value = AllocEvent> {
    (kind(), value(), value(), value(), value(), 0u64..4).prop_map(|(k, a, o, s, x, t)| {
        let mut e = AllocEvent::new(k);
        e.thread = t;
        match k {
            AllocKind::Malloc => {
                e.address = a;
                e.size = s;
            }
            AllocKind::Calloc | AllocKind::Memalign => {
                e.address = a;
                e.size = s;
                e.extra = x;
            }
            AllocKind::Free => e.address = a,
            AllocKind::Realloc => {
                e.address = a;
                e.old_address = o;
                e.size = s;
            }
            AllocKind::CreateThread | AllocKind::DestroyThread => {}
        }
        e
    })
}

/// Any event, stray fields included (thread below 2^48 for simple binary).
fn any_event() -> impl Strategy<Value = AllocEvent> {
    (kind(), value(), value(), value(), value(), 0u64..(1 << 48)).prop_map(|(k, a, o, s, x, t)| {
        AllocEvent {
            kind: k,
            address: a,
            old_address: o,
            size: s,
            extra: x,
            thread: t,
        }
    })
}

fn round_trip(enc: Encoding, events: &[AllocEvent]) {
    let streams = paper::encode(enc, events).unwrap();
    let back = paper::decode(enc, &streams).unwrap();
    assert_eq!(back, events, "{}", enc.name());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_encoding_round_trips_typical_events(events in prop::collection::vec(typical_event(), 0..200)) {
        for enc in Encoding::ALL {
            round_trip(enc, &events);
        }
    }

    #[test]
    fn hatf_and_ascii_round_trip_any_event(events in prop::collection::vec(any_event(), 0..100)) {
        for enc in [Encoding::Ascii, Encoding::HatfNaive, Encoding::HatfBest, Encoding::HatfSplitAddr] {
            round_trip(enc, &events);
        }
    }

    #[test]
    fn simple_and_split_round_trip_or_refuse(events in prop::collection::vec(any_event(), 0..100)) {
        for enc in [Encoding::Simple, Encoding::Split] {
            match paper::encode(enc, &events) {
                Ok(streams) => prop_assert_eq!(paper::decode(enc, &streams).unwrap(), events.clone()),
                Err(m) => prop_assert!(m.contains("event"), "{}", m),
            }
        }
    }

    #[test]
    fn native_records_read_back_write_the_same_bytes(events in prop::collection::vec(any_event(), 0..100)) {
        let bytes = native::write_events(&events, Vec::new()).unwrap();
        let records: Vec<Record> = NativeReader::new(&bytes[..]).collect::<Result<_, _>>().unwrap();
        let mut w = NativeWriter::new(Vec::new());
        for r in &records {
            w.write_record(r).unwrap();
        }
        prop_assert_eq!(w.finish().unwrap().0, bytes);
    }

    #[test]
    fn decoders_never_panic_on_damaged_input(events in prop::collection::vec(typical_event(), 1..40), cut in any::<prop::sample::Index>(), flip in any::<u8>()) {
        for enc in Encoding::ALL {
            let mut streams = paper::encode(enc, &events).unwrap();
            let s = &mut streams[0].bytes;
            if !s.is_empty() {
                let i = cut.index(s.len());
                s[i] ^= flip | 1;
                let _ = paper::decode(enc, &streams);
                let keep = cut.index(streams[0].bytes.len());
                streams[0].bytes.truncate(keep);
                let _ = paper::decode(enc, &streams);
            }
        }
    }
}

#[test]
fn realloc_tags_follow_the_outcome() {
    use native::RecordKind::*;
    let cases = [
        ((0, 0x20, 8), ReallocAlloc),
        ((0x10, 0, 8), ReallocFree),
        ((0x10, 0x10, 0), ReallocFree),
        ((0x10, 0x10, 8), ReallocNoAlloc),
        ((0x10, 0x20, 8), ReallocAllocFree),
    ];
    for ((old, new, size), kind) in cases {
        let mut e = AllocEvent::new(AllocKind::Realloc);
        e.old_address = old;
        e.address = new;
        e.size = size;
        let r = native::event_to_record(&e);
        assert_eq!(r.kind, kind, "{old:#x} {new:#x} {size}");
        assert_eq!(native::record_to_event(&r).unwrap(), e);
    }
}

#[test]
fn calloc_and_memalign_travel_in_attributes() {
    let mut c = AllocEvent::new(AllocKind::Calloc);
    c.extra = 3;
    c.size = 48;
    let r = native::event_to_record(&c);
    assert_eq!(r.kind, native::RecordKind::Alloc);
    assert_eq!(r.attributes, [0x11, 3]);
    let mut m = AllocEvent::new(AllocKind::Memalign);
    m.extra = 4096;
    assert_eq!(native::event_to_record(&m).attributes, [0x22, 0x10, 0x00]);
    assert!(native::event_to_record(&AllocEvent::new(AllocKind::Malloc))
        .attributes
        .is_empty());
}

#[test]
fn inconsistent_realloc_tag_is_refused() {
    let mut r = native::DataRecord::new(native::RecordKind::ReallocNoAlloc);
    r.old_address = 1;
    r.address = 2;
    r.size = 3;
    let e = native::record_to_event(&r).unwrap_err();
    assert!(e.contains("realloc tag 2"), "{e}");
}

#[test]
fn best_is_smaller_than_naive_on_a_regular_trace() {
    // Small sizes, runs of one size, addresses on a stride: what section 3.3 targets.
    let mut events = Vec::new();
    for i in 0..2000u64 {
        let mut e = AllocEvent::new(AllocKind::Malloc);
        e.size = if i % 100 < 60 { 32 } else { 8 + i % 50 };
        e.address = 0x5555_5555_0000 + 48 * i;
        events.push(e);
    }
    let naive = paper::encode(Encoding::HatfNaive, &events).unwrap()[0]
        .bytes
        .len();
    let best = paper::encode(Encoding::HatfBest, &events).unwrap()[0]
        .bytes
        .len();
    let split: usize = paper::encode(Encoding::HatfSplitAddr, &events)
        .unwrap()
        .iter()
        .map(|s| s.bytes.len())
        .sum();
    assert!(best * 2 < naive, "best {best} naive {naive}");
    assert_eq!(split, best, "splitting moves bytes, it does not add any");
    // Naive: tag + 4-byte size + 8-byte address after one widening record.
    assert_eq!(naive, 4 + 2000 * 13);
}

#[test]
fn simple_is_16_bytes_per_record_for_32_bit_values() {
    let mut e = AllocEvent::new(AllocKind::Malloc);
    e.size = 10;
    e.address = 0x0804_a008;
    let s = paper::encode(Encoding::Simple, &[e; 5]).unwrap();
    assert_eq!(s[0].bytes.len(), 80);
    let split = paper::encode(Encoding::Split, &[e; 5]).unwrap();
    let total: usize = split.iter().map(|s| s.bytes.len()).sum();
    assert_eq!(
        total,
        5 * 13,
        "tag + three 4-byte columns, no thread column"
    );
}
