//! Hostile containers: headers, block descriptors and records that claim huge lengths or
//! counts. Reading must stop with an error (or read what is there) and allocate no more than
//! the file justifies. The inputs are built through the library API and damaged at every byte,
//! so no container byte offset is hard-coded.

mod hostile_support;

use hostile_support::counting_alloc::{measure, Counting};
use metatf::container::{Codec, ContainerHeader, ContainerWriter, SectionData};
use metatf::{DynRecord, UniversalReader, UniversalWriter, Value};

#[global_allocator]
static ALLOC: Counting = Counting;

/// What reading any file of `len` bytes may hold at once: a fixed allowance for the codecs'
/// contexts and the schema, plus a small multiple of the file (decoded records repeat values).
fn justified(len: usize) -> usize {
    (4 << 20) + 64 * len
}

const DTD: &str = "tag.width = 1;
size.width = 1; size.interpretation = delta 0;
address.interpretation = sectionStride 5 1;
n.width = 1; n.interpretation = none;
section heap 1 {
    alloc : (tag, size, address, vfield) { tag.value = 4; }
    list : (tag, n * (size)) { tag.value = 5; }
    blob : (tag, len, data) {
        tag.value = 6; len.width = 8; len.interpretation = none;
        data.width = len.value; data.interpretation = none;
    }
}
section addresses 5 { }
";

fn header() -> ContainerHeader {
    ContainerHeader {
        dtd: DTD.into(),
        format: "hostile".into(),
        properties: vec![],
    }
}

fn record(name: &str, tag: u64, fields: Vec<Value>) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields,
    }
}

/// A small trace of every record kind, in blocks of three records, and how many records the
/// writer wrote (its own metadata records included).
fn trace(codec: Codec) -> (Vec<u8>, usize) {
    let schema = metatf::dtd::parse_schema(DTD, "h.dtd").unwrap_or_else(|d| panic!("{d}"));
    let mut w = UniversalWriter::new(Vec::new(), schema, &header(), codec, 1).unwrap();
    w.set_block_records(3);
    w.write(&record("section", 2, vec![Value::Uint(1)]))
        .unwrap();
    for i in 0..6u64 {
        let bytes = vec![i as u8; i as usize];
        let fields = vec![
            Value::Uint(i * 300),
            Value::Uint(0x1000 + i),
            Value::Uint(i),
            Value::Bytes(bytes),
        ];
        w.write(&record("alloc", 4, fields)).unwrap();
        let items = (0..i).map(|k| vec![Value::Uint(k)]).collect();
        w.write(&record("list", 5, vec![Value::Uint(i), Value::List(items)]))
            .unwrap();
    }
    let written = w.records_written() as usize;
    (w.finish().unwrap(), written)
}

/// Reads every record, stopping at the first error; returns how many were read.
fn read_all(bytes: &[u8]) -> usize {
    let Ok(mut r) = UniversalReader::new(bytes) else {
        return 0;
    };
    let mut n = 0;
    while let Ok(Some(_)) = r.next_record() {
        n += 1;
    }
    n
}

/// Every byte set to values that make any length, count or varint field huge.
#[test]
fn huge_values_at_any_byte_allocate_only_what_the_file_justifies() {
    for codec in [Codec::None, Codec::Zstd] {
        let (bytes, written) = trace(codec);
        // The counter sees the reader's work: the intact trace reads all its records.
        let (n, usage) = measure(|| read_all(&bytes));
        assert_eq!(n, written, "{codec:?}");
        assert!(usage.calls > 0 && usage.peak > 0);
        for at in 0..bytes.len() {
            for huge in [0xff, 0x7f, 0x80] {
                let mut damaged = bytes.clone();
                damaged[at] = huge;
                let (_, usage) = measure(|| read_all(&damaged));
                assert!(
                    usage.peak <= justified(damaged.len()),
                    "{codec:?}: byte {at} set to {huge:#x}: {} bytes live at once for a {}-byte file",
                    usage.peak,
                    damaged.len()
                );
            }
        }
    }
}

/// Well-framed blocks whose record stream claims byte strings, repeat counts and record counts
/// far beyond the stream: an error, with allocation bounded by the file.
#[test]
fn record_claims_beyond_the_stream_are_errors_with_bounded_allocation() {
    let claims: [(u64, Vec<u8>); 4] = [
        // blob whose 8-byte length claims 2^64-1 bytes.
        (
            1,
            vec![6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2],
        ),
        // list with n = 255 elements but only two bytes after it.
        (1, vec![5, 0xff, 1, 2]),
        // a block claiming a billion records in a 2-byte stream.
        (1 << 30, vec![4, 1]),
        // a block claiming u64::MAX records.
        (u64::MAX, vec![5, 0]),
    ];
    for (count, stream) in claims {
        let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
        let mut with_section = vec![2, 1];
        with_section.extend_from_slice(&stream);
        let sections = [SectionData {
            number: 0,
            element_width: 0,
            codec: Codec::None,
            level: 0,
            bytes: &with_section,
        }];
        if w.write_block(count, &sections).is_err() {
            continue; // the writer itself refuses the claim
        }
        let bytes = w.finish().unwrap();
        let (result, usage) = measure(|| {
            let mut r = UniversalReader::new(&bytes[..]).unwrap();
            let mut n = 0u64;
            loop {
                match r.next_record() {
                    Ok(Some(_)) => n += 1,
                    Ok(None) => return Ok(n),
                    Err(e) => return Err(e),
                }
            }
        });
        assert!(
            result.is_err(),
            "claim of {count} records in {stream:?} read as {result:?}"
        );
        assert!(
            usage.peak <= justified(bytes.len()),
            "claim in {stream:?}: {} bytes live at once for a {}-byte file",
            usage.peak,
            bytes.len()
        );
    }
}
