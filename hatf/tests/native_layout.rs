//! HATF 1.0 native: byte layouts from Appendix A and the decisions in docs/FORMAT.md §3.

use hatf::internal::formats::native::{
    DataRecord, Field, Interpretation, Metadata, NativeReader, NativeWriter, Record, RecordKind,
    Width,
};

fn write(records: &[Record]) -> Vec<u8> {
    let mut w = NativeWriter::new(Vec::new());
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap().0
}

fn read(bytes: &[u8]) -> Vec<Record> {
    NativeReader::new(bytes)
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn alloc(size: u64, address: u64) -> DataRecord {
    let mut r = DataRecord::new(RecordKind::Alloc);
    r.size = size;
    r.address = address;
    r
}

#[test]
fn default_configuration_alloc_is_tag_size4_address4() {
    let bytes = write(&[Record::Data(alloc(0x10, 0x0804_a008))]);
    assert_eq!(bytes, [0, 0, 0, 0, 0x10, 0x08, 0x04, 0xa0, 0x08]);
}

#[test]
fn free_is_tag_then_address() {
    let mut r = DataRecord::new(RecordKind::Free);
    r.address = 0x1234;
    assert_eq!(write(&[Record::Data(r)]), [1, 0, 0, 0x12, 0x34]);
}

#[test]
fn realloc_lays_out_size_old_new() {
    let mut r = DataRecord::new(RecordKind::ReallocAllocFree);
    r.size = 3;
    r.old_address = 0x10;
    r.address = 0x20;
    assert_eq!(
        write(&[Record::Data(r)]),
        [3, 0, 0, 0, 3, 0, 0, 0, 0x10, 0, 0, 0, 0x20]
    );
}

#[test]
fn metadata_records_have_tag_11_and_documented_lengths() {
    let metas = [
        Metadata::SetSize(Field::Size, Width::Fixed(1)),
        Metadata::SetInterpretation(Field::Time, Interpretation::None),
        Metadata::SetInterpretation(Field::Thread, Interpretation::Default(7)),
        Metadata::SetInterpretation(Field::Heap, Interpretation::BaseOffset(0x100)),
        Metadata::SetInterpretation(Field::Address, Interpretation::Delta(5)),
        Metadata::SetInterpretation(
            Field::Address,
            Interpretation::Stride {
                initial: 1,
                stride: u64::MAX,
            },
        ),
        Metadata::SetInterpretation(Field::Attributes, Interpretation::None),
        Metadata::SetSize(Field::Attributes, Width::V2),
    ];
    let records: Vec<Record> = metas.iter().map(|m| Record::Metadata(*m)).collect();
    let bytes = write(&records);
    let mut expected = vec![11, 1, 0, 1];
    expected.extend([11, 2, 2, 0]);
    expected.extend([11, 2, 3, 1, 0, 0, 0, 0, 0, 0, 0, 7]);
    expected.extend([11, 2, 4, 2, 0, 0, 0, 0, 0, 0, 1, 0]);
    expected.extend([11, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0, 5]);
    expected.extend([11, 2, 1, 4, 0, 0, 0, 0, 0, 0, 0, 1]);
    expected.extend([0xff; 8]);
    expected.extend([11, 2, 5, 0]);
    expected.extend([11, 1, 5, 10]);
    assert_eq!(bytes, expected);
    assert_eq!(read(&bytes), records);
}

#[test]
fn comment_has_reserved_zero_byte_and_big_endian_length() {
    let bytes = write(&[Record::Comment(b"hi".to_vec())]);
    assert_eq!(bytes, [10, 0, 0, 2, b'h', b'i']);
    assert_eq!(read(&bytes), [Record::Comment(b"hi".to_vec())]);
}

#[test]
fn too_large_value_widens_with_metadata_instead_of_truncating() {
    let bytes = write(&[Record::Data(alloc(0x1_0000_0000, 8))]);
    // set fieldSize size 8, then the record with an 8-byte size.
    assert_eq!(&bytes[..4], [11, 1, 0, 8]);
    assert_eq!(bytes[4], 0);
    assert_eq!(&bytes[5..13], 0x1_0000_0000u64.to_be_bytes());
    let back = read(&bytes);
    assert_eq!(back[1], Record::Data(alloc(0x1_0000_0000, 8)));
}

#[test]
fn thread_value_leaves_default_with_interpretation_none() {
    let mut r = alloc(1, 2);
    r.thread = 300;
    let bytes = write(&[Record::Data(r.clone())]);
    // none restores the last non-zero width (4 at start): 4 bytes are enough for 300.
    assert_eq!(&bytes[..4], [11, 2, 3, 0]);
    assert_eq!(read(&bytes)[1], Record::Data(r));
}

#[test]
fn signed_base_offset_and_delta_round_trip_and_widen() {
    let records = vec![
        Record::Metadata(Metadata::SetInterpretation(
            Field::Address,
            Interpretation::BaseOffset(1000),
        )),
        Record::Metadata(Metadata::SetSize(Field::Address, Width::Fixed(1))),
        Record::Data(alloc(1, 1000 - 128)),
        Record::Data(alloc(1, 1000 + 127)),
        Record::Data(alloc(1, 1000 + 128)),
        Record::Metadata(Metadata::SetInterpretation(
            Field::Size,
            Interpretation::Delta(10),
        )),
        Record::Data(alloc(9, 1000)),
        Record::Data(alloc(0, 1000)),
        Record::Data(alloc(u64::MAX, 1000)),
    ];
    let bytes = write(&records);
    // 1000-128 is stored as 0x80 in one byte.
    assert_eq!(&bytes[16..22], [0, 0, 0, 0, 1, 0x80]);
    let back = read(&bytes);
    let data: Vec<&DataRecord> = back
        .iter()
        .filter_map(|r| match r {
            Record::Data(d) => Some(d),
            _ => None,
        })
        .collect();
    let sizes: Vec<u64> = data.iter().map(|d| d.size).collect();
    let addrs: Vec<u64> = data.iter().map(|d| d.address).collect();
    assert_eq!(sizes, [1, 1, 1, 9, 0, u64::MAX]);
    assert_eq!(addrs, [872, 1127, 1128, 1000, 1000, 1000]);
    // 1000+128 did not fit one signed byte: a set fieldSize address 2 precedes it.
    assert!(back.contains(&Record::Metadata(Metadata::SetSize(
        Field::Address,
        Width::Fixed(2)
    ))));
}

#[test]
fn stride_first_value_is_initial_plus_stride() {
    let records = vec![
        Record::Metadata(Metadata::SetInterpretation(
            Field::Address,
            Interpretation::Stride {
                initial: 100,
                stride: 16,
            },
        )),
        Record::Data(alloc(1, 116)),
        Record::Data(alloc(1, 132)),
    ];
    let bytes = write(&records);
    assert_eq!(&bytes[20..], [0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
    assert_eq!(read(&bytes), records);
}

#[test]
fn none_restores_last_nonzero_width() {
    let records = vec![
        Record::Metadata(Metadata::SetSize(Field::Size, Width::Fixed(2))),
        Record::Metadata(Metadata::SetInterpretation(
            Field::Size,
            Interpretation::Default(5),
        )),
        Record::Data(alloc(5, 1)),
        Record::Metadata(Metadata::SetInterpretation(
            Field::Size,
            Interpretation::None,
        )),
        Record::Data(alloc(6, 1)),
    ];
    let bytes = write(&records);
    // default: no size bytes; after none: 2 size bytes.
    assert_eq!(&bytes[16..21], [0, 0, 0, 0, 1]);
    assert_eq!(&bytes[25..32], [0, 0, 6, 0, 0, 0, 1]);
    assert_eq!(read(&bytes), records);
}

#[test]
fn attributes_v1_v2_and_default_bytes() {
    let mut a = alloc(1, 2);
    a.attributes = vec![1, 2, 3];
    let mut b = alloc(1, 2);
    b.attributes = vec![7; 300];
    let mut c = alloc(1, 2);
    c.attributes = vec![0x12, 0x34];
    let records = vec![
        Record::Data(a.clone()),
        Record::Data(b.clone()),
        Record::Data(c.clone()),
        Record::Data(alloc(1, 2)),
    ];
    let bytes = write(&records);
    let data: Vec<Record> = read(&bytes)
        .into_iter()
        .filter(|r| matches!(r, Record::Data(_)))
        .collect();
    assert_eq!(data, records);
    // a: none (restores v1) then a 1-byte length.
    assert_eq!(&bytes[..4], [11, 2, 5, 0]);
    assert_eq!(&bytes[4..17], [0, 0, 0, 0, 1, 0, 0, 0, 2, 3, 1, 2, 3]);
}
