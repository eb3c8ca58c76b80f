//! malloc-bench `.trace.gz`: byte-for-byte round trips and the protobuf event reader.

use hatf::alloc::malloc_bench::{read_events, MallocBench};
use hatf::alloc::AllocKind;
use hatf::{DecodeOptions, EncodeOptions, TraceFormat};
use std::io::Write;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus");

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

#[test]
fn corpus_files_round_trip_and_parse() {
    let dir = std::path::Path::new(CORPUS).join("malloc/malloc-bench/traces");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    };
    let mut seen = 0;
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
        let mut bin = Vec::new();
        MallocBench
            .encode(&mut &raw[..], &mut bin, &EncodeOptions::default())
            .unwrap();
        let mut back = Vec::new();
        MallocBench
            .decode(&mut &bin[..], &mut back, &DecodeOptions::default())
            .unwrap();
        assert!(back == raw, "{} differs", p.display());
        // Parse the small ones fully: every file has allocations and frees.
        if raw.len() < 200_000 {
            let ev = read_events(&mut &raw[..], "t").unwrap();
            assert!(ev.iter().any(|e| e.kind == AllocKind::Malloc));
            assert!(ev.iter().any(|e| e.kind == AllocKind::Free));
        }
        seen += 1;
    }
    assert!(seen >= 10);
}
