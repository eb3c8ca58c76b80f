//! Differential tests of the model engine: the typed (derived and DTD-compiled) writers and the
//! universal writer code the same records into the same bytes when the header names the model
//! engine, with predictors chosen per block (`auto`) or fixed by the DTD (`field.model`), at
//! any block size, with byte strings, comments, section switches and metadata records mid-stream;
//! each reader reads the other's output; damaged input is an error, never a panic.

use hatf_tests::differential::{
    dyn_records, every, header, typed_events, typed_round_trip, universal_write, with_metadata,
};
use hatf_tests::dtd_codecs::{self, hatf10};
use hatf_tests::{for_each_dtd_format, for_each_model_format};
use metatf::typed::{Format, TypedEvent, TypedReader, TypedWriter};
use metatf::{Codec, ContainerHeader, DynRecord, MetaTf, UniversalReader, UniversalWriter};
use proptest::prelude::*;

/// A heap format whose fields fix their models (object references, reuse of freed addresses).
mod fixed {
    use metatf::MetaTf;

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 4)]
    pub struct Alloc {
        #[metatf(model = "none, mtf")]
        pub size: u64,
        #[metatf(model = "sum size, reuse size, reuse")]
        pub ptr: u64,
        pub site: Vec<u8>,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 5)]
    pub struct Free {
        #[metatf(model = "none, live alloc.ptr, keydelta alloc.size")]
        pub ptr: u64,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(section = 1, name = "heap", model = "auto")]
    pub enum Heap {
        Alloc(Alloc),
        Free(Free),
    }
}

fn model_header<T: Format>() -> ContainerHeader {
    let mut h = header::<T>();
    h.properties.push(("engine".into(), "model".into()));
    h
}

fn typed_write<T: Format>(events: &[TypedEvent<T>], block: u64) -> Vec<u8> {
    let mut w = TypedWriter::<T, _>::modelled(Vec::new()).expect("typed writer");
    w.set_block_records(block);
    for e in events {
        // The model engine adds no metadata of its own: every event is the input's.
        w.write_event(e).expect("typed write");
    }
    w.finish().expect("finish")
}

fn universal_records(bytes: &[u8]) -> Vec<DynRecord> {
    let mut r = UniversalReader::new(bytes).expect("universal reader");
    std::iter::from_fn(|| r.next_record().expect("universal read")).collect()
}

/// A section record's own `section` is whatever the writer knew; compare without it.
fn normalised(mut records: Vec<DynRecord>) -> Vec<DynRecord> {
    for r in &mut records {
        if r.name == "section" {
            r.section = None;
        }
    }
    records
}

/// The whole differential check for one format and one set of records; returns the bytes.
fn check<T: Format + std::fmt::Debug + PartialEq>(input: &[DynRecord], block: u64) -> Vec<u8> {
    let universal = universal_write::<T>(input, block, &model_header::<T>(), Codec::None, 0);
    let events = typed_events::<T>(&universal);
    assert_eq!(
        events.len(),
        input.len(),
        "the typed reader reads every record"
    );
    let typed = typed_write::<T>(&events, block);
    assert!(typed == universal, "typed and universal writers disagree");
    assert_eq!(
        normalised(universal_records(&typed)),
        normalised(input.to_vec()),
        "the universal reader reads the typed output back"
    );
    assert_eq!(typed_events::<T>(&typed), events);
    typed
}

fn input<T: Format>(choices: &[(usize, u64)], metadata_every: usize) -> Vec<DynRecord> {
    with_metadata::<T>(dyn_records::<T>(choices), metadata_every)
}

// Every block sets up the engine's tables afresh (most of the time of a block of a few
// records), so the cases are few and the blocks not too small.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn every_dtd_generated_codec_agrees_with_universal_under_the_model_engine(
        choices in prop::collection::vec((0usize..100, any::<u64>()), 0..40),
        block in 8u64..40,
        metadata_every in 1usize..12,
    ) {
        macro_rules! check_format {
            ($module:ident, $format:ident) => {
                check::<dtd_codecs::$module::$format>(
                    &input::<dtd_codecs::$module::$format>(&choices, metadata_every),
                    block,
                );
            };
        }
        for_each_dtd_format!(check_format);
    }

    #[test]
    fn model_dtds_compiled_with_the_switch_agree_with_universal(
        choices in prop::collection::vec((0usize..100, any::<u64>()), 0..60),
        block in 4u64..40,
        metadata_every in 1usize..12,
    ) {
        macro_rules! check_format {
            ($module:ident, $format:ident) => {
                prop_assert!(<dtd_codecs::$module::$format as Format>::MODEL_ENGINE);
                check::<dtd_codecs::$module::$format>(
                    &input::<dtd_codecs::$module::$format>(&choices, metadata_every),
                    block,
                );
            };
        }
        for_each_model_format!(check_format);
    }

    #[test]
    fn derived_formats_agree_with_universal_under_the_model_engine(
        choices in prop::collection::vec((0usize..100, any::<u64>()), 0..80),
        block in 1u64..40,
        metadata_every in 1usize..12,
    ) {
        check::<every::Every>(&input::<every::Every>(&choices, metadata_every), block);
        check::<every::Lives>(&input::<every::Lives>(&choices, metadata_every), block);
        check::<fixed::Heap>(&input::<fixed::Heap>(&choices, metadata_every), block);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Any byte changed, or the file cut short: both readers give an error or records, and
    /// never panic.
    #[test]
    fn damaged_model_engine_files_are_errors_not_panics(
        choices in prop::collection::vec((0usize..100, any::<u64>()), 1..60),
        block in 10u64..40,
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
        cut in any::<bool>(),
    ) {
        let bytes = universal_write::<every::Lives>(
            &dyn_records::<every::Lives>(&choices),
            block,
            &model_header::<every::Lives>(),
            Codec::None,
            0,
        );
        let mut damaged = bytes.clone();
        let i = at.index(damaged.len());
        if cut {
            damaged.truncate(i);
        } else {
            damaged[i] ^= flip;
        }
        if let Ok(r) = TypedReader::<every::Lives, _>::new(&damaged[..]) {
            for x in r.take(1 << 16) {
                if x.is_err() {
                    break;
                }
            }
        }
        if let Ok(mut r) = UniversalReader::new(&damaged[..]) {
            for _ in 0..1 << 16 {
                if !matches!(r.next_record(), Ok(Some(_))) {
                    break;
                }
            }
        }
    }
}

#[test]
fn a_format_that_asks_for_the_model_engine_gets_it_from_both_writers() {
    let trace: Vec<fixed::Heap> = (0..2000u64)
        .map(|i| match i % 3 {
            2 => fixed::Heap::Free(fixed::Free {
                ptr: 0x1000 + 64 * (i - 2),
            }),
            _ => fixed::Heap::Alloc(fixed::Alloc {
                size: 16 + i % 5 * 16,
                ptr: 0x1000 + 64 * i,
                site: format!("site{}", i % 7).into_bytes(),
            }),
        })
        .collect();
    let mut t = TypedWriter::<fixed::Heap, _>::new(Vec::new(), Codec::Zstd, 3).expect("writer");
    for r in &trace {
        t.write(r).expect("write");
    }
    let typed = t.finish().expect("finish");
    let mut u =
        UniversalWriter::for_format::<fixed::Heap>(Vec::new(), Codec::Zstd, 3).expect("writer");
    let mut reader = TypedReader::<fixed::Heap, _>::new(&typed[..]).expect("reader");
    assert_eq!(reader.header().property("engine"), Some("model"));
    for r in universal_records(&typed) {
        u.write(&r).expect("write");
    }
    assert!(u.finish().expect("finish") == typed, "same bytes");
    let back: Vec<fixed::Heap> = reader.by_ref().collect::<Result<_, _>>().expect("read");
    assert_eq!(back, trace);
    // The model engine codes these 2000 records in far less than their record layout.
    let mut plain =
        TypedWriter::<fixed::Heap, _>::with_properties(Vec::new(), vec![], Codec::None, 0)
            .expect("writer");
    for r in &trace {
        plain.write(r).expect("write");
    }
    let plain = plain.finish().expect("finish");
    assert!(
        typed.len() * 4 < plain.len(),
        "model engine {} bytes, record layout {} bytes",
        typed.len(),
        plain.len()
    );
}

#[test]
fn the_typed_reader_reads_paper_layout_and_model_engine_files_of_one_format() {
    let records: Vec<hatf10::Heap> = (0..300u64)
        .map(|i| {
            hatf10::Heap::Alloc(hatf10::Alloc {
                size: 16 + i,
                address: 0x1000 + 64 * i,
                time: i,
                thread: i % 2,
                heap: 0,
                vfield: vec![i as u8; (i % 5) as usize],
            })
        })
        .collect();
    let mut files = Vec::new();
    for modelled in [false, true] {
        let w = if modelled {
            TypedWriter::<hatf10::Heap, _>::modelled(Vec::new())
        } else {
            TypedWriter::<hatf10::Heap, _>::new(Vec::new(), Codec::None, 0)
        }
        .expect("writer");
        files.push(typed_round_trip(w, 64, &records));
    }
    assert!(files[1] != files[0], "two layouts");
}

#[test]
fn a_repeat_count_that_disagrees_leaves_nothing_in_the_block() {
    #[derive(MetaTf, Debug, Clone, PartialEq)]
    #[metatf(tag = 4)]
    struct Stack {
        depth: u8,
        #[metatf(count = "depth")]
        frames: Vec<u64>,
    }
    #[derive(MetaTf, Debug, Clone, PartialEq)]
    #[metatf(model = "auto")]
    enum Stacks {
        Stack(Stack),
    }
    let good = Stacks::Stack(Stack {
        depth: 2,
        frames: vec![0x4000, 0x4010],
    });
    let bad = Stacks::Stack(Stack {
        depth: 3,
        frames: vec![0x4000],
    });
    let mut w = TypedWriter::<Stacks, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    w.write(&good).expect("write");
    let err = w.write(&bad).expect_err("count 3, one frame");
    assert!(err.to_string().contains("repetitions"), "{err}");
    w.write(&good).expect("write");
    let bytes = w.finish().expect("finish");
    let back: Vec<Stacks> = TypedReader::new(&bytes[..])
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("read");
    assert_eq!(back, [good.clone(), good]);
}

/// One allocator trace in two layouts: the address before the size (as traces print it) and
/// the size first.
mod order {
    use metatf::MetaTf;

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 4)]
    pub struct Alloc {
        pub site: Vec<u8>,
        pub ptr: u64,
        pub size: u64,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 4)]
    pub struct SizedAlloc {
        pub site: Vec<u8>,
        pub size: u64,
        pub ptr: u64,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(tag = 5)]
    pub struct Free {
        pub ptr: u64,
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(model = "auto")]
    pub enum PtrFirst {
        Alloc(Alloc),
        Free(Free),
    }

    #[derive(MetaTf, Debug, Clone, PartialEq, Eq)]
    #[metatf(model = "auto")]
    pub enum SizeFirst {
        Alloc(SizedAlloc),
        Free(Free),
    }
}

/// Writes `trace` with the typed writer, checks that the universal writer writes the same
/// bytes and that both readers read it back; returns the bytes.
fn write_and_read_back<T: Format + std::fmt::Debug + PartialEq>(trace: &[T]) -> Vec<u8> {
    let mut t = TypedWriter::<T, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    for r in trace {
        t.write(r).expect("write");
    }
    let typed = t.finish().expect("finish");
    let mut u = UniversalWriter::for_format::<T>(Vec::new(), Codec::None, 0).expect("writer");
    for r in universal_records(&typed) {
        u.write(&r).expect("write");
    }
    assert!(u.finish().expect("finish") == typed, "same bytes");
    let reader = TypedReader::<T, _>::new(&typed[..]).expect("reader");
    let back: Vec<T> = reader.collect::<Result<_, _>>().expect("read");
    assert_eq!(back, trace);
    typed
}

#[test]
fn the_writer_codes_a_size_before_the_address_it_keys() {
    // Each allocation takes the address its size freed last (a fresh one when there is none);
    // every other record frees one of the four newest live blocks, whatever their size; the
    // call site says nothing of the size. The address is cheap given the size only.
    const SIZES: [u64; 8] = [16, 24, 32, 48, 64, 96, 128, 4096];
    let mut freed: Vec<Vec<u64>> = vec![Vec::new(); SIZES.len()];
    let mut live: Vec<(u64, usize)> = Vec::new();
    let (mut top, mut x) = (0x5000_0000u64, 0x2545_F491_4F6C_DD1Du64);
    let mut ptr_first = Vec::new();
    let mut size_first = Vec::new();
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if live.len() > 64 && x.is_multiple_of(2) {
            let (ptr, k) = live.remove(live.len() - 1 - (x >> 8) as usize % 4);
            freed[k].push(ptr);
            ptr_first.push(order::PtrFirst::Free(order::Free { ptr }));
            size_first.push(order::SizeFirst::Free(order::Free { ptr }));
        } else {
            let k = (x >> 20) as usize % SIZES.len();
            let ptr = freed[k].pop().unwrap_or_else(|| {
                top += SIZES[k] + 16;
                top
            });
            live.push((ptr, k));
            let site = format!("site{}", (x >> 40) % 4).into_bytes();
            let size = SIZES[k];
            ptr_first.push(order::PtrFirst::Alloc(order::Alloc {
                site: site.clone(),
                ptr,
                size,
            }));
            size_first.push(order::SizeFirst::Alloc(order::SizedAlloc {
                site,
                size,
                ptr,
            }));
        }
    }
    let reordered = write_and_read_back(&ptr_first);
    let declared = write_and_read_back(&size_first);
    // The writer finds the size-first order itself: within a few bytes of the layout that
    // declares it.
    assert!(
        reordered.len() * 100 <= declared.len() * 102,
        "{} bytes with the address declared first, {} with the size",
        reordered.len(),
        declared.len()
    );
}
