//! malloc-bench `.trace.gz`: byte-for-byte round trips and the protobuf event reader.

use hatf::internal::formats::malloc_bench::{read_events, MallocBench};
use hatf::internal::shared::allocation::event::AllocKind;
use hatf::{DecodeOptions, EncodeOptions, TraceFormat};
use std::io::Write;

mod format_support;
use format_support::peers;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A length-delimited field.
fn ld(field: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![(field << 3) | 2, body.len() as u8];
    v.extend_from_slice(body);
    v
}

#[test]
fn hand_built_tracefile_gives_the_events_it_holds() {
    let mut msg = Vec::new();
    msg.extend(ld(1, &ld(1, &[0x08, 0x00, 0x10, 0x20]))); // malloc id 0 size 32
    msg.extend(ld(1, &ld(4, &[0x08, 0x01, 0x10, 0x03, 0x18, 0x08]))); // calloc id 1, 3 × 8
    msg.extend(ld(1, &ld(3, &[0x08, 0x02, 0x10, 0x00, 0x18, 0x40]))); // realloc 0 → 2, 64
    msg.extend(ld(1, &ld(2, &[0x08, 0x01]))); // free id 1
    msg.extend([0x10, 0x02]); // max_simultaneous_allocs = 2
    let ev = read_events(&mut &gzip(&msg)[..], "t").unwrap();
    let kinds: Vec<_> = ev.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        vec![
            AllocKind::Malloc,
            AllocKind::Calloc,
            AllocKind::Realloc,
            AllocKind::Free
        ]
    );
    assert_eq!((ev[0].address, ev[0].size), (1, 32));
    assert_eq!((ev[1].extra, ev[1].size), (3, 24));
    assert_eq!((ev[2].old_address, ev[2].address, ev[2].size), (1, 3, 64));
    assert_eq!(ev[3].address, 2);
    // A cut message is an error, not a panic.
    let cut = gzip(&msg[..msg.len() - 5]);
    assert!(read_events(&mut &cut[..], "t").is_err());
}

fn round_trip(gz: &[u8]) -> Vec<u8> {
    let mut bin = Vec::new();
    MallocBench
        .encode(&mut &gz[..], &mut bin, &EncodeOptions::default())
        .unwrap();
    let mut back = Vec::new();
    MallocBench
        .decode(&mut &bin[..], &mut back, &DecodeOptions::default())
        .unwrap();
    assert!(back == gz, "round trip differs");
    bin
}

fn deflate_property(bin: &[u8]) -> Option<String> {
    let r = metatf::container::ContainerReader::new(bin).unwrap();
    r.header().property("deflate").map(str::to_string)
}

#[test]
fn a_stream_preflate_cannot_rebuild_is_stored_as_its_bytes() {
    // A gzip header, then a deflate block of the reserved type 3: no decoder accepts it, so
    // there is nothing to rebuild from and the bytes are kept as they are.
    let mut gz = gzip(b"x")[..10].to_vec();
    gz.extend_from_slice(&[0x07, 0x42, 0x13, 0x37, 0x00, 0x01]);
    let bin = round_trip(&gz);
    assert_eq!(deflate_property(&bin).as_deref(), Some("original-bytes"));
    // Not gzip at all: the same.
    let bin = round_trip(b"\x0a\x04\x0a\x02\x08\x01 not gzip");
    assert_eq!(deflate_property(&bin).as_deref(), Some("original-bytes"));
}

#[test]
fn a_rebuildable_stream_is_split_and_modelled() {
    let mut msg = Vec::new();
    for i in 0..2000u32 {
        let (id, size) = ((i % 100) as u8, (16 + i % 7) as u8);
        msg.extend(ld(1, &ld(1, &[0x08, id, 0x10, size])));
        msg.extend(ld(1, &ld(2, &[0x08, id])));
    }
    let mut gz = gzip(&msg);
    let bin = round_trip(&gz);
    assert_eq!(deflate_property(&bin).as_deref(), Some("preflate"));
    assert!(bin.len() < gz.len() / 2, "{} vs {}", bin.len(), gz.len());
    // Bytes after the gzip member (a second member, garbage) are kept too.
    gz.extend_from_slice(b"trailing bytes");
    let bin = round_trip(&gz);
    assert_eq!(deflate_property(&bin).as_deref(), Some("preflate"));
}

/// Largest `.trace.gz` the default test run encodes (`HATF_MB_MAX` overrides it): the seven
/// corpus files up to 200 KB take seconds; all seventeen take minutes (about 5 to encode in a
/// release build), so the full run is asked for with `HATF_MB_MAX=100000000`.
fn max_file() -> u64 {
    std::env::var("HATF_MB_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

#[test]
fn corpus_files_round_trip_and_parse() {
    let dir = std::path::Path::new(CORPUS).join("malloc/malloc-bench/traces");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    };
    let (mut seen, mut skipped) = (0, Vec::new());
    for e in entries.flatten() {
        let p = e.path();
        if !p.to_string_lossy().ends_with(".trace.gz") {
            continue;
        }
        let raw = std::fs::read(&p).unwrap();
        assert!(
            MallocBench.detect(&raw[..raw.len().min(65536)]),
            "{}",
            p.display()
        );
        if raw.len() as u64 > max_file() {
            skipped.push(p.file_name().unwrap().to_string_lossy().to_string());
            continue;
        }
        let bin = round_trip(&raw);
        // Every corpus file is rebuilt by preflate, not stored as is.
        assert_eq!(
            deflate_property(&bin).as_deref(),
            Some("preflate"),
            "{}",
            p.display()
        );
        // Parse the small ones fully: every file has allocations and frees.
        let ev = read_events(&mut &raw[..], "t").unwrap();
        assert!(ev.iter().any(|e| e.kind == AllocKind::Malloc));
        assert!(ev.iter().any(|e| e.kind == AllocKind::Free));
        seen += 1;
    }
    if !skipped.is_empty() {
        eprintln!(
            "not round-tripped (larger than HATF_MB_MAX={}): {}",
            max_file(),
            skipped.join(", ")
        );
    }
    assert_eq!(seen + skipped.len(), 17);
    assert!(seen >= 7);
}

/// Sizes of `hatf` against `xz -9` and `zstd -19 --long=27` of the decompressed protobuf, for
/// every corpus file whose `.trace.gz` is at most [`max_file`] bytes and whose name contains
/// `HATF_MB_ONLY`; prints the table of docs/FORMAT.md and checks that hatf is at most half the
/// better peer (or, for [`KNOWN_MISSES`], no worse than measured).
#[test]
fn corpus_sizes_against_peers() {
    let dir = std::path::Path::new(CORPUS).join("malloc/malloc-bench/traces");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    };
    let max = max_file();
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        let raw = std::fs::read(&p).unwrap();
        let only = std::env::var("HATF_MB_ONLY").unwrap_or_default();
        if !p.to_string_lossy().ends_with(".trace.gz")
            || raw.len() as u64 > max
            || !p.to_string_lossy().contains(&only)
        {
            continue;
        }
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&raw[..]), &mut text).unwrap();
        let mut bin = Vec::new();
        let t0 = std::time::Instant::now();
        MallocBench
            .encode(&mut &raw[..], &mut bin, &EncodeOptions::default())
            .unwrap();
        let secs = t0.elapsed().as_secs_f64();
        let (xz, zstd) = peers(&text);
        let best = xz.min(zstd);
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        eprintln!(
            "SIZE {name} gz={} text={} xz9={xz} zstd19long={zstd} hatf={} ratio={:.3} encode_s={secs:.1}",
            raw.len(),
            text.len(),
            bin.len(),
            bin.len() as f64 / best as f64
        );
        match KNOWN_MISSES.iter().find(|(n, _)| *n == name) {
            Some((_, limit)) => assert!(
                bin.len() as f64 <= limit * best as f64,
                "{name}: {} regressed past {limit} of {best}",
                bin.len()
            ),
            None => assert!(
                bin.len() * 2 <= best,
                "{name}: {} > half of {best}",
                bin.len()
            ),
        }
    }
}

/// Corpus files that do not reach half the better peer (the library peers of [`peers`]), with
/// the ratio they reach, checked so that they do not get worse. None with the current layout;
/// kept so that a future miss is written down with its reason.
const KNOWN_MISSES: [(&str, f64); 0] = [];
