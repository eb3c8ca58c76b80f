//! Records per second for the allocation formats, per format and per stage:
//! text → typed events (`AllocEvent`), typed model records (`ModelRecord`) → model streams and
//! back (the library's decode into typed records, no compression: one record at a time, and in
//! batches with `State::decode_into` as the text decoders do), the whole text → container
//! → text path (on one thread), and HATF 1.0 native events.
//!
//! `cargo bench -p hatf --bench alloc_records -- --warm-up-time 1 --measurement-time 3`
//!
//! mtrace uses `samples/sample.mtrace` (in the repository); memory_replay uses the first
//! 200,000 lines of the corpus file `malloc/android/systemui.zip` and is skipped, with a
//! message, when `shared/corpus` is absent.

use std::collections::HashMap;
use std::hint::black_box;
use std::io::Read;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use hatf::format::TraceFormat;
use hatf::internal::formats::memory_replay::{self, model::ReplayKinds};
use hatf::internal::formats::mtrace::{self, model::MtraceKinds};
use hatf::internal::formats::native;
use hatf::internal::shared::allocation::AllocEvent;
use hatf::internal::shared::allocation_model::packing::record_shapes::Packer;
use hatf::internal::shared::allocation_model::threads::decode_pipeline;
use hatf::internal::shared::allocation_model::{
    stream, Cursors, KindTable, ModelRecord, State, Streams,
};

mod support;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/sample.mtrace");
const REPLAY_LINES: usize = 200_000;

/// The model records the `mtrace` encoder would give the model for `text` (every line of the
/// sample is canonical, so no verbatim records).
fn mtrace_records(text: &[u8]) -> Vec<ModelRecord> {
    use mtrace::line::{parse, Line, Op};
    let mut sites: HashMap<Option<&[u8]>, u32> = HashMap::new();
    let mut out = Vec::new();
    for l in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let r = match parse(l).expect("sample lines parse") {
            Line::Marker(_) => ModelRecord {
                kind: mtrace::model::START,
                ..ModelRecord::default()
            },
            Line::Op(op) => {
                let next = sites.len() as u32;
                let site = *sites.entry(op.caller).or_insert(next);
                let kind = match op.op {
                    Op::Malloc => mtrace::model::MALLOC,
                    Op::Free => mtrace::model::FREE,
                    Op::ReallocOld => mtrace::model::REALLOC_OLD,
                    Op::ReallocNew => mtrace::model::REALLOC_NEW,
                };
                ModelRecord {
                    kind,
                    site,
                    size: op.size,
                    addr: op.addr,
                    ..ModelRecord::default()
                }
            }
        };
        out.push(r);
    }
    out
}

/// The model records the `memory-replay` encoder would give the model for `text`.
fn replay_records(text: &[u8]) -> Vec<ModelRecord> {
    use memory_replay::line::parse;
    let mut threads: HashMap<u64, u32> = HashMap::new();
    let mut out = Vec::new();
    for l in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let l = parse(l).expect("corpus lines parse");
        let next = threads.len() as u32;
        let site = *threads.entry(l.tid).or_insert(next);
        out.push(memory_replay::model::record_of(&l, site));
    }
    out
}

/// The model's streams for `records`, and their symbols packed into shapes as in files.
fn model_encode<K: KindTable + ?Sized>(kinds: &K, records: &[ModelRecord]) -> (Streams, Packer) {
    // As in files: each block starts a fresh model.
    let mut state = State::for_block();
    let mut streams = Streams::default();
    for r in records {
        state.encode(kinds, r, &mut streams);
    }
    let mut packer = Packer::default();
    packer.pack(kinds, &streams).expect("packs");
    (streams, packer)
}

/// Cursors over the model's streams as a decoder of a file has them: the shapes, and the
/// streams they do not replace (the free stream holding only the large values).
fn shaped_cursors<'a>((streams, packer): &'a (Streams, Packer)) -> Cursors<'a> {
    let mut sections: [&[u8]; stream::COUNT] = std::array::from_fn(|i| streams.bytes[i].as_slice());
    for n in [stream::KIND, stream::SITE, stream::SIZE, stream::ADDR] {
        sections[n as usize] = &[];
    }
    sections[stream::FREE as usize] = &packer.free_rest;
    Cursors::shaped(sections, &packer.ids, &packer.table)
}

/// Decodes every record of `packed` (read from its shapes, as from a file) into typed model
/// records; returns how many and a checksum
/// so the work cannot be optimised away.
fn model_decode<K: KindTable + ?Sized>(kinds: &K, packed: &(Streams, Packer)) -> (u64, u64) {
    let mut c = shaped_cursors(packed);
    // What a decoder of the files the encoders write uses (live blocks by rank only).
    let mut state = State::for_decoding();
    let (mut n, mut sum) = (0u64, 0u64);
    while let Some(kind) = c.next_kind(kinds) {
        let r = state
            .decode(kinds, kind.expect("kind"), &mut c)
            .expect("decodes");
        n += 1;
        sum = sum.wrapping_add(r.addr ^ r.size);
    }
    (n, sum)
}

/// Decodes every record of `streams` in batches of `decode_pipeline::BATCH` typed records (what the
/// text decoders do); returns how many and a checksum.
fn model_decode_batches<K: KindTable + ?Sized>(
    kinds: &K,
    packed: &(Streams, Packer),
) -> (u64, u64) {
    let mut c = shaped_cursors(packed);
    // What a decoder of the files the encoders write uses (live blocks by rank only).
    let mut state = State::for_decoding();
    let mut batch = Vec::with_capacity(decode_pipeline::BATCH);
    let (mut n, mut sum) = (0u64, 0u64);
    loop {
        batch.clear();
        let more = state
            .decode_into(kinds, &mut c, &mut batch, decode_pipeline::BATCH)
            .expect("decodes");
        n += batch.len() as u64;
        for r in &batch {
            sum = sum.wrapping_add(r.addr ^ r.size);
        }
        if !more {
            return (n, sum);
        }
    }
}

/// Benchmarks one text format: events from text, model encode/decode, container round trip.
/// The kind table is the front end's own type, as the text decoders have it (behind a `dyn`,
/// every record paid calls the decoders do not).
fn bench_format<K: KindTable>(
    g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    format: &dyn TraceFormat,
    kinds: &K,
    text: &[u8],
    records: &[ModelRecord],
    events: fn(&mut dyn Read) -> Vec<AllocEvent>,
) {
    let lines = records.len() as u64;
    g.throughput(Throughput::Elements(lines));
    g.bench_function("text to AllocEvent", |b| {
        b.iter(|| black_box(events(&mut black_box(text))).len())
    });
    g.bench_function("ModelRecord to streams", |b| {
        b.iter(|| model_encode(kinds, black_box(records)))
    });
    let streams = model_encode(kinds, records);
    assert_eq!(model_decode(kinds, &streams).0, lines, "model round trip");
    g.bench_function("streams to ModelRecord", |b| {
        b.iter(|| model_decode(kinds, black_box(&streams)))
    });
    assert_eq!(
        model_decode_batches(kinds, &streams),
        model_decode(kinds, &streams),
        "batches decode the same records"
    );
    g.bench_function("streams to ModelRecord batches", |b| {
        b.iter(|| model_decode_batches(kinds, black_box(&streams)))
    });
    support::container_round_trip(g, format, text, "text", format.name());
}

fn mtrace_bench(c: &mut Criterion) {
    let text = std::fs::read(SAMPLE).expect("samples/sample.mtrace is in the repository");
    let records = mtrace_records(&text);
    let mut g = c.benchmark_group("mtrace");
    bench_format(
        &mut g,
        &mtrace::Mtrace,
        &MtraceKinds,
        &text,
        &records,
        |r| mtrace::read_events(r, "sample").expect("parses"),
    );
    // HATF 1.0 native (Appendix A) from and to the same events.
    let events = mtrace::read_events(&mut &text[..], "sample").expect("parses");
    g.throughput(Throughput::Elements(events.len() as u64));
    g.bench_function("AllocEvent to HATF 1.0 native", |b| {
        b.iter(|| native::write_events(black_box(&events), Vec::new()).expect("writes"))
    });
    let bytes = native::write_events(&events, Vec::new()).expect("writes");
    g.bench_function("HATF 1.0 native to AllocEvent", |b| {
        b.iter(|| native::read_events(black_box(&bytes[..])).expect("reads"))
    });
    g.finish();
}

fn memory_replay_bench(c: &mut Criterion) {
    let zip = std::path::Path::new(&support::corpus()).join("malloc/android/systemui.zip");
    let Ok(file) = std::fs::File::open(&zip) else {
        eprintln!(
            "skipping memory_replay benches: {} is absent",
            zip.display()
        );
        return;
    };
    let mut whole = Vec::new();
    memory_replay::zip::inflate_entry(&mut std::io::BufReader::new(file), "systemui", &mut |r| {
        r.read_to_end(&mut whole)
            .map(|_| ())
            .map_err(|e| hatf::format::FormatError {
                file: "systemui".into(),
                position: String::new(),
                message: e.to_string(),
            })
    })
    .expect("the corpus zip inflates");
    let end = whole
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(REPLAY_LINES - 1)
        .map_or(whole.len(), |(i, _)| i + 1);
    let text = &whole[..end];
    let records = replay_records(text);
    let mut g = c.benchmark_group("memory_replay");
    bench_format(
        &mut g,
        &memory_replay::MemoryReplay,
        &ReplayKinds,
        text,
        &records,
        |r| memory_replay::read_events(r, "systemui").expect("parses"),
    );
    g.finish();
}

criterion_group!(benches, mtrace_bench, memory_replay_bench);
criterion_main!(benches);
