//! Repeats: a loop whose ranks and residuals come back each time codes at a small fraction of
//! a bit per value once the first rounds are seen, exactly through the coder, and damaged
//! blocks give errors or other records, never panics.

use proptest::prelude::*;

use super::tests::allocations;
use super::top_tests::Coded;
use crate::universal::DynRecord;

/// `records` coded with their automatic choice, and the bytes.
fn coded(records: &[DynRecord]) -> (Coded, Vec<u8>) {
    let b = Coded::new(records);
    let bytes = b.encode(b.chosen.choices());
    (b, bytes)
}

/// Blocks a round allocates.
const PER_ROUND: usize = 40;

/// A fixed scramble of `j`.
fn scramble(j: usize) -> usize {
    (j as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29) as usize
}

/// `rounds` rounds of one loop over blocks of one size: allocate [`PER_ROUND`] blocks, each
/// taking back a freed block chosen by a fixed scramble of its place in the round (the first
/// round carves new ones), then free them in another fixed scrambled order. Which block goes
/// where changes every round, so the addresses and their differences do not repeat with any
/// short period; the ranks that name them among the live and the freed blocks do, round after
/// round.
fn loop_records(rounds: usize) -> Vec<DynRecord> {
    let mut steps = Vec::new();
    for _ in 0..rounds {
        steps.extend((0..PER_ROUND).map(|j| (true, j)));
        steps.extend((0..PER_ROUND).map(|j| (false, scramble(j + PER_ROUND) % (PER_ROUND - j))));
    }
    let mut top = 0x55_0000_1000u64;
    allocations(&steps, &[48], |_, j, freed| {
        if freed.is_empty() {
            top += 64;
            top
        } else {
            freed.remove(scramble(j) % freed.len())
        }
    })
}

#[test]
fn a_loop_codes_in_a_fraction_of_a_bit_per_free_and_decodes_exactly() {
    let rounds = 200;
    let (b, bytes) = coded(&loop_records(rounds));
    assert_eq!(b.decode(&bytes).unwrap(), b.flat.words);
    // Each round frees 40 blocks in an order no short context foresees, and takes them back in
    // another: ranked afresh, a free costs about log2(40!)/40 ≈ 4.3 bits (the block is about
    // 4.4 KB). Repeated, the whole block (allocations and tags included) stays under one bit
    // per free.
    let frees = rounds * PER_ROUND;
    assert!(
        bytes.len() * 8 < frees,
        "{} bytes for {frees} frees",
        bytes.len()
    );
}

#[test]
fn a_loop_costs_little_more_for_more_rounds() {
    let ((_, few), (b, many)) = (coded(&loop_records(60)), coded(&loop_records(240)));
    // The first rounds teach the repeats; the 180 rounds after cost about as much as the 60
    // first (ranked afresh, each round costs alike: 1,458 and 5,305 bytes).
    assert!(
        many.len() < few.len() * 3,
        "60 rounds: {} bytes, 240 rounds: {}",
        few.len(),
        many.len()
    );
    assert_eq!(b.decode(&many).unwrap(), b.flat.words);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn damaged_repeating_blocks_never_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let (b, bytes) = coded(&loop_records(30));
        b.decode_damaged(&bytes, &flips, cut);
    }
}
