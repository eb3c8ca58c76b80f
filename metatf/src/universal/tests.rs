//! Universal codec round trips, automatic metadata, value sections and repeated groups.

use super::*;
use crate::container::{Codec, ContainerHeader, ContainerReader};

pub(crate) const HEAP_DTD: &str = "tag.width = 1;
size.width = 1; size.interpretation = none;
address.width = 4; address.interpretation = none;
time.interpretation = default 0;
section heap 1 {
    alloc : (tag, size, address, time) { tag.value = 4; }
    free : (tag, address) { tag.value = 6; }
}
";

pub(crate) fn schema(src: &str) -> metatf_dtd::Schema {
    match metatf_dtd::parse_schema(src, "test.dtd") {
        Ok(s) => s,
        Err(d) => panic!("{d}"),
    }
}

pub(crate) fn rec(name: &str, tag: u64, fields: &[u64]) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields: fields.iter().map(|&v| Value::Uint(v)).collect(),
    }
}

fn write(dtd: &str, records: &[DynRecord], codec: Codec, per_block: u64) -> Vec<u8> {
    let header = ContainerHeader {
        dtd: dtd.into(),
        format: "test".into(),
        properties: vec![],
    };
    let mut w = UniversalWriter::new(Vec::new(), schema(dtd), &header, codec, 3).unwrap();
    w.set_block_records(per_block);
    for r in records {
        if let Err(e) = w.write(r) {
            panic!("{e}");
        }
    }
    w.finish().unwrap()
}

fn read(bytes: &[u8]) -> Vec<DynRecord> {
    let mut r = UniversalReader::new(bytes).unwrap();
    let mut out = vec![];
    while let Some(rec) = r.next_record().unwrap() {
        out.push(DynRecord {
            section: None,
            ..rec
        });
    }
    out
}

fn heap_records() -> Vec<DynRecord> {
    vec![
        rec("section", 2, &[1]),
        rec("alloc", 4, &[16, 0x1000, 0]),
        DynRecord {
            section: None,
            name: "comment".into(),
            tag: 1,
            fields: vec![Value::Uint(5), Value::Bytes(b"hello".to_vec())],
        },
        // The paper's example: (metadata, alloc, size, width, 8).
        rec("metadata", 3, &[4, 1, 0, 8]),
        rec("alloc", 4, &[1 << 40, 0x2000, 0]),
        rec("metadata", 3, &[6, 1, 3, 0x2000]), // free.address delta from 0x2000
        rec("free", 6, &[0x1000]),
        rec("free", 6, &[0x2000]),
    ]
}

#[test]
fn heap_records_round_trip_with_every_codec_and_block_size() {
    for codec in [Codec::None, Codec::Gzip, Codec::Zstd] {
        for per_block in [0, 1, 3] {
            let bytes = write(HEAP_DTD, &heap_records(), codec, per_block);
            assert_eq!(read(&bytes), heap_records(), "{codec} {per_block}");
        }
    }
}

#[test]
fn reader_reports_sections_and_blocks() {
    let bytes = write(HEAP_DTD, &heap_records(), Codec::None, 3);
    let mut r = UniversalReader::new(&bytes[..]).unwrap();
    let mut events = vec![];
    while let Some(e) = r.next_event().unwrap() {
        events.push(match e {
            Event::Block {
                index,
                record_count,
            } => format!("block {index} {record_count}"),
            Event::Record(r) => format!("{:?} {}", r.section, r.name),
        });
    }
    assert_eq!(
        events,
        [
            "block 0 3",
            "None section",
            "Some(1) alloc",
            "Some(1) comment",
            "block 1 3",
            "Some(1) metadata",
            "Some(1) alloc",
            "Some(1) metadata",
            "block 2 2",
            "Some(1) free",
            "Some(1) free",
        ]
    );
}

#[test]
fn exact_bytes_of_the_record_stream() {
    let bytes = write(HEAP_DTD, &heap_records(), Codec::None, 0);
    let mut c = ContainerReader::new(&bytes[..]).unwrap();
    let block = c.next_block().unwrap().unwrap();
    let stream = &block.section(RECORD_SECTION).unwrap().bytes;
    let want: Vec<u8> = [
        &[2, 1][..],                           // section 1
        &[4, 16, 0, 0, 0x10, 0],               // alloc size 1 byte, address 4 BE, time 0 bytes
        &[1, 5, b'h', b'e', b'l', b'l', b'o'], // comment
        &[3, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 8], // metadata alloc size width 8
        &[4, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x20, 0],
        &[3, 6, 1, 3, 0, 0, 0, 0, 0, 0, 0x20, 0], // metadata free address delta 0x2000
        &[6, 0xff, 0xff, 0xf0, 0],                // 0x1000 - 0x2000 = -0x1000
        &[6, 0, 0, 0x10, 0],
    ]
    .concat();
    assert_eq!(stream, &want);
}

#[test]
fn values_that_do_not_fit_get_metadata_first() {
    let records = vec![
        rec("section", 2, &[1]),
        rec("alloc", 4, &[300, 1, 0]), // size needs 2 bytes
        rec("alloc", 4, &[1, 1, 7]),   // time is default 0: switch to none, then widen
        rec("alloc", 4, &[1, 1, 0x1_0000_0000]),
    ];
    let back = read(&write(HEAP_DTD, &records, Codec::None, 0));
    let want = vec![
        rec("section", 2, &[1]),
        rec("metadata", 3, &[4, 1, 0, 2]),
        rec("alloc", 4, &[300, 1, 0]),
        rec("metadata", 3, &[4, 3, 1]),
        rec("metadata", 3, &[4, 3, 0, 1]),
        rec("alloc", 4, &[1, 1, 7]),
        rec("metadata", 3, &[4, 3, 0, 5]),
        rec("alloc", 4, &[1, 1, 0x1_0000_0000]),
    ];
    assert_eq!(back, want);
}

#[test]
fn long_comments_widen_their_length_field() {
    let text = vec![b'x'; 300];
    let records = vec![DynRecord {
        section: None,
        name: "comment".into(),
        tag: 1,
        fields: vec![Value::Uint(300), Value::Bytes(text)],
    }];
    let back = read(&write(HEAP_DTD, &records, Codec::None, 0));
    assert_eq!(back[0], rec("metadata", 3, &[1, 1, 0, 2]));
    assert_eq!(back[1], records[0]);
}

const SPLIT_DTD: &str = "tag.width = 1;
address.interpretation = sectionStride 5 1;
size.width = 1; size.interpretation = sectionOffset 6;
section heap 1 {
    alloc : (tag, size, address) { tag.value = 4; }
}
section addresses 5 { }
section sizes 6 { }
";

#[test]
fn value_sections_hold_split_streams() {
    let mut records = vec![rec("section", 2, &[1])];
    for i in 0..10u64 {
        records.push(rec(
            "alloc",
            4,
            &[[16, 32, 16_000][i as usize % 3], 0x10_0000 + 8 * i],
        ));
    }
    for per_block in [0, 4] {
        let bytes = write(SPLIT_DTD, &records, Codec::None, per_block);
        assert_eq!(read(&bytes), records);
    }
    let bytes = write(SPLIT_DTD, &records, Codec::None, 0);
    let block = ContainerReader::new(&bytes[..])
        .unwrap()
        .next_block()
        .unwrap()
        .unwrap();
    // Record stream: section record, then per alloc the tag and a 1-byte dictionary index.
    let stream = &block.section(0).unwrap().bytes;
    assert_eq!(stream.len(), 2 + 10 * 2);
    let sizes = block.section(6).unwrap();
    assert_eq!(
        (sizes.element_width, &sizes.bytes[..]),
        (2, &[0, 16, 0, 32, 0x3e, 0x80][..])
    );
    let addresses = block.section(5).unwrap();
    assert_eq!((addresses.element_width, addresses.bytes.len()), (3, 30));
}

#[test]
fn section_stride_conflicts_switch_to_none() {
    let dtd = "tag.width = 1;
address.interpretation = sectionStride 5 0;
section heap 1 { free : (tag, address) { tag.value = 6; } }
section addresses 5 { }
";
    let records = vec![
        rec("section", 2, &[1]),
        rec("free", 6, &[7]),
        rec("free", 6, &[8]),
    ];
    let back = read(&write(dtd, &records, Codec::None, 0));
    let want = vec![
        rec("section", 2, &[1]),
        rec("free", 6, &[7]),
        rec("metadata", 3, &[6, 1, 1]), // sectionStride cannot give 8: none
        rec("metadata", 3, &[6, 1, 0, 1]), // and no width was ever set: 1 byte
        rec("free", 6, &[8]),
    ];
    assert_eq!(back, want);
}

#[test]
fn repeated_groups_round_trip() {
    let dtd = "tag.width = 1;
n.width = 1; n.interpretation = none;
a.width = 2; a.interpretation = delta 0;
b.width = 1; b.interpretation = none;
pairs : (tag, n * (a, b)) { tag.value = 9; }
";
    let s = schema(dtd);
    assert!(s.global_records.iter().any(|r| r.name == "pairs"));
    let pairs = |items: &[(u64, u64)]| DynRecord {
        section: None,
        name: "pairs".into(),
        tag: 9,
        fields: vec![
            Value::Uint(items.len() as u64),
            Value::List(
                items
                    .iter()
                    .map(|&(a, b)| vec![Value::Uint(a), Value::Uint(b)])
                    .collect(),
            ),
        ],
    };
    let records = vec![pairs(&[(1, 2), (1000, 3)]), pairs(&[]), pairs(&[(5, 255)])];
    assert_eq!(read(&write(dtd, &records, Codec::Zstd, 2)), records);
}

#[test]
fn bad_records_are_refused_with_their_path() {
    let header = ContainerHeader {
        dtd: HEAP_DTD.into(),
        format: "t".into(),
        properties: vec![],
    };
    let mut w =
        UniversalWriter::new(Vec::new(), schema(HEAP_DTD), &header, Codec::None, 0).unwrap();
    let err = w
        .write(&rec("alloc", 4, &[1, 2, 3]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tag 4 names no record in the global section"),
        "{err}"
    );
    w.write(&rec("section", 2, &[1])).unwrap();
    let err = w.write(&rec("alloc", 4, &[1, 2])).unwrap_err().to_string();
    assert!(
        err.contains("record 1 (alloc)") && err.contains("2 fields given, 3 expected"),
        "{err}"
    );
    let err = w.write(&rec("section", 2, &[9])).unwrap_err().to_string();
    assert!(err.contains("section 9 is not declared"), "{err}");
    let err = w
        .write(&rec("metadata", 3, &[4, 9, 0, 1]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no scalar field at position 9"), "{err}");
}

#[test]
fn damaged_record_streams_give_record_errors() {
    let bytes = write(HEAP_DTD, &heap_records(), Codec::None, 0);
    let mut c = ContainerReader::new(&bytes[..]).unwrap();
    let block = c.next_block().unwrap().unwrap();
    let stream_at = bytes.windows(2).position(|w| w == [2, 1]).unwrap();
    assert_eq!(
        bytes[stream_at..stream_at + 2],
        block.section(0).unwrap().bytes[..2]
    );
    // Rebuild a container whose record stream has an unknown tag in record 1.
    let mut stream = block.section(0).unwrap().bytes.clone();
    stream[2] = 99;
    let header = ContainerHeader {
        dtd: HEAP_DTD.into(),
        format: "t".into(),
        properties: vec![],
    };
    let mut w = crate::container::ContainerWriter::new(Vec::new(), &header).unwrap();
    w.write_block(
        block.record_count,
        &[crate::container::SectionData {
            number: 0,
            element_width: 0,
            codec: Codec::None,
            level: 0,
            bytes: &stream,
        }],
    )
    .unwrap();
    let bytes = w.finish().unwrap();
    let mut r = UniversalReader::new(&bytes[..]).unwrap();
    r.next_record().unwrap();
    let err = r.next_record().unwrap_err().to_string();
    assert!(err.starts_with("record 1 (tag)"), "{err}");
    assert!(err.contains("tag 99 names no record in section 1"), "{err}");
}

/// A container whose single block holds `stream` as its record stream, claiming `count` records.
fn raw_container(dtd: &str, count: u64, stream: &[u8]) -> Vec<u8> {
    let header = ContainerHeader {
        dtd: dtd.into(),
        format: "t".into(),
        properties: vec![],
    };
    let mut w = crate::container::ContainerWriter::new(Vec::new(), &header).unwrap();
    let section = crate::container::SectionData {
        number: RECORD_SECTION,
        element_width: 0,
        codec: Codec::None,
        level: 0,
        bytes: stream,
    };
    w.write_block(count, &[section]).unwrap();
    w.finish().unwrap()
}

#[test]
fn a_block_cannot_claim_more_records_than_bytes() {
    let bytes = raw_container(HEAP_DTD, u64::MAX, &[2, 1]);
    let mut r = UniversalReader::new(&bytes[..]).unwrap();
    let err = r.next_record().unwrap_err().to_string();
    assert!(err.contains("claims 18446744073709551615 records"), "{err}");
}

#[test]
fn zero_width_repetitions_cannot_explode() {
    let dtd = "tag.width = 1;
n.width = 8; n.interpretation = none;
z.interpretation = default 7;
many : (tag, n * (z)) { tag.value = 9; }
";
    // One record: tag 9, count 2^40 of a field that takes no bytes.
    let bytes = raw_container(dtd, 1, &[9, 0, 0, 1, 0, 0, 0, 0, 0]);
    let mut r = UniversalReader::new(&bytes[..]).unwrap();
    let err = r.next_record().unwrap_err().to_string();
    assert!(
        err.contains("repeat count 1099511627776 is too large"),
        "{err}"
    );
    // Many records of a moderate count hit the per-block budget instead.
    let mut stream = vec![];
    for _ in 0..100 {
        stream.extend([9, 0, 0, 0, 0, 0, 0x0f, 0, 0]); // 0xf0000 repetitions each
    }
    let bytes = raw_container(dtd, 100, &stream);
    let mut r = UniversalReader::new(&bytes[..]).unwrap();
    let mut ok = 0;
    let err = loop {
        match r.next_record() {
            Ok(Some(_)) => ok += 1,
            Ok(None) => panic!("all records decoded"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(
        ok == 1 && err.contains("repeat count 983040 is too large"),
        "{ok} {err}"
    );
}
