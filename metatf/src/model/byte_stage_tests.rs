//! The byte-stream stage ([`super::byte_stage`]): records read back across blocks whichever
//! stage the writer is asked for, the writer's default keeps the smaller coding of each block,
//! and damaged blocks give errors, never panics.

use proptest::prelude::*;

use super::block::{encode_bytes, Coding};
use super::byte_stage::{read_streams, MARK};
use super::engine::Carried;
use super::order::Orders;
use super::tests::{flat_of, header, op, read, rec, records, schema, write_with};
use super::{choose_block, decode_alone, Streams, PROPERTY_STAGE, STAGE_BYTES, STAGE_RANGE};
use crate::container::{ContainerHeader, ContainerReader};
use crate::universal::plan::Catalog;
use crate::universal::{DynRecord, Value};

/// The test header asking for `stage` (none: the writer's default).
fn header_for(stage: Option<&str>) -> ContainerHeader {
    let mut h = header();
    if let Some(s) = stage {
        h.properties.push((PROPERTY_STAGE.into(), s.into()));
    }
    h
}

/// The first byte of every modelled block's section in `file`.
fn block_marks(file: &[u8]) -> Vec<u8> {
    let mut r = ContainerReader::new(file).unwrap();
    let mut marks = Vec::new();
    while let Some(b) = r.next_block().unwrap() {
        for s in b.sections {
            marks.push(s.bytes[0]);
        }
    }
    marks
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every stage reads back to the records written (byte strings, repeated groups,
    /// metadata and sections included, across blocks that carry lists); the byte-stream
    /// stage's blocks carry its mark, and the default is never larger than either stage.
    #[test]
    fn every_stage_round_trips_and_the_default_keeps_the_smaller(
        ops in proptest::collection::vec(op(), 0..300),
        per_block in prop_oneof![Just(0u64), 1u64..4, 5u64..80],
    ) {
        let recs = records(&ops);
        let want: Vec<_> = recs.iter().cloned().map(|r| (r.name, r.tag, r.fields)).collect();
        let mut sizes = Vec::new();
        for stage in [None, Some(STAGE_RANGE), Some(STAGE_BYTES)] {
            let file = write_with(&recs, per_block, &header_for(stage));
            prop_assert_eq!(read(&file), want.clone());
            let marks = block_marks(&file);
            match stage {
                Some(STAGE_BYTES) => prop_assert!(marks.iter().all(|&m| m == MARK)),
                Some(_) => prop_assert!(marks.iter().all(|&m| m != MARK)),
                None => {}
            }
            sizes.push(file.len());
        }
        prop_assert!(sizes[0] <= sizes[1].min(sizes[2]), "{:?}", sizes);
    }

    #[test]
    fn damaged_byte_stage_blocks_give_errors_not_panics(
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
        let orders = Orders::plain(&catalog);
        let coding = Coding {
            catalog: &catalog,
            streams: &streams,
            block: &flat,
            choices: &chosen.proposals[0],
            tag_context: chosen.tag_context,
            section: None,
            declared: &declared,
            orders: &orders,
        };
        let (bytes, _) = encode_bytes(&coding, &Carried::default()).unwrap().unwrap();
        prop_assert_eq!(bytes[0], MARK);
        let (back, _) = decode_alone(&catalog, &streams, &bytes, flat.records, None, &declared).unwrap();
        prop_assert_eq!(&back.words, &flat.words);
        prop_assert_eq!(&back.bytes, &flat.bytes);
        let mut damaged = bytes.clone();
        for (at, x) in &flips {
            let i = 1 + at.index(damaged.len() - 1);
            damaged[i] ^= x;
        }
        let _ = decode_alone(&catalog, &streams, &damaged, flat.records, None, &declared);
        let short = &bytes[..cut.index(bytes.len())];
        let _ = decode_alone(&catalog, &streams, short, flat.records, None, &declared);
        // More records than the streams hold: an error, not a block padded with zeros.
        prop_assert!(decode_alone(&catalog, &streams, &bytes, flat.records + 1, None, &declared).is_err());
    }
}

/// A program's loop: the same 40 allocations (sizes and offsets that look random) and their
/// frees, over and over, each round at a new base address. The predictors miss most sizes
/// and offsets, and the range coder codes each round's residuals anew; the byte streams
/// repeat whole rounds, which zstd takes as one match. The default keeps the byte streams
/// here and the range coder where the values are irregular.
#[test]
fn the_default_stage_follows_the_trace() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let shape: Vec<(u64, u64)> = (0..40).map(|_| (next() % 5000, next() % 0x8000)).collect();
    let mut periodic = vec![rec("section", 2, vec![Value::Uint(1)])];
    for round in 0..2000u64 {
        let base = 0x1000_0000 + round * 0x1_0000;
        for &(size, offset) in &shape {
            periodic.push(rec(
                "alloc",
                4,
                vec![Value::Uint(size), Value::Uint(base + offset)],
            ));
        }
        for &(_, offset) in shape.iter().rev() {
            periodic.push(rec("free", 5, vec![Value::Uint(base + offset)]));
        }
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut irregular: Vec<DynRecord> = vec![rec("section", 2, vec![Value::Uint(1)])];
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let note: Vec<u8> = (0..(x % 9))
            .map(|k| b'a' + ((x >> (8 * k)) % 4) as u8)
            .collect();
        irregular.push(rec(
            "alloc",
            4,
            vec![Value::Uint(x % 300), Value::Uint(x >> 20)],
        ));
        irregular.push(rec(
            "note",
            7,
            vec![Value::Uint(note.len() as u64), Value::Bytes(note)],
        ));
    }
    for (recs, mark_wanted) in [(&periodic, true), (&irregular, false)] {
        let file = write_with(recs, 0, &header_for(None));
        let marks = block_marks(&file);
        assert!(!marks.is_empty());
        assert_eq!(marks.iter().all(|&m| m == MARK), mark_wanted, "{marks:?}");
        let want: Vec<_> = recs
            .iter()
            .cloned()
            .map(|r| (r.name, r.tag, r.fields))
            .collect();
        assert_eq!(read(&file), want);
    }
}

/// The streams' header in the byte layout of docs/FORMAT.md §7: per stream its codec, the
/// bytes it claims once decompressed, and its stored bytes.
fn stream_headers(streams: &[(u8, u64, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(codec, raw, data) in streams {
        out.push(codec);
        crate::varint::put_u64(&mut out, raw);
        crate::varint::put_u64(&mut out, data.len() as u64);
        out.extend_from_slice(data);
    }
    out
}

/// A block's streams may claim at most 16 MiB + 1,024 × the block's bytes in all, refused
/// from the claims alone, before anything is decompressed; claims that the stored bytes do
/// not keep are errors too.
#[test]
fn streams_claiming_more_than_the_block_can_hold_are_refused() {
    let zstd_of = |raw: &[u8]| zstd::bulk::compress(raw, 3).unwrap();
    let small = zstd_of(b"abc");
    let empty: &[u8] = &[];
    let fine = stream_headers(&[(1, 3, &small), (0, 0, empty), (0, 0, empty), (0, 0, empty)]);
    let got = read_streams(&fine, 100).unwrap();
    assert_eq!(got[0], b"abc");
    // 16 MiB + 1,024 × 100 bytes is the most a 100-byte block may claim, spread over streams.
    let limit = (16u64 << 20) + 1024 * 100;
    for split in [(limit + 1, 0), (3, limit - 2)] {
        let claims = stream_headers(&[
            (1, split.0, &small),
            (1, split.1, &small),
            (0, 0, empty),
            (0, 0, empty),
        ]);
        let e = read_streams(&claims, 100).unwrap_err();
        assert!(e.contains("more than the block can hold"), "{e}");
    }
    // A claim the zstd frame does not keep, a stored stream of another length, an unknown
    // codec and bytes after the last stream.
    let short = stream_headers(&[(1, 4, &small), (0, 0, empty), (0, 0, empty), (0, 0, empty)]);
    assert!(read_streams(&short, 100).is_err());
    let stored = stream_headers(&[(0, 5, b"abc"), (0, 0, empty), (0, 0, empty), (0, 0, empty)]);
    assert!(read_streams(&stored, 100).unwrap_err().contains("claims 5"));
    let codec = stream_headers(&[(7, 3, b"abc"), (0, 0, empty), (0, 0, empty), (0, 0, empty)]);
    assert!(read_streams(&codec, 100)
        .unwrap_err()
        .contains("unknown codec 7"));
    let mut trailing = fine.clone();
    trailing.push(0);
    assert!(read_streams(&trailing, 100)
        .unwrap_err()
        .contains("after the last stream"));
}
