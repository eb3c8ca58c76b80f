//! Records per second for the formats that `alloc_records.rs` and `et_records.rs` do not
//! cover: wee_alloc logs and malloc-bench `.trace.gz` files (the text, or archive, read into
//! typed events, `AllocEvent`, and the whole encode and decode on one thread: these formats
//! store their records with the context-mixing coder, whose decoder writes the text straight
//! out, so there is no separate typed-record stage to time), and JVM traces (lines parsed into
//! typed `Record`s, and the whole encode and decode).
//!
//! `cargo bench -p hatf --bench other_formats -- --warm-up-time 1 --measurement-time 3`
//!
//! The inputs are corpus files (`malloc/wee_alloc/dogfood.trace`,
//! `malloc/malloc-bench/traces/grep.trace.gz`; each is skipped, with a message, when
//! `shared/corpus` is absent) and, for JVM, of which no real trace is public, the tests'
//! generator (100,000 steps on 4 threads).

use std::hint::black_box;
use std::io::Read;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hatf::format::{FormatError, TraceFormat};
use hatf::internal::formats::jvm::{line, JVM};
use hatf::internal::formats::{malloc_bench, wee_alloc};
use hatf::internal::shared::allocation::AllocEvent;

#[path = "../tests/jvm_support/mod.rs"]
mod jvm_support;
mod support;

/// Benchmarks one format on the corpus file `path` (relative to the corpus).
fn bench_format(
    c: &mut Criterion,
    group: &str,
    path: &str,
    format: &dyn TraceFormat,
    events: fn(&mut dyn Read, &str) -> Result<Vec<AllocEvent>, FormatError>,
) {
    let full = format!("{}/{path}", support::corpus());
    let Ok(input) = std::fs::read(&full) else {
        eprintln!("other_formats: {full} not found (shared/corpus absent); skipping {group}");
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
    support::container_round_trip(&mut g, format, &input, "input", path);
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

/// Parses every line of a JVM trace, keeping a checksum of the records' kinds and fields.
fn jvm_parse(text: &[u8]) -> usize {
    let mut sum = 0usize;
    for l in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if let Ok(line::Parsed::Canonical(r) | line::Parsed::Spelled(r)) = line::parse(l) {
            sum = sum
                .wrapping_add(r.time as usize)
                .wrapping_add(r.object as usize)
                .wrapping_add(r.class.len() + r.method.len());
        }
    }
    sum
}

fn jvm(c: &mut Criterion) {
    let (text, _) = jvm_support::trace(31, 100_000, 4, jvm_support::Ends::Lf);
    let text = text.into_bytes();
    let lines = text.iter().filter(|&&b| b == b'\n').count() as u64;
    let mut g = c.benchmark_group("jvm generated");
    g.throughput(Throughput::Elements(lines));
    g.bench_function("text to Record", |b| b.iter(|| jvm_parse(black_box(&text))));
    support::container_round_trip(&mut g, &JVM, &text, "text", "the generated JVM trace");
    g.finish();
}

criterion_group!(benches, formats, jvm);
criterion_main!(benches);
