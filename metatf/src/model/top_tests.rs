//! The `top` predictor: a bump allocator's next block is the highest block so far plus that
//! block's rounded size, learnt per size; chosen when it pays, exact through the coder, and
//! damaged blocks give errors, never panics.

use proptest::prelude::*;

use super::choice::Choice;
use super::predict::{Kind, Spec};
use super::tests::{flat_block, rec, schema, stream_of};
use super::{choose_block, decode_alone, encode_block, Streams};
use crate::universal::plan::Catalog;
use crate::universal::{DynRecord, Value};

/// Request sizes that no fixed step or sum predicts: the allocator rounds each up (a header of
/// 8 bytes, then to 16).
const SIZES: [u64; 5] = [10, 24, 100, 1000, 40];

fn rounded(size: u64) -> u64 {
    (size + 8 + 15) & !15
}

/// A trace in section 1 where `(true, i)` allocates `SIZES[i % 5]` bytes, taking back the block
/// last freed with that size when `i / 5` is odd and there is one, else carving a new block
/// from the top; `(false, i)` frees the `i`-th live block (modulo their count).
fn bump_records(steps: &[(bool, usize)]) -> Vec<DynRecord> {
    let mut out = vec![rec("section", 2, vec![Value::Uint(1)])];
    let mut freed: Vec<Vec<u64>> = vec![Vec::new(); SIZES.len()];
    let mut live: Vec<(u64, usize)> = Vec::new();
    let mut top = 0x55_0000_1000u64;
    for &(alloc, i) in steps {
        if alloc {
            let k = i % SIZES.len();
            let reused = (i / SIZES.len()) % 2 == 1;
            let ptr = match freed[k].pop() {
                Some(p) if reused => p,
                other => {
                    freed[k].extend(other);
                    let p = top;
                    top += rounded(SIZES[k]);
                    p
                }
            };
            live.push((ptr, k));
            out.push(rec(
                "alloc",
                4,
                vec![Value::Uint(SIZES[k]), Value::Uint(ptr)],
            ));
        } else if !live.is_empty() {
            let (ptr, k) = live.remove(i % live.len());
            freed[k].push(ptr);
            out.push(rec("free", 5, vec![Value::Uint(ptr)]));
        }
    }
    out
}

fn steps(n: usize) -> Vec<(bool, usize)> {
    (0..n)
        .map(|i| (i % 4 != 3, i.wrapping_mul(2_654_435_761) >> 9))
        .collect()
}

#[test]
fn top_is_chosen_and_codes_bumped_addresses_small() {
    let recs = bump_records(&steps(6000));
    let schema = schema();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    let declared = |n: u8| schema.section(n).is_some();
    let flat = flat_block(&catalog, &recs);
    let chosen = choose_block(&catalog, &streams, &flat, None, &declared, &[]).unwrap();
    let ptr = stream_of(&catalog, &streams, 4, "ptr");
    let top = Spec {
        kind: Kind::Top,
        arg: stream_of(&catalog, &streams, 4, "size") as u32,
    };
    let with = chosen.choices().to_vec();
    let named = |c: &Choice| c.primary == top || c.list.contains(&top);
    assert!(named(&with[ptr]), "chosen: {:?}", with[ptr]);
    let encode = |choices: &[Choice]| {
        encode_block(
            &catalog,
            &streams,
            &flat,
            choices,
            chosen.tag_context,
            None,
            &declared,
        )
        .unwrap()
    };
    let mut without = with.clone();
    let c = &mut without[ptr];
    c.list.retain(|&p| p != top);
    if c.primary == top {
        c.primary = Spec {
            kind: Kind::Last,
            arg: ptr as u32,
        };
    }
    let (small, large) = (encode(&with), encode(&without));
    // About 4,500 allocations of which about half are new blocks: without `top` each of those
    // costs a residual of several bits.
    assert!(
        small.len() * 5 < large.len() * 4,
        "{} bytes with top, {} without",
        small.len(),
        large.len()
    );
    let (back, _) =
        decode_alone(&catalog, &streams, &small, flat.records, None, &declared).unwrap();
    assert_eq!(back.words, flat.words);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn forced_top_round_trips_and_damage_gives_no_panic(
        steps in proptest::collection::vec((any::<bool>(), any::<usize>()), 1..300),
        keyed_by_size in any::<bool>(),
        primary in any::<bool>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let recs = bump_records(&steps);
        let schema = schema();
        let catalog = Catalog::new(&schema).unwrap();
        let streams = Streams::new(&catalog);
        let declared = |n: u8| schema.section(n).is_some();
        let flat = flat_block(&catalog, &recs);
        let chosen = choose_block(&catalog, &streams, &flat, None, &declared, &[]).unwrap();
        let ptr = stream_of(&catalog, &streams, 4, "ptr");
        let key = if keyed_by_size { stream_of(&catalog, &streams, 4, "size") } else { ptr };
        let top = Spec { kind: Kind::Top, arg: key as u32 };
        let last = Spec { kind: Kind::Last, arg: ptr as u32 };
        let mut choices = chosen.choices().to_vec();
        choices[ptr] = if primary {
            Choice { primary: top, list: vec![last] }
        } else {
            Choice { primary: last, list: vec![top] }
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
