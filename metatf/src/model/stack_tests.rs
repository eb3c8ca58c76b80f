//! Tests of `stack` (an exit predicted as the innermost entry still open) and of the block
//! reading that decides whether a declared ending relation holds ([`super::ending`]).

use proptest::prelude::*;

use super::choice::Choice;
use super::choose::candidates;
use super::choose_block;
use super::ending::bears_out;
use super::engine::Carried;
use super::fixed_tests::rec;
use super::order::Orders;
use super::predict::Kind;
use super::recent_tests::{spec, Fixture};
use crate::universal::DynRecord;

/// `exit` names a subset of `call`'s fields (an ender of `call.method`); `call` names a subset
/// of `throw`'s (an ender of `throw.obj` by declaration).
const DTD: &str = "tag.width = 1;
method.width = 4; method.interpretation = none;
obj.width = 8; obj.interpretation = none;
exc.width = 2; exc.interpretation = none;
section run 1 {
    call  : (tag, method, obj)      { tag.value = 4; }
    exit  : (tag, method)           { tag.value = 6; }
    throw : (tag, method, obj, exc) { tag.value = 7; }
}
";

/// A program of `calls` calls: a random walk over a call tree where each method calls one of
/// a few others or itself (recursion), entries and exits balanced; every call's receiver is
/// one of a few objects. `throws`: every 8th call is preceded by a throw of a fresh object,
/// which the call then names (the call ends the thrown object).
fn program(calls: usize, throws: bool) -> Vec<DynRecord> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut open: Vec<u64> = Vec::new();
    let mut out = Vec::new();
    let mut made = 0;
    while made < calls {
        let r = next();
        if open.len() < 40 && (open.is_empty() || r % 5 < 3) {
            let caller = open.last().copied().unwrap_or(0);
            // Each caller calls itself or one of four callees of its own.
            let method = if r % 7 == 0 {
                caller
            } else {
                caller * 4 + 1 + (r >> 8) % 4
            } % 200;
            let mut obj = (r >> 16) % 6;
            if throws && made % 8 == 0 {
                obj = next() >> 20;
                out.push(rec("throw", 7, &[method, obj, 1]));
            }
            out.push(rec("call", 4, &[method, obj]));
            open.push(method);
            made += 1;
        } else if let Some(m) = open.pop() {
            out.push(rec("exit", 6, &[m]));
        }
    }
    while let Some(m) = open.pop() {
        out.push(rec("exit", 6, &[m]));
    }
    out
}

/// The automatic choice of `records`' block, and the choice with `exit.method` given
/// `exit_choice`.
fn with_exit(f: &Fixture, records: &[DynRecord], exit_choice: Choice) -> (Vec<Choice>, u64) {
    let block = f.flat(records);
    let declared = |n: u8| f.schema.section(n).is_some();
    let chosen = choose_block(&f.catalog, &f.streams, &block, Some(1), &declared, &[]).unwrap();
    let mut choices = chosen.choices().to_vec();
    choices[f.stream(6, "method")] = exit_choice;
    (choices, block.records)
}

#[test]
fn stack_is_chosen_and_codes_exits_smaller_than_live_ranks() {
    let f = Fixture::with_dtd(DTD);
    let records = program(20_000, false);
    let block = f.flat(&records);
    let (exit, entry) = (f.stream(6, "method"), f.stream(4, "method"));
    let stack = spec(Kind::Stack, entry);
    let declared = |n: u8| f.schema.section(n).is_some();
    let chosen = choose_block(&f.catalog, &f.streams, &block, Some(1), &declared, &[]).unwrap();
    let auto = &chosen.choices()[exit];
    assert!(
        auto.primary == stack || auto.list.contains(&stack),
        "chosen: {auto:?}"
    );
    let size = |c: Choice| {
        let (choices, n) = with_exit(&f, &records, c);
        let bytes = f.encode(&block, &choices, &mut Carried::default());
        let back = f.decode(&bytes, n, &mut Carried::default()).unwrap();
        assert_eq!(back.words, block.words);
        bytes.len()
    };
    let with_stack = size(Choice {
        primary: stack,
        list: vec![],
    });
    // Recursion opens one method several times: a list of live values holds it once, and
    // ranks the exits of the inner frames by their method's other open frames.
    let with_live = size(Choice {
        primary: spec(Kind::Zero, 0),
        list: vec![spec(Kind::Live, entry)],
    });
    assert!(
        with_stack * 10 < with_live * 9,
        "{with_stack} bytes with stack, {with_live} with live"
    );
}

/// `call` has a subset of `throw`'s fields, so it is declared to end `throw.obj`; whether it
/// does is read from the block, and `call.obj` is offered `recent` only where it does not.
#[test]
fn recent_is_offered_where_the_block_does_not_bear_out_the_ending() {
    let f = Fixture::with_dtd(DTD);
    let call_obj = f.stream(4, "obj");
    assert_eq!(f.streams.enders(f.stream(7, "obj")), vec![call_obj]);
    let declared = |n: u8| f.schema.section(n).is_some();
    let offered = |throws: bool| {
        let block = f.flat(&program(4000, throws));
        let orders = Orders::plain(&f.catalog);
        let ending = bears_out(&f.catalog, &f.streams, &block, Some(1), &declared, &orders);
        candidates(&f.streams, call_obj, &ending)
            .iter()
            .any(|p| p.kind == Kind::Recent)
    };
    // Only every eighth call names a thrown object: the relation does not hold.
    assert!(offered(false));
    assert!(offered(true));
    // Every call naming a thrown object: it does.
    let mut ended = Vec::new();
    for (i, r) in program(4000, false).into_iter().enumerate() {
        if r.name == "call" {
            let obj = i as u64 * 7919 + 1;
            ended.push(rec("throw", 7, &[1, obj, 1]));
            ended.push(rec("call", 4, &[2, obj]));
        } else {
            ended.push(r);
        }
    }
    let block = f.flat(&ended);
    let orders = Orders::plain(&f.catalog);
    let ending = bears_out(&f.catalog, &f.streams, &block, Some(1), &declared, &orders);
    assert!(ending.bears(call_obj));
    assert!(!candidates(&f.streams, call_obj, &ending)
        .iter()
        .any(|p| p.kind == Kind::Recent));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn stack_round_trips_and_damage_gives_no_panic(
        calls in 0usize..300,
        primary in any::<bool>(),
        throws in any::<bool>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let f = Fixture::with_dtd(DTD);
        let records = program(calls, throws);
        let block = f.flat(&records);
        let stack = spec(Kind::Stack, f.stream(4, "method"));
        let last = spec(Kind::Last, f.stream(6, "method"));
        let c = if primary {
            Choice { primary: stack, list: vec![last] }
        } else {
            Choice { primary: last, list: vec![stack] }
        };
        let (choices, n) = with_exit(&f, &records, c);
        let bytes = f.encode(&block, &choices, &mut Carried::default());
        let back = f.decode(&bytes, n, &mut Carried::default()).unwrap();
        prop_assert_eq!(&back.words, &block.words);
        let mut damaged = bytes.clone();
        for (at, x) in &flips {
            let i = at.index(damaged.len());
            damaged[i] ^= x;
        }
        let _ = f.decode(&damaged, n, &mut Carried::default());
        let _ = f.decode(&bytes[..cut.index(bytes.len())], n, &mut Carried::default());
    }
}
