//! Records per second read and written by the generated (typed) codec and by the universal
//! codec, without compression so that record coding is measured, on two traces: a HATF-like
//! heap trace (groups `write`, `read`) and an event trace whose fields read value sections
//! (`sectionOffset`, `sectionStride`) and whose values force metadata records part way — a
//! delta outgrowing its width, a `default` field switched to `none` (groups `write-values`,
//! `read-values`).
//!
//! `cargo bench -p metatf --bench typed_vs_universal -- --warm-up-time 1 --measurement-time 3`
//!
//! For instruction counts, `METATF_PROFILE=<mode>` runs one operation once instead of the
//! criterion groups, so that `valgrind --tool=callgrind` can count it: modes `setup` (building
//! the inputs only), `write-typed`, `write-universal`, `read-typed`, `read-universal`, each on
//! the heap trace or, with the suffix `-values` (`write-typed-values`), on the event trace.
//! Instructions per record = (count of the mode − count of `setup`) / 100 000.
//!
//! The groups `model-write-*` and `model-read-*` time both codecs with the model engine on the
//! real foreign traces ([`foreign_traces`]); `METATF_PROFILE=model-write-typed-lackey` (and so
//! on) runs one such operation once, for `perf`, and prints its wall and CPU time.

#[path = "foreign_traces/mod.rs"]
mod foreign_traces;

use criterion::{black_box, criterion_group, Criterion, Throughput};
use metatf::typed::{Format, TypedReader, TypedWriter};
use metatf::{Codec, DynRecord, MetaTf, UniversalReader, UniversalWriter, Value};

#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(tag = 4)]
struct Alloc {
    size: u32,
    #[metatf(delta = 0, width = 2)]
    address: u64,
    #[metatf(default = 0)]
    thread: u64,
    data: Vec<u8>,
}

#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(tag = 6)]
struct Free {
    #[metatf(delta = 0, width = 2)]
    address: u64,
    #[metatf(default = 0)]
    thread: u64,
    data: Vec<u8>,
}

#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(section = 1, name = "heap")]
enum Heap {
    Alloc(Alloc),
    Free(Free),
}

/// A call: its time (delta), its site (an offset into value section 5, whose elements are the
/// distinct sites), its argument (the next element of value section 6) and its thread
/// (`default 0` until the trace's first other thread).
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(tag = 4)]
struct Call {
    #[metatf(delta = 0, width = 2)]
    time: u64,
    #[metatf(section_offset = 5, width = 1)]
    site: u64,
    #[metatf(section_stride(6, 1))]
    arg: u64,
    #[metatf(default = 0)]
    thread: u64,
}

/// A return: its time, its site and its 4-byte result.
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(tag = 6)]
struct Ret {
    #[metatf(delta = 0, width = 2)]
    time: u64,
    #[metatf(section_offset = 5, width = 1)]
    site: u64,
    result: u32,
}

#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(section = 1, name = "events")]
enum Events {
    Call(Call),
    Ret(Ret),
}

const RECORDS: usize = 100_000;

/// Sites: more than 256, so the `site` offsets outgrow one byte part way through a block.
const SITES: u64 = 300;

fn events() -> Vec<Events> {
    let mut out = Vec::with_capacity(RECORDS);
    let mut time = 0u64;
    for i in 0..RECORDS as u64 {
        // Mostly small steps; every 5000th a jump wider than two bytes.
        time += if i % 5000 == 4999 {
            1 << 20
        } else {
            3 + i % 17
        };
        let site = 0x40_0000 + (i * 7919 % SITES) * 16;
        if i % 2 == 1 {
            out.push(Events::Ret(Ret {
                time,
                site,
                result: (i % 1000) as u32,
            }));
        } else {
            out.push(Events::Call(Call {
                time,
                site,
                arg: i * 31 % 4096,
                // A second thread appears a tenth of the way in: `thread` becomes `none`.
                thread: if i >= RECORDS as u64 / 10 {
                    i % 2 + i % 4
                } else {
                    0
                },
            }));
        }
    }
    out
}

fn events_to_dyn(r: &Events) -> DynRecord {
    let (name, tag, fields) = match r {
        Events::Call(c) => (
            "call",
            4,
            vec![
                Value::Uint(c.time),
                Value::Uint(c.site),
                Value::Uint(c.arg),
                Value::Uint(c.thread),
            ],
        ),
        Events::Ret(r) => (
            "ret",
            6,
            vec![
                Value::Uint(r.time),
                Value::Uint(r.site),
                Value::Uint(u64::from(r.result)),
            ],
        ),
    };
    DynRecord {
        section: Some(1),
        name: name.into(),
        tag,
        fields,
    }
}

fn trace() -> Vec<Heap> {
    let mut out = Vec::with_capacity(RECORDS);
    let mut address = 0x1000_0000u64;
    for i in 0..RECORDS as u64 {
        let size = 16 + (i * 7919 % 512) as u32;
        if i % 3 == 2 {
            out.push(Heap::Free(Free {
                address: address - 64,
                thread: 0,
                data: vec![],
            }));
        } else {
            address += u64::from(size);
            out.push(Heap::Alloc(Alloc {
                size,
                address,
                thread: 0,
                data: vec![],
            }));
        }
    }
    out
}

fn to_dyn(r: &Heap) -> DynRecord {
    let (name, tag, fields) = match r {
        Heap::Alloc(a) => (
            "alloc",
            4,
            vec![
                Value::Uint(u64::from(a.size)),
                Value::Uint(a.address),
                Value::Uint(a.thread),
                Value::Uint(a.data.len() as u64),
                Value::Bytes(a.data.clone()),
            ],
        ),
        Heap::Free(f) => (
            "free",
            6,
            vec![
                Value::Uint(f.address),
                Value::Uint(f.thread),
                Value::Uint(f.data.len() as u64),
                Value::Bytes(f.data.clone()),
            ],
        ),
    };
    DynRecord {
        section: Some(1),
        name: name.into(),
        tag,
        fields,
    }
}

fn typed_write<F: Format>(records: &[F]) -> Vec<u8> {
    let mut w = TypedWriter::<F, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    for r in records {
        w.write(r).expect("write");
    }
    w.finish().expect("finish")
}

/// Writes `records` with the universal writer, which writes the format's section record.
fn universal_write<F: Format>(records: &[DynRecord]) -> Vec<u8> {
    let mut w = UniversalWriter::for_format::<F>(Vec::new(), Codec::None, 0).expect("writer");
    for r in records {
        w.write(r).expect("write");
    }
    w.finish().expect("finish")
}

fn typed_read<F: Format>(bytes: &[u8]) -> usize {
    let r = TypedReader::<F, _>::new(black_box(bytes)).expect("reader");
    let mut n = 0;
    for x in r {
        black_box(x.expect("record"));
        n += 1;
    }
    n
}

fn universal_read(bytes: &[u8]) -> usize {
    let mut r = UniversalReader::new(black_box(bytes)).expect("reader");
    // One record refilled for each, as a reader of a long trace would read it.
    let mut rec = DynRecord::default();
    let mut n = 0;
    while r.read_record(&mut rec).expect("record") {
        black_box(&rec);
        n += 1;
    }
    n
}

/// The `write{suffix}` and `read{suffix}` groups for one format, after checking that both
/// codecs write the same bytes and that the typed reader gives the records back.
fn groups<F: Format + PartialEq + std::fmt::Debug>(
    c: &mut Criterion,
    suffix: &str,
    records: &[F],
    to_dyn: fn(&F) -> DynRecord,
) {
    let dyns: Vec<DynRecord> = records.iter().map(to_dyn).collect();
    let bytes = typed_write(records);
    assert_eq!(
        bytes,
        universal_write::<F>(&dyns),
        "both codecs write the same bytes"
    );
    let back: Vec<F> = TypedReader::<F, _>::new(&bytes[..])
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("read back");
    assert!(back == records, "the typed reader gives the records back");

    let mut g = c.benchmark_group(format!("write{suffix}"));
    g.throughput(Throughput::Elements(RECORDS as u64));
    g.bench_function("typed", |b| b.iter(|| typed_write(black_box(records))));
    g.bench_function("universal", |b| {
        b.iter(|| universal_write::<F>(black_box(&dyns)))
    });
    g.finish();

    let mut g = c.benchmark_group(format!("read{suffix}"));
    g.throughput(Throughput::Elements(RECORDS as u64));
    g.bench_function("typed", |b| b.iter(|| typed_read::<F>(&bytes)));
    g.bench_function("universal", |b| b.iter(|| universal_read(&bytes)));
    g.finish();
}

fn bench(c: &mut Criterion) {
    groups(c, "", &trace(), to_dyn);
    groups(c, "-values", &events(), events_to_dyn);
    foreign_traces::bench(c);
}

/// One operation once, for `valgrind --tool=callgrind` (see the file's documentation).
fn profile(mode: &str) {
    if foreign_traces::profile(mode) {
        return;
    }
    match mode.strip_suffix("-values") {
        Some(base) => profile_one(base, &events(), events_to_dyn),
        None => profile_one(mode, &trace(), to_dyn),
    }
}

fn profile_one<F: Format>(mode: &str, records: &[F], to_dyn: fn(&F) -> DynRecord) {
    let dyns: Vec<DynRecord> = records.iter().map(to_dyn).collect();
    let bytes = typed_write(records);
    match mode {
        "setup" => {}
        "write-typed" => {
            black_box(typed_write(black_box(records)));
        }
        "write-universal" => {
            black_box(universal_write::<F>(black_box(&dyns)));
        }
        "read-typed" => {
            black_box(typed_read::<F>(&bytes));
        }
        "read-universal" => {
            black_box(universal_read(&bytes));
        }
        other => panic!("unknown METATF_PROFILE mode {other}"),
    }
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(mode) = std::env::var("METATF_PROFILE") {
        profile(&mode);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
