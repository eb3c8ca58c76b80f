//! Records per second for Elephant Tracks traces, per stage: text → typed records (`Record`),
//! records → the model's streams and back (the library's decode into typed records, with the
//! streams packed as in a file), and the whole text → container → text path on one thread.
//!
//! `cargo bench -p hatf --bench et_records -- --warm-up-time 1 --measurement-time 3`
//!
//! The input is one block (2^19 lines) of the corpus trace `et/et3-large/javac-tests/trace.zst`
//! (ET3); the bench is skipped, with a message, when `shared/corpus` is absent.

use std::hint::black_box;
use std::io::{BufRead, BufReader};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hatf::internal::formats::et::encode::BLOCK_LINES;
use hatf::internal::formats::et::line::{LineReader, Record};
use hatf::internal::formats::et::model::{Model, RecordSink, UOrder};
use hatf::internal::formats::et::sections::streams::{id, Packer, StreamReader, StreamWriter};
use hatf::internal::formats::et::ET3;

mod support;

/// The corpus trace read, within [`support::corpus`].
const TRACE: &str = "et/et3-large/javac-tests/trace.zst";

/// The first `lines` lines of the corpus trace, or `None` when the corpus is absent.
fn first_lines(lines: usize) -> Option<Vec<u8>> {
    let file = std::fs::File::open(format!("{}/{TRACE}", support::corpus())).ok()?;
    let mut text = zstd::stream::read::Decoder::new(file)
        .map(BufReader::new)
        .ok()?;
    let mut out = Vec::new();
    for _ in 0..lines {
        if text.read_until(b'\n', &mut out).ok()? == 0 {
            break;
        }
    }
    Some(out)
}

/// Every line of `text` as a record (every line of the input is a canonical record).
fn records(text: &[u8]) -> Vec<Record> {
    let mut reader = LineReader::default();
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let (r, end) = reader
            .read(text, start)
            .expect("every line of the input is a canonical record");
        out.push(r);
        start = end + 1;
    }
    out
}

/// The block's packed streams, as the encoder stores them (zstd level 3).
fn packed_streams(records: &[Record]) -> Vec<u8> {
    let mut model = Model::new(UOrder::HolderValueField);
    let mut w = StreamWriter::with_lines(records.len());
    for r in records {
        model.encode(r, &mut w);
    }
    Packer::default().pack(&w, 3).expect("packs")
}

/// Reads every line of `text` as a record, keeping only a checksum of the fields (a vector of
/// them would measure the allocator and page faults instead).
fn parse_sum(text: &[u8]) -> u64 {
    let mut reader = LineReader::default();
    let mut sum = 0u64;
    let mut start = 0;
    while start < text.len() {
        let (r, end) = reader
            .read(text, start)
            .expect("every line of the input is a canonical record");
        sum = r.fields().iter().fold(sum, |s, &f| s.wrapping_add(f));
        start = end + 1;
    }
    sum
}

/// A sink that keeps a checksum of what it is given, so that nothing is optimised away.
#[derive(Default)]
struct Sum(u64);

impl RecordSink for Sum {
    fn record(&mut self, r: &Record) {
        self.0 = r.fields().iter().fold(self.0, |s, &f| s.wrapping_add(f));
    }

    fn text(&mut self, bytes: &[u8], _newline: bool) {
        self.0 = self.0.wrapping_add(bytes.len() as u64);
    }
}

/// Decodes `count` records from `packed` into typed records: unpacking included.
fn decode_records(packed: &[u8], count: usize) -> u64 {
    let mut streams = StreamReader::unpack(packed).expect("unpacks");
    let mut model = Model::for_decoding(UOrder::HolderValueField, count as u64);
    let mut sum = Sum::default();
    for _ in 0..count {
        let c = streams.byte(id::KIND);
        model.decode(c, &mut streams, &mut sum);
    }
    assert!(streams.take_failure().is_none(), "the streams decode");
    sum.0
}

fn et3_bench(c: &mut Criterion) {
    let Some(text) = first_lines(BLOCK_LINES) else {
        eprintln!("et_records: {TRACE} not found (shared/corpus absent); skipping");
        return;
    };
    let records = records(&text);
    let mut g = c.benchmark_group("et3 javac-tests block");
    g.throughput(Throughput::Elements(records.len() as u64));
    g.bench_function("text to Record", |b| b.iter(|| parse_sum(black_box(&text))));
    g.bench_function("Record to packed streams", |b| {
        b.iter(|| packed_streams(black_box(&records)).len())
    });
    let packed = packed_streams(&records);
    let expected = parse_sum(&text);
    assert_eq!(
        decode_records(&packed, records.len()),
        expected,
        "the model gives the records back"
    );
    g.bench_function("packed streams to Record", |b| {
        b.iter(|| decode_records(black_box(&packed), records.len()))
    });
    support::container_round_trip(&mut g, &ET3, &text, "text", "javac-tests block");
    g.finish();
}

criterion_group!(benches, et3_bench);
criterion_main!(benches);
