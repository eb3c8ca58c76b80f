//! Tests of the record match and its `match` predictor: runs of records that repeat an earlier
//! run are guessed field by field, the automatic choice takes `match` where it pays and leaves
//! it where it does not, and damaged blocks give errors or other records, never panics.

use super::choice::Choice;
use super::engine::Carried;
use super::fixed_tests::rec;
use super::flat::FlatBlock;
use super::predict::{Kind, Spec};
use super::recent_tests::Fixture;
use super::record_match::RecordMatch;
use super::trials::choose_best;
use crate::universal::DynRecord;

const DTD: &str = "tag.width = 1;
a.width = 1; a.interpretation = none;
b.width = 1; b.interpretation = none;
c.width = 1; c.interpretation = none;
d.width = 1; d.interpretation = none;
t.width = 4; t.interpretation = none;
section snap 1 {
    row  : (tag, a, b, c, d) { tag.value = 4; }
    head : (tag, t)          { tag.value = 5; }
}
";

/// A small xorshift generator, fixed seed.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// `snapshots` snapshots of one table of 60 rows of four small numbers (0–7 each: no field
/// alone says which row comes next, the four together do), each after a header with its time;
/// in every snapshot a few rows change one field and one row in six is left out (as processes
/// come and go between two runs of `ps`, only more often). With `repeat` false every snapshot
/// is a new table.
fn snapshots(snapshots: usize, repeat: bool) -> Vec<DynRecord> {
    let mut next = rng(0x2545_F491_4F6C_DD1D);
    let mut table: Vec<[u64; 4]> = Vec::new();
    let mut out = Vec::new();
    for s in 0..snapshots {
        if table.is_empty() || !repeat {
            table = (0..60)
                .map(|_| [next() % 8, next() % 8, next() % 8, next() % 8])
                .collect();
        }
        out.push(rec("head", 5, &[1000 * s as u64]));
        for row in &mut table {
            if next().is_multiple_of(16) {
                row[3] = next() % 8;
            }
            if next().is_multiple_of(6) {
                continue;
            }
            out.push(rec("row", 4, &row[..]));
        }
    }
    out
}

/// The choice [`choose_best`] makes for `block`.
fn best(f: &Fixture, block: &FlatBlock) -> Vec<Choice> {
    let declared = |n: u8| f.schema.section(n).is_some();
    let orders = super::order::Orders::plain(&f.catalog);
    choose_best(
        &f.catalog,
        &f.streams,
        block,
        Some(1),
        &declared,
        &[],
        &orders,
        &vec![true; f.streams.len()],
        &Carried::default(),
    )
    .unwrap()
    .choices
}

fn names_match(choices: &[Choice]) -> bool {
    choices
        .iter()
        .any(|c| c.primary.kind == Kind::Match || c.list.iter().any(|p| p.kind == Kind::Match))
}

/// `choices` with every `match` taken out (a primary `match` becomes `none`).
fn without_match(choices: &[Choice]) -> Vec<Choice> {
    choices
        .iter()
        .map(|c| Choice {
            primary: if c.primary.kind == Kind::Match {
                Spec {
                    kind: Kind::Zero,
                    arg: 0,
                }
            } else {
                c.primary
            },
            list: c
                .list
                .iter()
                .copied()
                .filter(|p| p.kind != Kind::Match)
                .collect(),
        })
        .collect()
}

fn round_trip(f: &Fixture, block: &FlatBlock, choices: &[Choice]) -> Vec<u8> {
    let bytes = f.encode(block, choices, &mut Carried::default());
    let back = f
        .decode(&bytes, block.records, &mut Carried::default())
        .unwrap();
    assert_eq!(back.words, block.words);
    bytes
}

#[test]
fn the_match_follows_a_repeated_run_through_changed_records() {
    let mut m = RecordMatch::new(4);
    let run: Vec<[u64; 2]> = (0..50).map(|i| [i * 7 % 13, i * 11 % 17]).collect();
    let mut record = 0u64;
    let mut right = 0;
    for round in 0..3 {
        for (i, r) in run.iter().enumerate() {
            // Stream 2 changes in some records of later rounds: the run must still be followed.
            let extra = if round > 0 && i % 10 == 5 {
                1000 + record
            } else {
                0
            };
            if round == 2 && i > 0 && m.matched(0, record) == Some(r[0]) {
                right += 1;
            }
            for (s, v) in [(0, r[0]), (1, r[1]), (2, extra)] {
                m.observe(s, v);
            }
            m.end_record(record);
            record += 1;
        }
    }
    // Some records differ from the last round's in stream 2, which breaks the match's length,
    // yet it stays aligned with the run.
    assert_eq!(right, run.len() - 1);
    assert!(m.holding());
    assert_eq!(
        m.guess(3, record),
        0,
        "a stream no record has is never named"
    );
}

/// 30 snapshots ([`snapshots`]) coded with the automatic choice, and with that choice
/// without `match`: whether the choice names `match`, and both sizes.
fn sizes(repeat: bool) -> (bool, usize, usize) {
    let f = Fixture::with_dtd(DTD);
    let block = f.flat(&snapshots(30, repeat));
    let choices = best(&f, &block);
    let chosen = round_trip(&f, &block, &choices);
    let without = round_trip(&f, &block, &without_match(&choices));
    (names_match(&choices), chosen.len(), without.len())
}

#[test]
fn repeated_snapshots_take_match_and_code_smaller_with_it() {
    let (named, with, without) = sizes(true);
    assert!(named);
    // Each row's four fields (12 bits of choice) come back snapshot after snapshot, but with a
    // row left out every few rows: a stream's own repeats need a few values in step to find
    // the run again, the match one record.
    assert!(
        with * 10 < without * 9,
        "with match {with} bytes, without {without}"
    );
}

/// [`DTD`] with three more records of six fields each in the section, which the block never
/// holds: every field of the snapshot's rows then has more candidates than the 64 measured
/// (each other record's field gives three), and `match` comes after all of them.
fn wide_dtd() -> String {
    let fields: String = (0..18)
        .map(|i| format!("w{i}.width = 1; w{i}.interpretation = none;\n"))
        .collect();
    let records: String = (0..3)
        .map(|r| {
            let names: Vec<String> = (0..6).map(|i| format!("w{}", 6 * r + i)).collect();
            format!(
                "    wide{r} : (tag, {}) {{ tag.value = {}; }}\n",
                names.join(", "),
                6 + r
            )
        })
        .collect();
    DTD.replace(
        "section snap 1 {\n",
        &format!("{fields}section snap 1 {{\n{records}"),
    )
}

#[test]
fn match_is_offered_beside_more_than_64_candidates() {
    let f = Fixture::with_dtd(&wide_dtd());
    let block = f.flat(&snapshots(30, true));
    let choices = best(&f, &block);
    assert!(names_match(&choices));
    let with = round_trip(&f, &block, &choices).len();
    let without = round_trip(&f, &block, &without_match(&choices)).len();
    assert!(
        with * 10 < without * 9,
        "with match {with} bytes, without {without}"
    );
}

#[test]
fn tables_that_never_repeat_cost_nothing_more_for_the_offer() {
    let (_, chosen, without) = sizes(false);
    assert!(
        chosen <= without + 8,
        "chosen {chosen} bytes, without match {without}"
    );
}

#[test]
fn damaged_blocks_with_a_record_match_never_panic() {
    let f = Fixture::with_dtd(DTD);
    let block = f.flat(&snapshots(8, true));
    let mut choices = best(&f, &block);
    // Every stream lists `match`, so its state is read whatever the automatic choice found.
    for c in &mut choices {
        if c.primary.kind != Kind::Match && !c.list.iter().any(|p| p.kind == Kind::Match) {
            c.list.insert(
                0,
                Spec {
                    kind: Kind::Match,
                    arg: 0,
                },
            );
            c.list.truncate(super::choose::MAX_LIST);
        }
    }
    let bytes = round_trip(&f, &block, &choices);
    let mut next = rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..300 {
        let mut damaged = bytes.clone();
        let at = (next() as usize) % damaged.len();
        damaged[at] ^= (next() % 255 + 1) as u8;
        if i % 3 == 0 {
            damaged.truncate(at + 1);
        }
        // An error or other records; the decoder must not panic or run away.
        let _ = f.decode(&damaged, block.records, &mut Carried::default());
    }
}
