//! Events per second for the allocation formats that `alloc_records.rs` does not cover:
//! wee_alloc logs and malloc-bench `.trace.gz` files. For each, the text (or archive) read
//! into typed events (`AllocEvent`), and the whole encode and decode on one thread (these
//! formats store their records with the context-mixing coder, whose decoder writes the text
//! straight out, so there is no separate typed-record stage to time).
//!
//! `cargo bench -p hatf --bench other_formats -- --warm-up-time 1 --measurement-time 3`
//!
//! The inputs are corpus files (`malloc/wee_alloc/dogfood.trace`,
//! `malloc/malloc-bench/traces/grep.trace.gz`); each is skipped, with a message, when
//! `../shared/corpus` is absent.

use std::hint::black_box;
use std::io::Read;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hatf::alloc::{malloc_bench, wee_alloc, AllocEvent};
use hatf::format::{DecodeOptions, EncodeOptions, FormatError, TraceFormat};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

/// Benchmarks one format on the corpus file `path` (relative to the corpus).
fn bench_format(
    c: &mut Criterion,
    group: &str,
    path: &str,
    format: &dyn TraceFormat,
    events: fn(&mut dyn Read, &str) -> Result<Vec<AllocEvent>, FormatError>,
) {
    let full = format!("{CORPUS}/{path}");
    let Ok(input) = std::fs::read(&full) else {
        eprintln!("other_formats: {full} not found (../shared/corpus absent); skipping {group}");
        return;
    };
    let count = events(&mut &input[..], path).expect("reads").len() as u64;
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(count));
    g.bench_function("input to AllocEvent", |b| {
        b.iter(|| {
            events(&mut black_box(&input[..]), path)
                .expect("reads")
                .len()
        })
    });
    let encode_options = EncodeOptions {
        threads: 1,
        ..EncodeOptions::default()
    };
    let encode = || {
        let mut out = Vec::new();
        format
            .encode(&mut &input[..], &mut out, &encode_options)
            .expect("encodes");
        out
    };
    g.bench_function("input to container", |b| b.iter(|| encode().len()));
    let container = encode();
    let decode_options = DecodeOptions {
        threads: 1,
        ..DecodeOptions::default()
    };
    let decode = || {
        let mut out = Vec::with_capacity(input.len());
        format
            .decode(&mut &container[..], &mut out, &decode_options)
            .expect("decodes");
        out
    };
    assert!(decode() == input, "{path}: the round trip is lossless");
    g.bench_function("container to input", |b| b.iter(|| decode().len()));
    g.finish();
}

fn formats(c: &mut Criterion) {
    bench_format(
        c,
        "wee_alloc dogfood",
        "malloc/wee_alloc/dogfood.trace",
        &wee_alloc::WeeAlloc,
        wee_alloc::read_events,
    );
    bench_format(
        c,
        "malloc-bench grep",
        "malloc/malloc-bench/traces/grep.trace.gz",
        &malloc_bench::MallocBench,
        malloc_bench::read_events,
    );
}

criterion_group!(benches, formats);
criterion_main!(benches);
