//! Property tests of the model engine: random records through every predictor the choice can
//! make, sections and metadata records mid-stream, block boundaries anywhere, and damaged blocks
//! (an error or wrong records, never a panic).

use super::engine::Carried;
use proptest::prelude::*;

use super::choice::Choice;
use super::flat::FlatBlock;
use super::predict::{Kind, Spec};
use super::{
    choose_block, decode_alone, decode_block, encode_block, Streams, ENGINE_MODEL, PROPERTY_ENGINE,
};
use crate::container::{Codec, ContainerHeader};
use crate::universal::plan::Catalog;
use crate::universal::{DynRecord, UniversalReader, UniversalWriter, Value};

const DTD: &str = "tag.width = 1;
size.width = 4; size.interpretation = none;
ptr.width = 8;  ptr.interpretation = none;
n.width = 1; n.interpretation = none;
a.width = 2; a.interpretation = none;
b.width = 8; b.interpretation = none;
pairs : (tag, n * (a, b)) { tag.value = 9; }
section heap 1 {
    alloc : (tag, size, ptr) { tag.value = 4; }
    free  : (tag, ptr)       { tag.value = 5; }
    note  : (tag, vfield)    { tag.value = 7; }
}
section other 2 {
    mark : (tag, ptr, size) { tag.value = 4; }
}
";

pub(super) fn schema() -> metatf_dtd::Schema {
    match metatf_dtd::parse_schema(DTD, "test.dtd") {
        Ok(s) => s,
        Err(d) => panic!("{d}"),
    }
}

/// One step of a random trace.
#[derive(Debug, Clone)]
pub(super) enum Op {
    Alloc(u64, u64),
    Free(usize),
    Note(Vec<u8>),
    Pairs(Vec<(u64, u64)>),
    Section(u64),
    Mark(u64, u64),
    Metadata(Vec<u64>),
}

pub(super) fn op() -> impl Strategy<Value = Op> {
    let value = prop_oneof![0u64..16, 0u64..5000, any::<u64>()];
    prop_oneof![
        4 => (value.clone(), 0u64..64).prop_map(|(s, p)| Op::Alloc(s, 0x1000 + 16 * p)),
        3 => (0usize..64).prop_map(Op::Free),
        1 => proptest::collection::vec(any::<u8>(), 0..12).prop_map(Op::Note),
        1 => proptest::collection::vec((value.clone(), value.clone()), 0..4).prop_map(Op::Pairs),
        1 => (1u64..3).prop_map(Op::Section),
        1 => (value.clone(), value).prop_map(|(a, b)| Op::Mark(a, b)),
        1 => proptest::collection::vec(0u64..300, 3..6).prop_map(Op::Metadata),
    ]
}

pub(super) fn rec(name: &str, tag: u64, fields: Vec<Value>) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields,
    }
}

/// The records of `ops`, skipping steps the current section does not allow.
pub(super) fn records(ops: &[Op]) -> Vec<DynRecord> {
    let mut out = vec![rec("section", 2, vec![Value::Uint(1)])];
    let mut section = 1;
    let mut live: Vec<u64> = Vec::new();
    for op in ops {
        let r = match (op, section) {
            (Op::Alloc(size, ptr), 1) => {
                live.push(*ptr);
                rec("alloc", 4, vec![Value::Uint(*size), Value::Uint(*ptr)])
            }
            (Op::Free(i), 1) if !live.is_empty() => {
                let p = live.remove(i % live.len());
                rec("free", 5, vec![Value::Uint(p)])
            }
            (Op::Note(b), 1) => rec(
                "note",
                7,
                vec![Value::Uint(b.len() as u64), Value::Bytes(b.clone())],
            ),
            (Op::Pairs(items), _) => rec(
                "pairs",
                9,
                vec![
                    Value::Uint(items.len() as u64),
                    Value::List(
                        items
                            .iter()
                            .map(|&(a, b)| vec![Value::Uint(a), Value::Uint(b)])
                            .collect(),
                    ),
                ],
            ),
            (Op::Section(n), _) => {
                section = *n;
                rec("section", 2, vec![Value::Uint(*n)])
            }
            (Op::Mark(a, b), 2) => rec("mark", 4, vec![Value::Uint(*a), Value::Uint(*b)]),
            (Op::Metadata(v), _) => rec("metadata", 3, v.iter().map(|&x| Value::Uint(x)).collect()),
            _ => continue,
        };
        out.push(r);
    }
    out
}

pub(super) fn header() -> ContainerHeader {
    ContainerHeader {
        dtd: DTD.into(),
        format: String::new(),
        properties: vec![(PROPERTY_ENGINE.into(), ENGINE_MODEL.into())],
    }
}

fn write(records: &[DynRecord], per_block: u64) -> Vec<u8> {
    write_with(records, per_block, &header())
}

/// [`write`] with header `header`.
pub(super) fn write_with(
    records: &[DynRecord],
    per_block: u64,
    header: &ContainerHeader,
) -> Vec<u8> {
    let mut w = UniversalWriter::new(Vec::new(), schema(), header, Codec::Zstd, 3).unwrap();
    w.set_block_records(per_block);
    for r in records {
        if let Err(e) = w.write(r) {
            panic!("{e}");
        }
    }
    w.finish().unwrap()
}

pub(super) fn read(bytes: &[u8]) -> Vec<(String, u64, Vec<Value>)> {
    let mut r = UniversalReader::new(bytes).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push((rec.name, rec.tag, rec.fields));
    }
    out
}

/// The records [`UniversalReader::read_record`] refills one record with, each copied out, and
/// its section.
fn read_refilled(bytes: &[u8]) -> Vec<DynRecord> {
    let mut r = UniversalReader::new(bytes).unwrap();
    let mut rec = DynRecord::default();
    let mut out = Vec::new();
    while r.read_record(&mut rec).unwrap() {
        out.push(rec.clone());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A record refilled in place gives the records a fresh one does, field by field, where
    /// one record's shape follows another's (byte strings, groups of other lengths, metadata,
    /// sections).
    #[test]
    fn refilled_records_are_the_records_read_fresh(
        ops in proptest::collection::vec(op(), 0..300),
        per_block in prop_oneof![Just(0u64), 1u64..4, 5u64..80],
    ) {
        let bytes = write(&records(&ops), per_block);
        let mut r = UniversalReader::new(&bytes[..]).unwrap();
        let fresh: Vec<DynRecord> = std::iter::from_fn(|| r.next_record().unwrap()).collect();
        prop_assert_eq!(read_refilled(&bytes), fresh);
    }

    #[test]
    fn records_round_trip_across_blocks(
        ops in proptest::collection::vec(op(), 0..300),
        per_block in prop_oneof![Just(0u64), 1u64..4, 5u64..80],
    ) {
        let recs = records(&ops);
        let back = read(&write(&recs, per_block));
        let want: Vec<_> = recs.into_iter().map(|r| (r.name, r.tag, r.fields)).collect();
        prop_assert_eq!(back, want);
    }

    #[test]
    fn damaged_blocks_give_errors_not_panics(
        ops in proptest::collection::vec(op(), 1..200),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let schema = schema();
        let catalog = Catalog::new(&schema).unwrap();
        let streams = Streams::new(&catalog);
        let declared = |n: u8| schema.section(n).is_some();
        let flat = flat_of(&catalog, &ops);
        let chosen = choose_block(&catalog, &streams, &flat, None, &declared, &[]).unwrap();
        // The keyed alternative where there is one (it exercises the keyed ranks).
        let choices = chosen.proposals.get(1).unwrap_or(&chosen.proposals[0]).clone();
        let bytes = encode_block(&catalog, &streams, &flat, &choices, chosen.tag_context, None, &declared).unwrap();
        // Undamaged, the block decodes to exactly its records.
        let (back, _) = decode_alone(&catalog, &streams, &bytes, flat.records, None, &declared).unwrap();
        prop_assert_eq!(&back.words, &flat.words);
        prop_assert_eq!(&back.bytes, &flat.bytes);
        let mut damaged = bytes.clone();
        for (at, x) in &flips {
            let i = at.index(damaged.len());
            damaged[i] ^= x;
        }
        let _ = decode_alone(&catalog, &streams, &damaged, flat.records, None, &declared);
        let short = &bytes[..cut.index(bytes.len())];
        let _ = decode_alone(&catalog, &streams, short, flat.records, None, &declared);
        let _ = decode_alone(&catalog, &streams, &bytes, flat.records + 1000, None, &declared);
    }
}

/// The records of `ops` as one flat block.
pub(super) fn flat_of(catalog: &Catalog, ops: &[Op]) -> FlatBlock {
    let mut flat = FlatBlock::default();
    for r in records(ops) {
        let section = if r.name == "mark" { Some(2) } else { Some(1) };
        let plan = catalog.by_tag(section, r.tag).unwrap();
        flat.push(plan, &r.fields).unwrap();
    }
    flat
}

/// Sizes of the allocator-like traces: objects of a size take back the addresses last freed by
/// objects of that size.
const SIZES: [u64; 4] = [16, 24, 48, 4096];

/// An allocator-like trace in section 1: `(true, i)` allocates an object of size `SIZES[i % 4]`
/// at the address most recently freed by that size (or a new one), `(false, i)` frees the
/// `i`-th live object (modulo their count).
fn allocator_records(steps: &[(bool, usize)]) -> Vec<DynRecord> {
    let mut top = 0x10_0000u64;
    allocations(steps, &SIZES, |k, _, freed| {
        freed.pop().unwrap_or_else(|| {
            top += SIZES[k];
            top
        })
    })
}

/// A trace in section 1 where `(true, i)` allocates an object of size `sizes[i % n]` at the
/// address `place(k, i, freed)` gives, `freed` being the addresses freed by objects of size
/// `sizes[k]` (newest last; `place` takes out the one it reuses), and `(false, i)` frees the
/// `i`-th live object (modulo their count).
pub(super) fn allocations(
    steps: &[(bool, usize)],
    sizes: &[u64],
    mut place: impl FnMut(usize, usize, &mut Vec<u64>) -> u64,
) -> Vec<DynRecord> {
    let mut out = vec![rec("section", 2, vec![Value::Uint(1)])];
    let mut freed: Vec<Vec<u64>> = vec![Vec::new(); sizes.len()];
    let mut live: Vec<(u64, usize)> = Vec::new();
    for &(alloc, i) in steps {
        if alloc {
            let k = i % sizes.len();
            let ptr = place(k, i, &mut freed[k]);
            live.push((ptr, k));
            out.push(rec(
                "alloc",
                4,
                vec![Value::Uint(sizes[k]), Value::Uint(ptr)],
            ));
        } else if !live.is_empty() {
            let (ptr, k) = live.remove(i % live.len());
            freed[k].push(ptr);
            out.push(rec("free", 5, vec![Value::Uint(ptr)]));
        }
    }
    out
}

/// An allocator's trace of `steps` steps (two allocations to one free, at scattered sizes), with
/// the schema, catalog and streams that code it.
struct AllocatorTrace {
    recs: Vec<DynRecord>,
    schema: metatf_dtd::Schema,
    catalog: Catalog,
    streams: Streams,
}

fn allocator_trace(steps: usize) -> AllocatorTrace {
    let steps: Vec<(bool, usize)> = (0..steps)
        .map(|i| (i % 3 != 2, i.wrapping_mul(2_654_435_761) >> 7))
        .collect();
    let schema = schema();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    AllocatorTrace {
        recs: allocator_records(&steps),
        schema,
        catalog,
        streams,
    }
}

pub(super) fn flat_block(catalog: &Catalog, records: &[DynRecord]) -> FlatBlock {
    let mut flat = FlatBlock::default();
    for r in records {
        let plan = catalog.by_tag(Some(1), r.tag).unwrap();
        flat.push(plan, &r.fields).unwrap();
    }
    flat
}

/// The stream of field `name` of the record with tag `tag` in section 1.
pub(super) fn stream_of(catalog: &Catalog, streams: &Streams, tag: u64, name: &str) -> usize {
    let plan = catalog.plan_index(Some(1), tag).unwrap();
    (0..streams.len())
        .find(|&s| streams.info[s].plan == plan && streams.info[s].name == name)
        .unwrap()
}

#[test]
fn reuse_enders_are_records_naming_fewer_fields() {
    let schema = schema();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    let alloc_ptr = stream_of(&catalog, &streams, 4, "ptr");
    let free_ptr = stream_of(&catalog, &streams, 5, "ptr");
    // free (ptr) ends what alloc (size, ptr) creates; not the other way round, and `mark`
    // (ptr, size) in another section ends nothing of alloc's.
    assert_eq!(streams.enders(alloc_ptr), vec![free_ptr]);
    assert!(streams.enders(free_ptr).is_empty());
    let same = "tag.width = 1; a.width = 8; a.interpretation = none;
        x : (tag, a) { tag.value = 4; }
        y : (tag, a) { tag.value = 5; }";
    let schema = metatf_dtd::parse_schema(same, "same.dtd").unwrap();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    assert!((0..streams.len()).all(|s| streams.enders(s).is_empty()));
}

#[test]
fn keyed_reuse_is_chosen_and_codes_reused_addresses_small() {
    let AllocatorTrace {
        recs,
        schema,
        catalog,
        streams,
    } = allocator_trace(4000);
    let declared = |n: u8| schema.section(n).is_some();
    let flat = flat_block(&catalog, &recs);
    let chosen = choose_block(&catalog, &streams, &flat, None, &declared, &[]).unwrap();
    let alloc_ptr = stream_of(&catalog, &streams, 4, "ptr");
    let size = stream_of(&catalog, &streams, 4, "size");
    let keyed = Spec {
        kind: Kind::Reuse,
        arg: size as u32,
    };
    let alternative = chosen
        .proposals
        .iter()
        .find(|p| p[alloc_ptr].list.first() == Some(&keyed))
        .expect("a keyed reuse alternative")
        .clone();
    let with = encode_block(
        &catalog,
        &streams,
        &flat,
        &alternative,
        chosen.tag_context,
        None,
        &declared,
    )
    .unwrap();
    let mut without = alternative.clone();
    without[alloc_ptr].list.retain(|p| p.kind != Kind::Reuse);
    let without = encode_block(
        &catalog,
        &streams,
        &flat,
        &without,
        chosen.tag_context,
        None,
        &declared,
    )
    .unwrap();
    assert!(
        with.len() < without.len(),
        "{} bytes with keyed reuse, {} without",
        with.len(),
        without.len()
    );
    let (back, _) = decode_alone(&catalog, &streams, &with, flat.records, None, &declared).unwrap();
    assert_eq!(back.words, flat.words);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reuse_traces_round_trip_across_blocks(
        steps in proptest::collection::vec((any::<bool>(), any::<usize>()), 0..400),
        per_block in prop_oneof![Just(0u64), 1u64..4, 5u64..80],
    ) {
        let recs = allocator_records(&steps);
        let back = read(&write(&recs, per_block));
        let want: Vec<_> = recs.into_iter().map(|r| (r.name, r.tag, r.fields)).collect();
        prop_assert_eq!(back, want);
    }

    #[test]
    fn forced_reuse_round_trips_and_damage_gives_no_panic(
        steps in proptest::collection::vec((any::<bool>(), any::<usize>()), 1..300),
        keyed in any::<bool>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let recs = allocator_records(&steps);
        let schema = schema();
        let catalog = Catalog::new(&schema).unwrap();
        let streams = Streams::new(&catalog);
        let declared = |n: u8| schema.section(n).is_some();
        let flat = flat_block(&catalog, &recs);
        let chosen = choose_block(&catalog, &streams, &flat, None, &declared, &[]).unwrap();
        let alloc_ptr = stream_of(&catalog, &streams, 4, "ptr");
        let key = if keyed { stream_of(&catalog, &streams, 4, "size") } else { alloc_ptr };
        let mut choices = chosen.choices().to_vec();
        choices[alloc_ptr] = Choice {
            primary: Spec { kind: Kind::Last, arg: alloc_ptr as u32 },
            list: vec![Spec { kind: Kind::Reuse, arg: key as u32 }],
        };
        let bytes = encode_block(&catalog, &streams, &flat, &choices, chosen.tag_context, None, &declared).unwrap();
        let (back, _) = decode_alone(&catalog, &streams, &bytes, flat.records, None, &declared).unwrap();
        prop_assert_eq!(&back.words, &flat.words);
        let mut damaged = bytes.clone();
        for (at, x) in &flips {
            let i = at.index(damaged.len());
            damaged[i] ^= x;
        }
        let _ = decode_alone(&catalog, &streams, &damaged, flat.records, None, &declared);
        let short = &bytes[..cut.index(bytes.len())];
        let _ = decode_alone(&catalog, &streams, short, flat.records, None, &declared);
    }
}

/// Block A allocates `n` objects, block B frees them in the order `order` gives (indices
/// modulo the objects still live); both coded with `free.ptr` ranked among the live
/// `alloc.ptr` values, block B with the lists block A hands on (`carry`) or from scratch.
struct TwoBlocks {
    catalog: Catalog,
    streams: Streams,
    a: FlatBlock,
    b: FlatBlock,
    choices: Vec<Choice>,
}

impl TwoBlocks {
    fn new(n: u64, order: &[usize]) -> TwoBlocks {
        let schema = schema();
        let catalog = Catalog::new(&schema).unwrap();
        let streams = Streams::new(&catalog);
        let mut live: Vec<u64> = (0..n).map(|i| 0x4000 + 48 * i + (i * i) % 7).collect();
        let a: Vec<DynRecord> = live
            .iter()
            .map(|&p| rec("alloc", 4, vec![Value::Uint(32), Value::Uint(p)]))
            .collect();
        let mut b = Vec::new();
        for &i in order {
            if live.is_empty() {
                break;
            }
            let p = live.remove(i % live.len());
            b.push(rec("free", 5, vec![Value::Uint(p)]));
        }
        let (a, b) = (flat_block(&catalog, &a), flat_block(&catalog, &b));
        let free_ptr = stream_of(&catalog, &streams, 5, "ptr");
        let alloc_ptr = stream_of(&catalog, &streams, 4, "ptr");
        let mut choices = vec![Choice::default(); streams.len()];
        choices[free_ptr] = Choice {
            primary: Spec {
                kind: Kind::Zero,
                arg: 0,
            },
            list: vec![Spec {
                kind: Kind::Live,
                arg: alloc_ptr as u32,
            }],
        };
        TwoBlocks {
            catalog,
            streams,
            a,
            b,
            choices,
        }
    }

    fn encode(&self, block: &FlatBlock, carried: &mut Carried) -> Vec<u8> {
        let schema = schema();
        encode_section_block(
            &schema,
            &self.catalog,
            &self.streams,
            block,
            &self.choices,
            carried,
        )
    }

    fn decode(
        &self,
        bytes: &[u8],
        records: u64,
        carried: &mut Carried,
    ) -> Result<FlatBlock, (u64, String)> {
        let schema = schema();
        decode_section_block(
            &schema,
            &self.catalog,
            &self.streams,
            bytes,
            records,
            carried,
        )
    }
}

/// Codes `block` of section 1 with `choices`, the fields in declared order and an order-1 tag
/// context, its lists starting from `carried`.
pub(super) fn encode_section_block(
    schema: &metatf_dtd::Schema,
    catalog: &Catalog,
    streams: &Streams,
    block: &FlatBlock,
    choices: &[Choice],
    carried: &mut Carried,
) -> Vec<u8> {
    let declared = |n: u8| schema.section(n).is_some();
    let context = super::tags::TagContext {
        order: 1,
        stream: None,
    };
    let orders = super::order::Orders::plain(catalog);
    let coding = super::block::Coding {
        catalog,
        streams,
        block,
        choices,
        tag_context: context,
        section: Some(1),
        declared: &declared,
        orders: &orders,
    };
    let (bytes, _, next) =
        super::block::encode_ended(&coding, &streams.all_ends(), None, carried).unwrap();
    *carried = next;
    bytes
}

/// Decodes `records` records of a section-1 block coded by [`encode_section_block`].
pub(super) fn decode_section_block(
    schema: &metatf_dtd::Schema,
    catalog: &Catalog,
    streams: &Streams,
    bytes: &[u8],
    records: u64,
    carried: &mut Carried,
) -> Result<FlatBlock, (u64, String)> {
    let declared = |n: u8| schema.section(n).is_some();
    decode_block(
        catalog,
        streams,
        bytes,
        records,
        Some(1),
        &declared,
        carried,
    )
    .map(|(f, _)| f)
}

#[test]
fn live_objects_of_one_block_are_ranked_in_the_next() {
    let order: Vec<usize> = (0..3000).map(|i| (i * 7919) % 1013).collect();
    let t = TwoBlocks::new(3000, &order);
    let mut carried = Carried::default();
    let a = t.encode(&t.a, &mut carried);
    let b = t.encode(&t.b, &mut carried.clone());
    let fresh = t.encode(&t.b, &mut Carried::default());
    // Ranks among 3,000 live objects take about 11 bits; residuals of 16-bit addresses more.
    assert!(
        b.len() * 4 < fresh.len() * 3,
        "carried {} fresh {}",
        b.len(),
        fresh.len()
    );
    // The reader keeps the same lists: block B decodes after block A, and only after it.
    let mut read = Carried::default();
    assert_eq!(
        t.decode(&a, t.a.records, &mut read).unwrap().words,
        t.a.words
    );
    assert_eq!(
        t.decode(&b, t.b.records, &mut read).unwrap().words,
        t.b.words
    );
    let alone = t.decode(&b, t.b.records, &mut Carried::default());
    assert!(alone.is_err() || alone.unwrap().words != t.b.words);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn carried_lists_round_trip_and_damage_gives_no_panic(
        n in 0u64..600,
        order in proptest::collection::vec(any::<usize>(), 0..600),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let t = TwoBlocks::new(n, &order);
        let mut carried = Carried::default();
        let _ = t.encode(&t.a, &mut carried);
        let b = t.encode(&t.b, &mut carried.clone());
        let back = t.decode(&b, t.b.records, &mut carried.clone()).unwrap();
        prop_assert_eq!(&back.words, &t.b.words);
        let mut damaged = b.clone();
        for (at, x) in &flips {
            let i = at.index(damaged.len());
            damaged[i] ^= x;
        }
        let _ = t.decode(&damaged, t.b.records, &mut carried.clone());
        let _ = t.decode(&b[..cut.index(b.len())], t.b.records, &mut carried.clone());
    }
}

/// A block of more than the sampled records is chosen on a sample ([`super::block`]): it still
/// finds the predictors whose state spans the block (ranks among live and freed objects), so it
/// codes a record about as small as a block chosen on every record, and reads back.
#[test]
fn sampled_choice_codes_as_small_as_a_whole_choice() {
    let AllocatorTrace {
        recs,
        schema,
        catalog,
        streams,
    } = allocator_trace(420_000);
    assert!(recs.len() > 1 << 18);
    let declared = |n: u8| schema.section(n).is_some();
    let per_record = |recs: &[DynRecord]| {
        let flat = flat_block(&catalog, recs);
        let bytes = super::encode_block_best(
            &catalog,
            &streams,
            &flat,
            None,
            &declared,
            &[],
            &mut Carried::default(),
            super::Stage::Range,
        )
        .unwrap();
        let (back, _) =
            decode_alone(&catalog, &streams, &bytes, flat.records, None, &declared).unwrap();
        assert_eq!(back.words, flat.words);
        bytes.len() as f64 / recs.len() as f64
    };
    // The first records alone make a block chosen on every record.
    let whole = per_record(&recs[..1 << 17]);
    let sampled = per_record(&recs);
    assert!(
        sampled <= whole * 1.1,
        "{sampled:.3} bytes a record sampled, {whole:.3} chosen on every record"
    );
}

/// The writer codes a block with the previous block's choice, without searching, when that
/// choice meters the block's sampled records about as cheaply as it metered its own block
/// ([`super::reorder`]); a block it codes dearer is chosen afresh. Either way the blocks read
/// back in turn with the lists carried between them.
#[test]
fn a_block_reuses_the_previous_choice_while_it_still_holds() {
    let steps: Vec<(bool, usize)> = (0..600_000usize)
        .map(|i| (i % 3 != 2, i.wrapping_mul(2_654_435_761) >> 7))
        .collect();
    let recs = allocator_records(&steps);
    let (first, second) = recs.split_at(recs.len() / 2);
    assert!(second.len() > 1 << 17, "both blocks are sampled");
    // Random sizes and addresses: no predictor of the first choice codes them cheaply.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<DynRecord> = (0..200_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            rec("alloc", 4, vec![Value::Uint(x >> 40), Value::Uint(x)])
        })
        .collect();
    let schema = schema();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    let declared = |n: u8| schema.section(n).is_some();
    let (mut writer, mut reader) = (Carried::default(), Carried::default());
    let mut section = None;
    for (recs, reused) in [(first, 0), (second, 1), (&random[..], 0)] {
        let flat = flat_block(&catalog, recs);
        let bytes = super::encode_block_best(
            &catalog,
            &streams,
            &flat,
            section,
            &declared,
            &[],
            &mut writer,
            super::Stage::Range,
        )
        .unwrap();
        assert_eq!(writer.choice.as_ref().map(|k| k.reused), Some(reused));
        let (back, _) = decode_block(
            &catalog,
            &streams,
            &bytes,
            flat.records,
            section,
            &declared,
            &mut reader,
        )
        .unwrap();
        assert_eq!(back.words, flat.words);
        section = Some(1);
    }
}
