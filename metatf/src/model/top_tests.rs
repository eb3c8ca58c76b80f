//! The `top` predictor: a bump allocator's next block is the highest block so far plus that
//! block's rounded size, learnt per size; chosen when it pays, exact through the coder, and
//! damaged blocks give errors, never panics.

use proptest::prelude::*;

use super::block::Chosen;
use super::choice::Choice;
use super::flat::FlatBlock;
use super::predict::{Kind, Spec};
use super::tests::{allocations, flat_block, schema, stream_of};
use super::{choose_block, decode_alone, encode_block, Streams};
use crate::universal::plan::Catalog;
use crate::universal::DynRecord;

/// Request sizes that no fixed step or sum predicts: the allocator rounds each up (a header of
/// 8 bytes, then to 16).
const SIZES: [u64; 5] = [10, 24, 100, 1000, 40];

fn rounded(size: u64) -> u64 {
    (size + 8 + 15) & !15
}

/// A trace where `(true, i)` allocates `SIZES[i % 5]` bytes, taking back the block last freed
/// with that size when `i / 5` is odd and there is one, else carving a new block from the
/// top; `(false, i)` frees the `i`-th live block (modulo their count).
fn bump_records(steps: &[(bool, usize)]) -> Vec<DynRecord> {
    let mut top = 0x55_0000_1000u64;
    allocations(steps, &SIZES, |k, i, freed| match freed.last() {
        Some(&p) if (i / SIZES.len()) % 2 == 1 => {
            freed.pop();
            p
        }
        _ => {
            let p = top;
            top += rounded(SIZES[k]);
            p
        }
    })
}

fn steps(n: usize) -> Vec<(bool, usize)> {
    (0..n)
        .map(|i| (i % 4 != 3, i.wrapping_mul(2_654_435_761) >> 9))
        .collect()
}

/// A block of `records` with its automatic choice, and the streams of `alloc.ptr` and
/// `alloc.size` (the repeat tests code their loops with it too).
pub(super) struct Coded {
    schema: metatf_dtd::Schema,
    catalog: Catalog,
    streams: Streams,
    pub(super) flat: FlatBlock,
    pub(super) chosen: Chosen,
    ptr: usize,
    size: usize,
}

impl Coded {
    pub(super) fn new(records: &[DynRecord]) -> Coded {
        let schema = schema();
        let catalog = Catalog::new(&schema).unwrap();
        let streams = Streams::new(&catalog);
        let flat = flat_block(&catalog, records);
        let declared = |n: u8| schema.section(n).is_some();
        let chosen = choose_block(&catalog, &streams, &flat, None, &declared, &[]).unwrap();
        let ptr = stream_of(&catalog, &streams, 4, "ptr");
        let size = stream_of(&catalog, &streams, 4, "size");
        Coded {
            schema,
            catalog,
            streams,
            flat,
            chosen,
            ptr,
            size,
        }
    }

    pub(super) fn encode(&self, choices: &[Choice]) -> Vec<u8> {
        let declared = |n: u8| self.schema.section(n).is_some();
        let (c, s, f) = (&self.catalog, &self.streams, &self.flat);
        encode_block(c, s, f, choices, self.chosen.tag_context, None, &declared).unwrap()
    }

    /// The block's words decoded from `bytes`, or the decoder's error.
    pub(super) fn decode(&self, bytes: &[u8]) -> Result<Vec<u64>, String> {
        let declared = |n: u8| self.schema.section(n).is_some();
        let (c, s, n) = (&self.catalog, &self.streams, self.flat.records);
        decode_alone(c, s, bytes, n, None, &declared)
            .map(|(back, _)| back.words)
            .map_err(|e| format!("{e:?}"))
    }

    /// Decodes `bytes` with each of `flips` applied, then cut at `cut`: an error or other
    /// words, never a panic.
    pub(super) fn decode_damaged(
        &self,
        bytes: &[u8],
        flips: &[(prop::sample::Index, u8)],
        cut: prop::sample::Index,
    ) {
        let mut damaged = bytes.to_vec();
        for (at, x) in flips {
            let i = at.index(damaged.len());
            damaged[i] ^= x;
        }
        let _ = self.decode(&damaged);
        let _ = self.decode(&bytes[..cut.index(bytes.len())]);
    }
}

#[test]
fn top_is_chosen_and_codes_bumped_addresses_small() {
    let b = Coded::new(&bump_records(&steps(6000)));
    let top = Spec {
        kind: Kind::Top,
        arg: b.size as u32,
    };
    let with = b.chosen.choices().to_vec();
    let named = |c: &Choice| c.primary == top || c.list.contains(&top);
    assert!(named(&with[b.ptr]), "chosen: {:?}", with[b.ptr]);
    let mut without = with.clone();
    let c = &mut without[b.ptr];
    c.list.retain(|&p| p != top);
    if c.primary == top {
        c.primary = Spec {
            kind: Kind::Last,
            arg: b.ptr as u32,
        };
    }
    let (small, large) = (b.encode(&with), b.encode(&without));
    // About 4,500 allocations of which about half are new blocks: without `top` each of those
    // costs a residual of several bits.
    assert!(
        small.len() * 5 < large.len() * 4,
        "{} bytes with top, {} without",
        small.len(),
        large.len()
    );
    assert_eq!(b.decode(&small).unwrap(), b.flat.words);
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
        let b = Coded::new(&bump_records(&steps));
        let key = if keyed_by_size { b.size } else { b.ptr };
        let top = Spec { kind: Kind::Top, arg: key as u32 };
        let last = Spec { kind: Kind::Last, arg: b.ptr as u32 };
        let mut choices = b.chosen.choices().to_vec();
        choices[b.ptr] = if primary {
            Choice { primary: top, list: vec![last] }
        } else {
            Choice { primary: last, list: vec![top] }
        };
        let bytes = b.encode(&choices);
        prop_assert_eq!(b.decode(&bytes).unwrap(), b.flat.words.clone());
        b.decode_damaged(&bytes, &flips, cut);
    }
}
