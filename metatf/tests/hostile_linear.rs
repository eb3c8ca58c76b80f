//! Reading time is linear in the file size, measured as work rather than wall-clock time (which
//! flakes on a loaded machine): for n and 4n records the reader's allocation calls grow at most 5
//! times and its allocated bytes 8 times (a quadratic reader would grow 16 times), and it reads
//! each input byte once.

mod hostile_support;

use std::io::Read;

use hostile_support::counting_alloc::{measure, Counting, Usage};
use metatf::container::{Codec, ContainerHeader};
use metatf::{DynRecord, UniversalReader, UniversalWriter, Value};

#[global_allocator]
static ALLOC: Counting = Counting;

const DTD: &str = "tag.width = 1;
size.width = 2; size.interpretation = delta 0;
address.width = 4; address.interpretation = sectionOffset 5;
section heap 1 { alloc : (tag, size, address, vfield) { tag.value = 4; } }
section addresses 5 { }
";

fn trace(n: u64) -> Vec<u8> {
    let schema = metatf::dtd::parse_schema(DTD, "l.dtd").unwrap_or_else(|d| panic!("{d}"));
    let header = ContainerHeader {
        dtd: DTD.into(),
        format: "linear".into(),
        properties: vec![],
    };
    let mut w = UniversalWriter::new(Vec::new(), schema, &header, Codec::Zstd, 1).unwrap();
    let rec = |name: &str, tag, fields| DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields,
    };
    w.write(&rec("section", 2, vec![Value::Uint(1)])).unwrap();
    for i in 0..n {
        let fields = vec![
            Value::Uint(i % 300),
            Value::Uint(0x1000 + (i * 7919) % 5000),
            Value::Uint(i % 3),
            Value::Bytes(vec![i as u8; (i % 3) as usize]),
        ];
        w.write(&rec("alloc", 4, fields)).unwrap();
    }
    w.finish().unwrap()
}

/// A reader that counts the bytes taken from it.
struct Counted<'a>(&'a [u8], u64);

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        self.1 += n as u64;
        Ok(n)
    }
}

/// Reads every record; returns the records, the bytes read and the allocation work.
fn read(bytes: &[u8]) -> (u64, u64, Usage) {
    let mut input = Counted(bytes, 0);
    let (records, usage) = measure(|| {
        let mut r = UniversalReader::new(&mut input).unwrap();
        let mut n = 0u64;
        while r.next_record().unwrap().is_some() {
            n += 1;
        }
        n
    });
    (records, input.1, usage)
}

#[test]
fn reading_work_grows_linearly_with_the_file() {
    let (small, large) = (trace(20_000), trace(80_000));
    let (n1, read1, work1) = read(&small);
    let (n4, read4, work4) = read(&large);
    assert_eq!((n1, n4), (20_001, 80_001));
    assert!(
        read1 <= small.len() as u64 && read4 <= large.len() as u64,
        "bytes re-read"
    );
    eprintln!("n: {work1:?}; 4n: {work4:?}");
    // 4x the input: allow 25% more calls (block boundaries), and twice the bytes, as buffers
    // growing by doubling can allocate up to 8x for 4x the data (quadratic would be 16x).
    assert!(work4.calls <= 5 * work1.calls, "{work1:?} → {work4:?}");
    assert!(work4.total <= 8 * work1.total, "{work1:?} → {work4:?}");
}
