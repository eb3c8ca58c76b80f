//! Field coding orders: a record's fields coded in an order written in the block, so that a
//! field can be keyed by a field the walking order puts after it.

use super::block::{choose_ordered, encode_ended, Coding};
use super::choice::{write_choices, write_tag_context};
use super::engine::Carried;
use super::flat::FlatBlock;
use super::order::{check, propose, read_orders, write_orders, Orders};
use super::{decode_alone, trials, Streams};
use crate::container::PutLe;
use crate::universal::plan::Catalog;
use crate::universal::Value;

/// An allocation names its site, then its address before its size (as a trace prints them).
const DTD: &str = "tag.width = 1;
siteLength.width = 2; siteLength.interpretation = none;
site.interpretation = none;
size.width = 8; size.interpretation = none;
address.width = 8; address.interpretation = none;
alloc : (tag, siteLength, site, address, size) { tag.value = 4; site.width = siteLength.value; }
free : (tag, address) { tag.value = 5; }
";

const SITES: [&str; 4] = ["main+10", "parse+3f", "grow+7", "hash+22"];
const SIZES: [u64; 8] = [16, 24, 32, 48, 64, 96, 128, 4096];

/// An allocator-like trace: each allocation takes the address its size freed last (a fresh
/// one when there is none), and every other record frees one of the four newest live objects,
/// whatever their size: an address is cheap given its size and dear without it.
fn block(catalog: &Catalog, n: usize) -> FlatBlock {
    let alloc = catalog.by_tag(None, 4).unwrap();
    let free = catalog.by_tag(None, 5).unwrap();
    let mut flat = FlatBlock::default();
    let mut freed: Vec<Vec<u64>> = vec![Vec::new(); SIZES.len()];
    let mut live: Vec<(u64, usize)> = Vec::new();
    let mut top = 0x5000_0000u64;
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if live.len() > 64 && x.is_multiple_of(2) {
            let (a, k) = live.remove(live.len() - 1 - (x >> 8) as usize % 4);
            freed[k].push(a);
            flat.push(free, &[Value::Uint(a)]).unwrap();
        } else {
            let k = (x >> 20) as usize % SIZES.len();
            let a = freed[k].pop().unwrap_or_else(|| {
                top += SIZES[k] + 16;
                top
            });
            live.push((a, k));
            // The site says nothing of the size.
            let site = SITES[(x >> 40) as usize % SITES.len()].as_bytes().to_vec();
            let fields = [
                Value::Uint(site.len() as u64),
                Value::Bytes(site),
                Value::Uint(a),
                Value::Uint(SIZES[k]),
            ];
            flat.push(alloc, &fields).unwrap();
        }
    }
    flat
}

struct Setup {
    schema: metatf_dtd::Schema,
    flat: FlatBlock,
}

fn setup(n: usize) -> Setup {
    let schema = metatf_dtd::parse_schema(DTD, "order.dtd").unwrap();
    let catalog = Catalog::new(&schema).unwrap();
    let flat = block(&catalog, n);
    Setup { schema, flat }
}

/// The allocation's fields as the writer would order them: the site, then the size, then the
/// address (leaves: 0 siteLength, 1 site, 2 address, 3 size).
fn size_first(catalog: &Catalog) -> Orders {
    let mut orders = Orders::plain(catalog);
    let p = catalog.plan_index(None, 4).unwrap();
    orders.set(p, check(&catalog.plans()[p], &[0, 1, 3, 2]).unwrap());
    orders
}

/// Codes the block with the writer's choice of predictors under `orders`.
fn code(catalog: &Catalog, streams: &Streams, flat: &FlatBlock, orders: &Orders) -> Vec<u8> {
    let declared = |_: u8| false;
    trials::encode_best(catalog, streams, flat, None, &declared, &[], orders).unwrap()
}

#[test]
fn a_reordered_block_decodes_to_its_records() {
    let s = setup(20_000);
    let catalog = Catalog::new(&s.schema).unwrap();
    let streams = Streams::new(&catalog);
    let declared = |_: u8| false;
    let orders = size_first(&catalog);
    let bytes = code(&catalog, &streams, &s.flat, &orders);
    let (back, _) =
        decode_alone(&catalog, &streams, &bytes, s.flat.records, None, &declared).unwrap();
    assert_eq!(back.records, s.flat.records);
    assert_eq!(back.words, s.flat.words);
    assert_eq!(back.bytes, s.flat.bytes);
}

#[test]
fn the_size_first_keys_the_address() {
    let s = setup(20_000);
    let catalog = Catalog::new(&s.schema).unwrap();
    let streams = Streams::new(&catalog);
    let plain = code(&catalog, &streams, &s.flat, &Orders::plain(&catalog));
    let ordered = code(&catalog, &streams, &s.flat, &size_first(&catalog));
    assert!(
        ordered.len() * 10 < plain.len() * 9,
        "{} bytes with the size first, {} in walking order",
        ordered.len(),
        plain.len()
    );
}

#[test]
fn the_writer_proposes_the_cheap_fields_first_and_strings_after_their_length() {
    let s = setup(10);
    let catalog = Catalog::new(&s.schema).unwrap();
    let streams = Streams::new(&catalog);
    let p = catalog.plan_index(None, 4).unwrap();
    let stream = |name: &str| {
        (0..streams.len())
            .find(|&t| streams.info[t].plan == p && streams.info[t].name == name)
            .unwrap()
    };
    let mut bits = vec![0.0; streams.len()];
    bits[stream("siteLength")] = 50.0;
    bits[stream("address")] = 900.0;
    bits[stream("size")] = 10.0;
    let orders = propose(&catalog, &streams, &bits);
    assert_eq!(orders.of(p).unwrap().leaves, vec![3, 0, 1, 2]);
    // Already cheapest first: nothing to write.
    bits[stream("size")] = 1000.0;
    assert!(propose(&catalog, &streams, &bits).is_plain());
    assert!(write_orders(&catalog, &Orders::plain(&catalog)).is_empty());
}

#[test]
fn orders_that_cannot_be_coded_are_refused() {
    let s = setup(10);
    let catalog = Catalog::new(&s.schema).unwrap();
    let plan = &catalog.plans()[catalog.plan_index(None, 4).unwrap()];
    for bad in [
        &[1, 0, 2, 3][..], // the site before its length
        &[0, 1, 2][..],    // a field left out
        &[0, 1, 2, 2][..], // a field twice
        &[0, 1, 2, 9][..], // no such field
    ] {
        assert!(check(plan, bad).is_err(), "{bad:?}");
    }
    let repeated = metatf_dtd::parse_schema(
        "tag.width = 1; n.width = 1; n.interpretation = none; v.width = 2; v.interpretation = none;
         r : (tag, n * (v)) { tag.value = 6; }",
        "r.dtd",
    )
    .unwrap();
    let catalog = Catalog::new(&repeated).unwrap();
    let plan = &catalog.plans()[catalog.plan_index(None, 6).unwrap()];
    let err = check(plan, &[1, 0]).unwrap_err();
    assert!(err.contains("repeated"), "{err}");
}

#[test]
fn an_order_table_reads_back() {
    let s = setup(10);
    let catalog = Catalog::new(&s.schema).unwrap();
    let orders = size_first(&catalog);
    let bytes = write_orders(&catalog, &orders);
    let mut at = 0;
    assert_eq!(read_orders(&catalog, &bytes, &mut at).unwrap(), orders);
    assert_eq!(at, bytes.len());
    for cut in 1..bytes.len() {
        let err = read_orders(&catalog, &bytes[..cut], &mut 0).expect_err("an error");
        assert!(err.contains("cut short"), "{cut}: {err}");
    }
}

/// The block's tag context and model table for `orders`, then `table`, then its records coded.
fn with_order_table(table: &[u8]) -> Result<FlatBlock, String> {
    let s = setup(2_000);
    let catalog = Catalog::new(&s.schema).unwrap();
    let streams = Streams::new(&catalog);
    let declared = |_: u8| false;
    let orders = size_first(&catalog);
    let chosen = choose_ordered(
        &catalog,
        &streams,
        &s.flat,
        None,
        &declared,
        &[],
        &orders,
        &Carried::default(),
    )
    .unwrap();
    let coding = Coding {
        catalog: &catalog,
        streams: &streams,
        block: &s.flat,
        choices: chosen.choices(),
        tag_context: chosen.tag_context,
        section: None,
        declared: &declared,
        orders: &orders,
    };
    let (bytes, _, _) =
        encode_ended(&coding, &streams.all_ends(), None, &Carried::default()).unwrap();
    let bytes = super::packed_tables::unpacked(&bytes);
    let mut head = write_tag_context(&catalog, &streams, chosen.tag_context);
    head.extend(write_choices(&catalog, &streams, chosen.choices()));
    let records = &bytes[head.len() + write_orders(&catalog, &orders).len()..];
    head.extend_from_slice(table);
    head.extend_from_slice(records);
    decode_alone(&catalog, &streams, &head, s.flat.records, None, &declared)
        .map(|(b, _)| b)
        .map_err(|e| e.1)
}

#[test]
fn damaged_order_tables_are_errors() {
    let entry = |scope: u64, tag: u64, leaves: &[u64]| {
        let mut t = Vec::new();
        t.put_varint(1);
        t.put_varint(scope);
        t.put_varint(tag);
        t.put_varint(leaves.len() as u64);
        for &l in leaves {
            t.put_varint(l);
        }
        t
    };
    // The table the writer wrote reads back.
    let good = with_order_table(&entry(0, 4, &[0, 1, 3, 2])).unwrap();
    assert!(good.records > 0);
    for (table, says) in [
        (entry(0, 7, &[0]), "names no record"),
        (entry(3, 4, &[0, 1, 3, 2]), "names no record"),
        (entry(0, 4, &[0, 1, 3]), "orders 3 fields"),
        (entry(0, 4, &[1, 0, 3, 2]), "before its length"),
        (entry(0, 4, &[0, 1, 3, 3]), "repeats or exceeds"),
        (entry(0, 4, &[0, 1, 3, 1 << 40]), "repeats or exceeds"),
        (vec![9], "entries for"),
    ] {
        let err = with_order_table(&table).err().expect("an error");
        assert!(err.contains(says), "{table:?}: {err}");
    }
    let mut twice = entry(0, 4, &[0, 1, 3, 2]);
    twice[0] = 2;
    twice.extend_from_slice(&entry(0, 4, &[0, 1, 3, 2])[1..]);
    let err = with_order_table(&twice).err().expect("an error");
    assert!(err.contains("repeats alloc"), "{err}");
}

#[test]
fn damaged_reordered_blocks_give_errors_not_panics() {
    let s = setup(3_000);
    let catalog = Catalog::new(&s.schema).unwrap();
    let streams = Streams::new(&catalog);
    let declared = |_: u8| false;
    let bytes = code(&catalog, &streams, &s.flat, &size_first(&catalog));
    let mut x = 0x9E37_79B9u64;
    for _ in 0..300 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let mut damaged = bytes.clone();
        let i = (x >> 33) as usize % damaged.len();
        damaged[i] ^= (x >> 8) as u8 | 1;
        let _ = decode_alone(
            &catalog,
            &streams,
            &damaged,
            s.flat.records,
            None,
            &declared,
        );
        let cut = (x >> 40) as usize % bytes.len();
        let _ = decode_alone(
            &catalog,
            &streams,
            &bytes[..cut],
            s.flat.records,
            None,
            &declared,
        );
    }
}
