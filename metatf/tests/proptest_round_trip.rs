//! Property test: random schemas (every interpretation, width 0-8, byte strings, repeated
//! groups, several sections and value sections) and random record streams with metadata
//! changes interleaved survive write → read. The writer may add metadata records (to widen a
//! field or leave an interpretation) but nothing else, and writing what was read gives the
//! very same bytes (the writer's choices are a fixpoint).

mod common;

use common::{build_schema, header, op, schema_specs, stream};
use metatf::container::Codec;
use metatf::dtd::Schema;
use metatf::{DynRecord, Event, UniversalReader, UniversalWriter};
use proptest::prelude::*;

fn read_events(bytes: &[u8], schema: &Schema) -> Vec<Event> {
    let mut r = UniversalReader::with_schema(bytes, schema.clone()).unwrap();
    let mut out = vec![];
    while let Some(e) = r.next_event().unwrap_or_else(|e| panic!("{e}")) {
        out.push(match e {
            Event::Record(rec) => Event::Record(DynRecord {
                section: None,
                ..rec
            }),
            b => b,
        });
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn write_then_read_gives_the_records_back(
        (tag_width, specs) in schema_specs(),
        ops in prop::collection::vec(op(), 0..40),
        per_block in prop_oneof![Just(0u64), Just(1), Just(3), Just(7)],
        codec in prop_oneof![Just(Codec::None), Just(Codec::Gzip), Just(Codec::Zstd)],
        little in any::<bool>(),
    ) {
        let schema = build_schema(tag_width, &specs);
        let input = stream(&schema, &ops);
        let mut w = UniversalWriter::new(Vec::new(), schema.clone(), &header(little), codec, 1).unwrap();
        w.set_block_records(per_block);
        for r in &input {
            if let Err(e) = w.write(r) {
                panic!("writing {r:?}: {e}");
            }
        }
        let bytes = w.finish().unwrap();
        let events = read_events(&bytes, &schema);

        // The records read are the input with metadata records added, and nothing else.
        let mut want = input.iter().peekable();
        for e in &events {
            if let Event::Record(r) = e {
                if want.peek() == Some(&r) {
                    want.next();
                } else {
                    prop_assert_eq!(&r.name, "metadata", "unexpected record {:?}", r);
                }
            }
        }
        prop_assert!(want.peek().is_none(), "records lost from {:?}", want.peek());

        // Writing what was read, cutting blocks where they were, gives the same bytes.
        let mut w = UniversalWriter::new(Vec::new(), schema.clone(), &header(little), codec, 1).unwrap();
        w.set_block_records(0);
        let mut first = true;
        for e in &events {
            match e {
                Event::Block { .. } if first => first = false,
                Event::Block { .. } => w.end_block().unwrap(),
                Event::Record(r) => w.write(r).unwrap(),
            }
        }
        if !first {
            w.end_block().unwrap();
        }
        prop_assert!(w.finish().unwrap() == bytes, "rewriting changed the bytes");
    }
}
