//! String keys: a byte string's hash as the key of another field's predictor.

use super::choice::Choice;
use super::flat::FlatBlock;
use super::predict::{Kind, Spec};
use super::streams::{string_key, STRING_KEY_POSITION};
use super::{choose_block, decode_alone, encode_block, Streams};
use crate::universal::plan::Catalog;
use crate::universal::Value;

const DTD: &str = "tag.width = 1;
siteLength.width = 2; siteLength.interpretation = none;
site.interpretation = none;
size.width = 8; size.interpretation = none;
alloc : (tag, siteLength, site, size) { tag.value = 4; site.width = siteLength.value; }
";

/// Sites of the test trace; the size of an allocation is a function of its site.
const SITES: [&str; 6] = [
    "main+10", "parse+3f", "grow+7", "hash+22", "io+1", "cache+90",
];

fn size_of_site(i: usize) -> u64 {
    [24, 4096, 136, 48, 8192, 72][i]
}

/// `n` allocations at pseudo-random sites, each with its site's size.
fn block(catalog: &Catalog, n: usize) -> FlatBlock {
    let plan = catalog.by_tag(None, 4).unwrap();
    let mut flat = FlatBlock::default();
    for k in 0..n {
        // A well-mixed hash of `k` (SplitMix64's finaliser): a plain multiplicative hash
        // gives a sequence of sites that repeats, which the repeat model would learn.
        let mut z = (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let i = ((z ^ (z >> 31)) % SITES.len() as u64) as usize;
        let site = SITES[i].as_bytes().to_vec();
        let fields = vec![
            Value::Uint(site.len() as u64),
            Value::Bytes(site),
            Value::Uint(size_of_site(i)),
        ];
        flat.push(plan, &fields).unwrap();
    }
    flat
}

fn setup() -> (metatf_dtd::Schema, FlatBlock) {
    let schema = metatf_dtd::parse_schema(DTD, "key.dtd").unwrap();
    let catalog = Catalog::new(&schema).unwrap();
    let flat = block(&catalog, 5000);
    (schema, flat)
}

#[test]
fn string_key_is_a_stream_after_the_coded_ones() {
    let (schema, _) = setup();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    let plan = catalog.plan_index(None, 4).unwrap();
    let key = streams
        .string_key_of(plan, 1)
        .expect("a string key for `site`");
    let coded: Vec<&str> = (0..streams.len())
        .map(|s| streams.info[s].name.as_str())
        .collect();
    assert!(
        coded.contains(&"siteLength") && coded.contains(&"size"),
        "{coded:?}"
    );
    assert!(!coded.contains(&"site"), "{coded:?}");
    assert!(key >= streams.len(), "string keys follow the coded streams");
    assert_eq!(streams.info[key].name, "site");
    assert!(streams.is_string_key(key));
    assert!(!streams.is_string_key(streams.len() - 1));
    assert_eq!(streams.of(plan, STRING_KEY_POSITION + 1), Some(key));
    // FNV-1a 64 of the bytes (the reference value of "a").
    assert_eq!(string_key(b"a"), 0xAF63_DC4C_8601_EC8C);
}

#[test]
fn size_keyed_by_site_is_chosen_codes_smaller_and_round_trips() {
    let (schema, flat) = setup();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    let declared = |_: u8| false;
    let plan = catalog.plan_index(None, 4).unwrap();
    let size = (0..streams.len())
        .find(|&s| streams.info[s].name == "size")
        .unwrap();
    let key = streams.string_key_of(plan, 1).unwrap();
    let chosen = choose_block(&catalog, &streams, &flat, None, &declared, &[]).unwrap();
    let by_site = Spec {
        kind: Kind::Key,
        arg: key as u32,
    };
    let c = &chosen.choices()[size];
    assert!(
        c.primary == by_site || c.list.contains(&by_site),
        "size predicted by its site: {c:?}"
    );
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
    let with = encode(chosen.choices());
    let mut without = chosen.choices().to_vec();
    without[size] = Choice {
        primary: Spec {
            kind: Kind::Last,
            arg: size as u32,
        },
        list: vec![Spec {
            kind: Kind::Mtf,
            arg: 0,
        }],
    };
    let without = encode(&without);
    assert!(
        with.len() * 4 < without.len() * 3,
        "{} bytes keyed by site, {} without",
        with.len(),
        without.len()
    );
    let (back, _) = decode_alone(&catalog, &streams, &with, flat.records, None, &declared).unwrap();
    assert_eq!(back.words, flat.words);
    assert_eq!(back.bytes, flat.bytes);
}

#[test]
fn a_model_entry_for_a_string_key_is_an_error() {
    let (schema, flat) = setup();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    let declared = |_: u8| false;
    // Tag context: order 0, no stream; then a model table of one entry naming the string key
    // (scope 0, tag 4, its position) with the predictor `none`.
    let mut bad = vec![0u8, 0, 1, 0, 4];
    crate::container::PutLe::put_varint(&mut bad, u64::from(STRING_KEY_POSITION + 1));
    bad.extend([8, 1, 0, 0]);
    let err = decode_alone(&catalog, &streams, &bad, flat.records, None, &declared)
        .err()
        .expect("an error");
    assert!(err.1.contains("string key"), "{}", err.1);
}
