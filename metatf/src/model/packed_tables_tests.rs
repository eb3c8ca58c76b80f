//! Packed model tables: the tables come back exactly in either form, packing pays on tables of
//! many entries and is skipped where it would not, and damaged packed tables give errors,
//! never panics.

use proptest::prelude::*;

use super::packed_tables::{join, split, unpacked, MAX_PACKED_TABLES, PACKED};
use super::top_tests::Coded;
use crate::container::PutLe;

/// Plain tables shaped like a wide record's model table: one entry per field, each naming
/// its field and keyed by the next one.
fn wide_tables(fields: u64) -> Vec<u8> {
    let mut t = vec![1, 0];
    t.put_varint(fields);
    for p in 1..=fields {
        for v in [0, 4, p, 8, 2, 6, 4, p + 1, 1, 4, p] {
            t.put_varint(v);
        }
    }
    t
}

#[test]
fn wide_tables_pack_small_and_come_back() {
    let tables = wide_tables(60);
    let records = [0u8, 17, 34, 51];
    let block = join(tables.clone(), &records);
    assert_eq!(block[0], PACKED);
    // 60 entries of 11 numbers: the mixer learns their pattern within a few entries.
    assert!(
        block.len() * 3 < tables.len(),
        "{} bytes packed from {}",
        block.len(),
        tables.len()
    );
    let got = split(&block).unwrap();
    assert_eq!(&got.plain[..], &tables[..]);
    assert_eq!(got.check_end(tables.len()), Ok(block.len() - records.len()));
    assert!(got.check_end(tables.len() - 1).is_err());
}

#[test]
fn short_tables_stay_plain() {
    let block = join(vec![1, 0, 0], &[0, 5]);
    assert_eq!(block, [1, 0, 0, 0, 5]);
    let got = split(&block).unwrap();
    assert_eq!(&got.plain[..], &block[..]);
    // A plain block's records start wherever its tables were read to.
    assert_eq!(got.check_end(3), Ok(3));
}

#[test]
fn impossible_claims_are_refused_before_decoding() {
    for (len, coded) in [
        (0u64, 1u64),
        (MAX_PACKED_TABLES + 1, 1),
        (1 << 40, 1),
        (5, 9),
    ] {
        let mut block = vec![PACKED];
        block.put_varint(len);
        block.put_varint(coded);
        block.push(0);
        assert!(split(&block).is_err(), "claim of {len} in {coded}");
    }
}

#[test]
fn the_engine_reads_both_forms() {
    let b = Coded::new(&super::tests::allocations(
        &(0..3000).map(|i| (i % 3 != 2, i * 7)).collect::<Vec<_>>(),
        &[16, 24, 100],
        |_, i, _| 0x1000 + 64 * i as u64,
    ));
    let block = b.encode(b.chosen.choices());
    // Even this two-record DTD's tables (tag context, entries for size and address, an order
    // table) pack shorter.
    assert_eq!(block[0], PACKED);
    let tables = split(&block).unwrap();
    let records = tables.check_end(tables.plain.len()).unwrap();
    let plain = unpacked(&block);
    assert_eq!(plain.len(), tables.plain.len() + block.len() - records);
    assert_eq!(b.decode(&block).unwrap(), b.flat.words);
    assert_eq!(b.decode(&plain).unwrap(), b.flat.words);
    // Tables cut or grown inside the packed form no longer end where they claim to.
    let mut longer = tables.plain.to_vec();
    longer.push(0);
    let reframed = join(longer, &block[records..]);
    if reframed[0] == PACKED {
        assert!(b.decode(&reframed).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn damaged_packed_tables_give_errors_not_panics(
        fields in 1u64..80,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let block = join(wide_tables(fields), &[0, 1, 2]);
        let mut damaged = block.clone();
        for (at, x) in &flips {
            let i = at.index(damaged.len());
            damaged[i] ^= x;
        }
        if let Ok(t) = split(&damaged) {
            prop_assert!(t.plain.len() as u64 <= MAX_PACKED_TABLES);
        }
        let _ = split(&block[..cut.index(block.len())]);
    }
}
