//! The universal reader and the dump on damaged input: every truncation and every flipped byte
//! of a small trace gives records and then an error (or the right records) — never a panic and
//! never a record that was not written. This replays on stable what the fuzz target
//! `fuzz/fuzz_targets/container_reader.rs` explores.

use metatf::container::{Codec, ContainerHeader};
use metatf::{dump, DynRecord, UniversalReader, UniversalWriter, Value};

const DTD: &str = "tag.width = 1;
size.width = 1; size.interpretation = delta 0;
address.interpretation = sectionStride 5 1;
section heap 1 { alloc : (tag, size, address) { tag.value = 4; } }
section addresses 5 { }
";

fn trace() -> (Vec<u8>, Vec<DynRecord>) {
    let header = ContainerHeader {
        dtd: DTD.into(),
        format: "damage".into(),
        properties: vec![],
    };
    let schema = metatf::dtd::parse_schema(DTD, "d.dtd").unwrap_or_else(|d| panic!("{d}"));
    let mut w = UniversalWriter::new(Vec::new(), schema, &header, Codec::Zstd, 1).unwrap();
    w.set_block_records(3);
    let mut records = vec![DynRecord {
        section: None,
        name: "section".into(),
        tag: 2,
        fields: vec![Value::Uint(1)],
    }];
    for i in 0..8u64 {
        records.push(DynRecord {
            section: None,
            name: "alloc".into(),
            tag: 4,
            fields: vec![Value::Uint(i * 40), Value::Uint(0x1000 + i * 16)],
        });
    }
    for r in &records {
        w.write(r).unwrap();
    }
    let bytes = w.finish().unwrap();
    let mut back = vec![];
    let mut r = UniversalReader::new(&bytes[..]).unwrap();
    while let Some(rec) = r.next_record().unwrap() {
        back.push(rec);
    }
    (bytes, back)
}

/// Records read before the end or the first error, and whether an error came.
fn read(bytes: &[u8]) -> (Vec<DynRecord>, bool) {
    let mut out = vec![];
    let Ok(mut r) = UniversalReader::new(bytes) else {
        return (out, true);
    };
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push(rec),
            Ok(None) => return (out, false),
            Err(_) => return (out, true),
        }
    }
}

#[test]
fn truncated_traces_give_a_prefix_then_an_error() {
    let (bytes, all) = trace();
    for cut in 0..bytes.len() {
        let (got, failed) = read(&bytes[..cut]);
        assert!(failed, "cut at {cut} read without error");
        assert_eq!(&all[..got.len()], &got[..], "cut at {cut}");
        assert!(dump(&bytes[..cut], std::io::sink(), false).is_err());
    }
}

#[test]
fn flipped_bytes_never_give_wrong_records() {
    let (bytes, all) = trace();
    for at in 0..bytes.len() {
        for bit in [0x01, 0x80] {
            let mut damaged = bytes.clone();
            damaged[at] ^= bit;
            let (got, failed) = read(&damaged);
            assert!(failed, "flip of bit {bit:#x} at {at} not detected");
            assert_eq!(&all[..got.len()], &got[..], "flip at {at}");
            let _ = dump(&damaged[..], std::io::sink(), true);
        }
    }
}

mod random_streams {
    use metatf::container::{Codec, ContainerHeader, ContainerWriter, SectionData};
    use metatf::UniversalReader;
    use proptest::prelude::*;

    const DTD: &str = "tag.width = 1;
size.width = 2; size.interpretation = none;
n.width = 1; n.interpretation = none;
a.interpretation = sectionOffset 5; a.width = 1;
section heap 1 {
    alloc : (tag, size, vfield) { tag.value = 4; }
    list : (tag, n * (a, size)) { tag.value = 5; }
}
section values 5 { }
";

    proptest! {
        /// Well-framed containers whose record stream and value section are arbitrary bytes:
        /// the reader returns records or errors, never panics or loops.
        #[test]
        fn arbitrary_record_streams_never_panic(
            stream in prop::collection::vec(any::<u8>(), 0..200),
            values in prop::collection::vec(any::<u8>(), 0..40),
            width in 0u8..10,
            count in 0u64..50,
        ) {
            let header = ContainerHeader { dtd: DTD.into(), format: "x".into(), properties: vec![] };
            let mut w = ContainerWriter::new(Vec::new(), &header).unwrap();
            let values = if width == 0 { vec![] } else {
                values[..values.len() / usize::from(width) * usize::from(width)].to_vec()
            };
            let sections = [
                SectionData { number: 0, element_width: 0, codec: Codec::None, level: 0, bytes: &stream },
                SectionData { number: 5, element_width: width, codec: Codec::None, level: 0, bytes: &values },
            ];
            w.write_block(count, &sections).unwrap();
            let bytes = w.finish().unwrap();
            let mut r = UniversalReader::new(&bytes[..]).unwrap();
            let mut n = 0;
            while let Ok(Some(_)) = r.next_record() {
                n += 1;
            }
            prop_assert!(n <= count);
        }
    }
}
