//! Records per second read and written by the generated (typed) codec and by the universal
//! codec, on the same HATF-like trace, without compression so that record coding is measured.
//!
//! `cargo bench -p metatf --bench typed_vs_universal -- --warm-up-time 1 --measurement-time 3`
//!
//! For instruction counts, `METATF_PROFILE=<mode>` runs one operation once instead of the
//! criterion groups, so that `valgrind --tool=callgrind` can count it: modes `setup` (building
//! the inputs only), `write-typed`, `write-universal`, `read-typed`, `read-universal`.
//! Instructions per record = (count of the mode − count of `setup`) / 100 000.

use criterion::{black_box, criterion_group, Criterion, Throughput};
use metatf::typed::{Format, TypedReader, TypedWriter};
use metatf::{Codec, ContainerHeader, DynRecord, MetaTf, UniversalReader, UniversalWriter, Value};

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

const RECORDS: usize = 100_000;

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

fn typed_write(records: &[Heap]) -> Vec<u8> {
    let mut w = TypedWriter::<Heap, _>::new(Vec::new(), Codec::None, 0).expect("writer");
    for r in records {
        w.write(r).expect("write");
    }
    w.finish().expect("finish")
}

fn universal_write(records: &[DynRecord]) -> Vec<u8> {
    let plan = Heap::plan().expect("plan");
    let header = ContainerHeader {
        dtd: plan.dtd().to_string(),
        format: plan.format().to_string(),
        properties: vec![],
    };
    let mut w = UniversalWriter::new(Vec::new(), plan.schema().clone(), &header, Codec::None, 0)
        .expect("writer");
    let section = DynRecord {
        section: None,
        name: "section".into(),
        tag: 2,
        fields: vec![Value::Uint(1)],
    };
    w.write(&section).expect("section");
    for r in records {
        w.write(r).expect("write");
    }
    w.finish().expect("finish")
}

fn bench(c: &mut Criterion) {
    let records = trace();
    let dyns: Vec<DynRecord> = records.iter().map(to_dyn).collect();
    let bytes = typed_write(&records);
    assert_eq!(
        bytes,
        universal_write(&dyns),
        "both codecs write the same bytes"
    );

    let mut g = c.benchmark_group("write");
    g.throughput(Throughput::Elements(RECORDS as u64));
    g.bench_function("typed", |b| b.iter(|| typed_write(black_box(&records))));
    g.bench_function("universal", |b| {
        b.iter(|| universal_write(black_box(&dyns)))
    });
    g.finish();

    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements(RECORDS as u64));
    g.bench_function("typed", |b| {
        b.iter(|| {
            let r = TypedReader::<Heap, _>::new(black_box(&bytes[..])).expect("reader");
            let mut n = 0;
            for x in r {
                black_box(x.expect("record"));
                n += 1;
            }
            n
        })
    });
    g.bench_function("universal", |b| {
        b.iter(|| {
            let mut r = UniversalReader::new(black_box(&bytes[..])).expect("reader");
            std::iter::from_fn(|| r.next_record().expect("record")).count()
        })
    });
    g.finish();
}

/// One operation once, for `valgrind --tool=callgrind` (see the file's documentation).
fn profile(mode: &str) {
    let records = trace();
    let dyns: Vec<DynRecord> = records.iter().map(to_dyn).collect();
    let bytes = typed_write(&records);
    match mode {
        "setup" => {}
        "write-typed" => {
            black_box(typed_write(black_box(&records)));
        }
        "write-universal" => {
            black_box(universal_write(black_box(&dyns)));
        }
        "read-typed" => {
            let r = TypedReader::<Heap, _>::new(black_box(&bytes[..])).expect("reader");
            for x in r {
                black_box(x.expect("record"));
            }
        }
        "read-universal" => {
            let mut r = UniversalReader::new(black_box(&bytes[..])).expect("reader");
            while let Some(x) = r.next_record().expect("record") {
                black_box(x);
            }
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
