//! Zero and negative strides, and zero-width fields, cannot make the reader loop: every record
//! costs at least its tag byte, zero-width values per block are bounded by the stream's size,
//! and a section cursor walking backwards or past the section is an error.

use metatf::container::{Codec, ContainerHeader, ContainerWriter, SectionData};
use metatf::{UniversalReader, Value};

const DTD: &str = "tag.width = 1;
a.interpretation = stride 5 0;
b.interpretation = stride 5 18446744073709551615;
c.interpretation = sectionStride 5 0;
d.interpretation = sectionStride 5 18446744073709551615;
n.width = 1; n.interpretation = none;
z.interpretation = default 0;
section s 1 {
    flat : (tag, a, b) { tag.value = 4; }
    still : (tag, c) { tag.value = 5; }
    back : (tag, d) { tag.value = 6; }
    many : (tag, n * (z)) { tag.value = 7; }
}
section values 5 { }
";

/// One block: section 1 then `stream`, with `count` records claimed and section 5 holding
/// three 1-byte elements 10, 20, 30. Returns the values of every record read and whether an
/// error ended the reading.
fn read(count: u64, stream: &[u8]) -> (Vec<Vec<Value>>, bool) {
    let header = ContainerHeader {
        dtd: DTD.into(),
        format: "strides".into(),
        properties: vec![],
    };
    let mut w = ContainerWriter::new(Vec::new(), &header).unwrap();
    let mut records = vec![2, 1];
    records.extend_from_slice(stream);
    let sections = [
        SectionData {
            number: 0,
            element_width: 0,
            codec: Codec::None,
            level: 0,
            bytes: &records,
        },
        SectionData {
            number: 5,
            element_width: 1,
            codec: Codec::None,
            level: 0,
            bytes: &[10, 20, 30],
        },
    ];
    w.write_block(count, &sections).unwrap();
    let bytes = w.finish().unwrap();
    let mut r = UniversalReader::new(&bytes[..]).unwrap();
    let mut out = vec![];
    loop {
        match r.next_record() {
            Ok(Some(rec)) if rec.name == "section" => {}
            Ok(Some(rec)) => out.push(rec.fields),
            Ok(None) => return (out, false),
            Err(_) => return (out, true),
        }
    }
}

#[test]
fn zero_and_negative_strides_advance_per_record_only() {
    let (values, failed) = read(4, &[4, 4, 4]);
    assert!(!failed);
    // stride 0 stays at 5; stride -1 counts down from 5 (first value = initial + stride).
    let want: Vec<Vec<Value>> = [(5, 4), (5, 3), (5, 2)]
        .iter()
        .map(|&(a, b)| vec![Value::Uint(a), Value::Uint(b)])
        .collect();
    assert_eq!(values, want);
}

#[test]
fn a_section_cursor_that_does_not_move_reads_the_same_element() {
    let (values, failed) = read(5, &[5, 5, 5, 5]);
    assert!(!failed);
    assert_eq!(values, vec![vec![Value::Uint(10)]; 4]);
}

#[test]
fn a_section_cursor_walking_backwards_stops_with_an_error() {
    let (values, failed) = read(5, &[6, 6, 6, 6]);
    assert!(failed, "read {values:?}");
    assert!(values.len() <= 1, "{values:?}");
}

#[test]
fn zero_width_repetitions_are_bounded_by_the_stream() {
    // 255 zero-width values from 2 bytes is within the per-byte allowance...
    let (values, failed) = read(2, &[7, 255]);
    assert!(!failed);
    assert_eq!(values[0][1], Value::List(vec![vec![Value::Uint(0)]; 255]));
    // ...but a block may not claim more records than its stream has bytes.
    let (_, failed) = read(u64::MAX, &[4, 4]);
    assert!(failed);
    let (_, failed) = read(1 << 20, &[7, 255]);
    assert!(failed);
}
