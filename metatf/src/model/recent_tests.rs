//! Tests of `recent`: one move-to-front list of the values of every field of a name (the
//! objects any record names), its ranks coded unkeyed or in the context of another field of
//! the record, carried from block to block.

use proptest::prelude::*;

use super::choice::Choice;
use super::engine::Carried;
use super::fixed_tests::rec;
use super::flat::FlatBlock;
use super::predict::{Kind, Spec};
use super::tests::{decode_section_block, encode_section_block};
use super::{choose_block, Streams};
use crate::universal::plan::Catalog;
use crate::universal::DynRecord;

const DTD: &str = "tag.width = 1;
method.width = 4; method.interpretation = none;
obj.width = 8; obj.interpretation = none;
class.width = 2; class.interpretation = none;
section run 1 {
    call : (tag, method, obj) { tag.value = 4; }
    see  : (tag, obj, class)  { tag.value = 5; }
    exit : (tag, method)      { tag.value = 6; }
}
";

/// A program that runs one script of calls again and again over a window of 8 objects that
/// slides by one object every `slide` rounds: step `i` of the script calls method `i` on the
/// object in slot `slots[i]` of the window and then sees the object in slot `seen[i]`. The
/// object a call names is then a recent one, and which one (its recency rank) depends on the
/// method; the objects look random (hash codes).
fn program(rounds: usize, slide: usize) -> Vec<DynRecord> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let script: Vec<(u64, u64)> = (0..24).map(|_| (next() % 8, next() % 8)).collect();
    let objects: Vec<u64> = (0..rounds / slide.max(1) + 8)
        .map(|_| next() >> 33)
        .collect();
    let mut out = Vec::new();
    for r in 0..rounds {
        let window = &objects[r / slide.max(1)..];
        for (i, &(slot, seen)) in script.iter().enumerate() {
            out.push(rec("call", 4, &[i as u64, window[slot as usize]]));
            out.push(rec("see", 5, &[window[seen as usize], seen]));
            out.push(rec("exit", 6, &[i as u64]));
        }
    }
    out
}

/// A DTD's records in section 1, their streams, and how to code blocks of them.
pub(super) struct Fixture {
    pub(super) schema: metatf_dtd::Schema,
    pub(super) catalog: Catalog,
    pub(super) streams: Streams,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture::with_dtd(DTD)
    }

    pub(super) fn with_dtd(dtd: &str) -> Fixture {
        let schema = match metatf_dtd::parse_schema(dtd, "test.dtd") {
            Ok(s) => s,
            Err(d) => panic!("{d}"),
        };
        let catalog = Catalog::new(&schema).unwrap();
        let streams = Streams::new(&catalog);
        Fixture {
            schema,
            catalog,
            streams,
        }
    }

    pub(super) fn stream(&self, tag: u64, name: &str) -> usize {
        let plan = self.catalog.plan_index(Some(1), tag).unwrap();
        (0..self.streams.len())
            .find(|&s| self.streams.info[s].plan == plan && self.streams.info[s].name == name)
            .unwrap()
    }

    pub(super) fn flat(&self, records: &[DynRecord]) -> FlatBlock {
        let mut flat = FlatBlock::default();
        for r in records {
            let plan = self.catalog.by_tag(Some(1), r.tag).unwrap();
            flat.push(plan, &r.fields).unwrap();
        }
        flat
    }

    /// The automatic choice for `block`, with `call.obj` and `see.obj` given `obj_list`
    /// (`none` as primary).
    fn choices(&self, block: &FlatBlock, obj_list: &[Spec]) -> Vec<Choice> {
        let declared = |n: u8| self.schema.section(n).is_some();
        let chosen =
            choose_block(&self.catalog, &self.streams, block, Some(1), &declared, &[]).unwrap();
        let mut choices = chosen.choices().to_vec();
        for s in [self.stream(4, "obj"), self.stream(5, "obj")] {
            choices[s] = Choice {
                primary: Spec {
                    kind: Kind::Zero,
                    arg: 0,
                },
                list: obj_list.to_vec(),
            };
        }
        choices
    }

    pub(super) fn encode(
        &self,
        block: &FlatBlock,
        choices: &[Choice],
        carried: &mut Carried,
    ) -> Vec<u8> {
        encode_section_block(
            &self.schema,
            &self.catalog,
            &self.streams,
            block,
            choices,
            carried,
        )
    }

    pub(super) fn decode(
        &self,
        bytes: &[u8],
        records: u64,
        carried: &mut Carried,
    ) -> Result<FlatBlock, (u64, String)> {
        decode_section_block(
            &self.schema,
            &self.catalog,
            &self.streams,
            bytes,
            records,
            carried,
        )
    }
}

pub(super) fn spec(kind: Kind, arg: usize) -> Spec {
    Spec {
        kind,
        arg: arg as u32,
    }
}

#[test]
fn peers_are_fields_of_the_name_in_other_records() {
    let f = Fixture::new();
    let (call_obj, see_obj) = (f.stream(4, "obj"), f.stream(5, "obj"));
    assert_eq!(f.streams.peers(call_obj), vec![see_obj]);
    assert_eq!(f.streams.peers(see_obj), vec![call_obj]);
    assert_eq!(f.streams.peers(f.stream(5, "class")), Vec::<usize>::new());
    assert_eq!(
        f.streams.peers(f.stream(4, "method")),
        vec![f.stream(6, "method")]
    );
}

/// The shared list ranks what the other record named (a seen object the call names next),
/// which the own field's move-to-front list does not know; keyed by the method, the ranks of
/// each call are learnt per method. Each step must pay, and the choice must find it.
#[test]
fn recent_ranks_code_references_smaller_keyed_by_the_method() {
    let f = Fixture::new();
    let block = f.flat(&program(300, 5));
    let (call_obj, method) = (f.stream(4, "obj"), f.stream(4, "method"));
    let size = |list: &[Spec]| {
        let choices = f.choices(&block, list);
        let bytes = f.encode(&block, &choices, &mut Carried::default());
        let back = f
            .decode(&bytes, block.records, &mut Carried::default())
            .unwrap();
        assert_eq!(back.words, block.words);
        bytes.len()
    };
    let mtf = size(&[spec(Kind::Mtf, 0)]);
    let recent = size(&[spec(Kind::Recent, call_obj)]);
    let keyed = size(&[spec(Kind::Recent, method)]);
    assert!(
        keyed < recent && recent < mtf,
        "keyed recent {keyed} bytes, recent {recent}, mtf {mtf}"
    );
    // The automatic choice measures `recent` and proposes it keyed by the method.
    let declared = |n: u8| f.schema.section(n).is_some();
    let chosen = choose_block(&f.catalog, &f.streams, &block, Some(1), &declared, &[]).unwrap();
    assert!(chosen
        .proposals
        .iter()
        .any(|p| p[call_obj].list.first() == Some(&spec(Kind::Recent, method))));
}

/// A `recent` list of one block ranks the objects of the next: the reader keeps it as the
/// writer does, and block B does not read back without block A.
#[test]
fn recent_list_carries_into_the_next_block() {
    let f = Fixture::new();
    let all = program(200, 1000);
    let (a, b) = all.split_at(all.len() / 2);
    let (a, b) = (f.flat(a), f.flat(b));
    let choices = f.choices(&a, &[spec(Kind::Recent, f.stream(4, "obj"))]);
    let mut carried = Carried::default();
    let bytes_a = f.encode(&a, &choices, &mut carried);
    let bytes_b = f.encode(&b, &choices, &mut carried.clone());
    let fresh = f.encode(&b, &choices, &mut Carried::default());
    assert!(
        bytes_b.len() < fresh.len(),
        "{} {}",
        bytes_b.len(),
        fresh.len()
    );
    let mut read = Carried::default();
    assert_eq!(
        f.decode(&bytes_a, a.records, &mut read).unwrap().words,
        a.words
    );
    assert_eq!(
        f.decode(&bytes_b, b.records, &mut read).unwrap().words,
        b.words
    );
    let alone = f.decode(&bytes_b, b.records, &mut Carried::default());
    assert!(alone.is_err() || alone.unwrap().words != b.words);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn recent_round_trips_and_damage_gives_no_panic(
        rounds in 0usize..40,
        slide in 1usize..6,
        keyed in any::<bool>(),
        split in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let f = Fixture::new();
        let all = program(rounds, slide);
        let (a, b) = all.split_at(split.index(all.len() + 1));
        let (a, b) = (f.flat(a), f.flat(b));
        let call_obj = f.stream(4, "obj");
        let key = if keyed { f.stream(4, "method") } else { call_obj };
        let choices = f.choices(&a, &[spec(Kind::Recent, key), spec(Kind::Mtf, 0)]);
        let mut carried = Carried::default();
        let _ = f.encode(&a, &choices, &mut carried);
        let bytes = f.encode(&b, &choices, &mut carried.clone());
        let back = f.decode(&bytes, b.records, &mut carried.clone()).unwrap();
        prop_assert_eq!(&back.words, &b.words);
        let mut damaged = bytes.clone();
        for (at, x) in &flips {
            let i = at.index(damaged.len());
            damaged[i] ^= x;
        }
        let _ = f.decode(&damaged, b.records, &mut carried.clone());
        let _ = f.decode(&bytes[..cut.index(bytes.len())], b.records, &mut carried.clone());
    }
}
