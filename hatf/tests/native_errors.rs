//! HATF 1.0 native reader: bad input gives errors with byte offset, record number and field.

use hatf::internal::formats::native::{NativeError, NativeReader, Record};

fn read_err(bytes: &[u8]) -> NativeError {
    let r: Result<Vec<Record>, NativeError> = NativeReader::new(bytes).collect();
    r.expect_err("expected an error")
}

#[test]
fn unknown_tag_names_offset_record_and_field() {
    let e = read_err(&[1, 0, 0, 0, 9, 12]);
    assert_eq!((e.offset, e.record, e.field), (5, 1, Some("tag")));
    assert!(e.message.contains("tag 12"), "{}", e.message);
}

#[test]
fn truncated_record_is_an_error_naming_the_field() {
    let e = read_err(&[0, 0, 0, 0, 1, 0, 0]);
    assert_eq!((e.offset, e.record, e.field), (0, 0, Some("address")));
    assert!(e.message.contains("ends inside"), "{}", e.message);
}

#[test]
fn width_codes_outside_hatf10_are_rejected() {
    for code in [3u8, 5, 6, 7, 11, 255] {
        let e = read_err(&[11, 1, 0, code]);
        assert_eq!(e.field, Some("width"), "code {code}");
    }
}

#[test]
fn v1_width_is_only_for_attributes() {
    let e = read_err(&[11, 1, 0, 9]);
    assert_eq!(e.field, Some("size"));
    assert!(e.message.contains("only for attributes"), "{}", e.message);
}

#[test]
fn nonzero_width_under_default_is_rejected() {
    // time is `default 0` by default.
    let e = read_err(&[11, 1, 2, 4]);
    assert_eq!(e.field, Some("time"));
}

#[test]
fn attributes_accept_only_none_and_default() {
    let e = read_err(&[11, 2, 5, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(e.field, Some("attributes"));
}

#[test]
fn bad_field_op_and_interpretation_codes() {
    assert_eq!(read_err(&[11, 1, 6, 1]).field, Some("field"));
    assert_eq!(read_err(&[11, 3, 0, 1]).field, Some("op"));
    assert_eq!(read_err(&[11, 2, 0, 5]).field, Some("interpretation"));
}

/// The interpretation type is Meta-TF's, which has two more (section offset and stride) than
/// HATF 1.0 has codes for: neither the state nor the writer may take them.
#[test]
fn section_interpretations_are_not_hatf10() {
    use hatf::internal::formats::native::{Config, Field, Interpretation, Metadata, NativeWriter};
    for interp in [
        Interpretation::SectionOffset(1),
        Interpretation::SectionStride {
            section: 1,
            stride: 1,
        },
    ] {
        let meta = Metadata::SetInterpretation(Field::Address, interp);
        let m = Config::default().apply(&meta).expect_err("applied");
        assert!(m.contains("not HATF 1.0"), "{m}");
        let mut out = Vec::new();
        let e = NativeWriter::new(&mut out)
            .write_metadata(&meta)
            .expect_err("written");
        assert!(e.message.contains("not HATF 1.0"), "{}", e.message);
        assert!(out.is_empty(), "nothing is written for a refused record");
    }
}

#[test]
fn comment_reserved_byte_must_be_zero() {
    let e = read_err(&[10, 1, 0, 0]);
    assert_eq!(e.field, Some("reserved"));
}

#[test]
fn reader_stops_after_the_first_error() {
    let mut r = NativeReader::new(&[12u8, 0, 0, 0][..]);
    assert!(r.next().unwrap().is_err());
    assert!(r.next().is_none());
}

#[test]
fn every_prefix_of_a_valid_stream_either_reads_or_errors() {
    let mut bytes = vec![11, 2, 1, 4];
    bytes.extend(1u64.to_be_bytes());
    bytes.extend(2u64.to_be_bytes());
    bytes.extend([0, 0, 0, 0, 1, 10, 0, 0, 3, b'a', b'b', b'c']);
    for n in 0..bytes.len() {
        let _ = NativeReader::new(&bytes[..n]).collect::<Result<Vec<_>, _>>();
    }
    let full: Vec<Record> = NativeReader::new(&bytes[..])
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(full.len(), 3);
}
