//! Android memory_replay: text and zip round trips on the corpus and on odd inputs.

use hatf::internal::formats::memory_replay::{read_events, zip, MemoryReplay, MemoryReplayZip};
use hatf::{DecodeOptions, EncodeOptions, TraceFormat};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

fn enc(f: &dyn TraceFormat, input: &[u8], keep: bool) -> Result<Vec<u8>, hatf::FormatError> {
    let mut out = Vec::new();
    let o = EncodeOptions {
        input_name: "t.txt".into(),
        keep_bad_lines: keep,
        ..EncodeOptions::default()
    };
    f.encode(&mut &input[..], &mut out, &o)?;
    Ok(out)
}

fn dec(f: &dyn TraceFormat, bin: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    f.decode(&mut &bin[..], &mut out, &DecodeOptions::default())
        .expect("decode");
    out
}

#[test]
fn corpus_zips_and_their_text_round_trip_byte_for_byte() {
    let dir = std::path::Path::new(CORPUS).join("malloc/android");
    if !dir.exists() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    for name in ["surfaceflinger", "systemui"] {
        let z = std::fs::read(dir.join(format!("{name}.zip"))).unwrap();
        assert!(MemoryReplayZip.detect(&z[..z.len().min(65536)]));
        let bin = enc(&MemoryReplayZip, &z, false).unwrap();
        assert!(dec(&MemoryReplayZip, &bin) == z, "{name}.zip differs");
        // The entry is taken apart by preflate and its text modelled, not stored as is.
        let header = metatf::container::ContainerReader::new(&bin[..]).unwrap();
        assert_eq!(header.header().property("deflate"), Some("preflate"));
        eprintln!("{name}.zip: {} bytes → {} bytes", z.len(), bin.len());
        assert!(bin.len() * 3 < z.len());

        let mut text = Vec::new();
        zip::inflate_entry(&mut &z[..], name, &mut |r| {
            r.read_to_end(&mut text)
                .map(|_| ())
                .map_err(|e| hatf::FormatError {
                    file: name.into(),
                    position: String::new(),
                    message: e.to_string(),
                })
        })
        .unwrap();
        assert!(MemoryReplay.detect(&text[..65536]));
        let bin = enc(&MemoryReplay, &text, false).unwrap();
        eprintln!("{name}: {} bytes of text → {} bytes", text.len(), bin.len());
        assert!(bin.len() * 20 < text.len());
        assert!(dec(&MemoryReplay, &bin) == text, "{name} text differs");
    }
}

#[test]
fn odd_inputs_round_trip() {
    let cases: &[&[u8]] = &[
        b"",
        b"1: malloc 0x10 5",
        b"1: malloc 0x10 5\r\n1: free 0x10\r\n",
        b"1: malloc 0x10 5\n2: calloc 0x20 3 4\n2: memalign 0x40 16 100\n1: realloc 0x50 0x10 9\n",
        b"1: realloc 0x50 0x0 9\n1: free 0x0\n1: free 0x50\n1: free 0x50\n3: thread_done 0x0\n",
        b"1: thread_done 0x5\n01: malloc 0x10 5\n1: malloc 0x010 5\n1:  free 0x10\n",
        // Thread ids of six digits fill the eight-byte prefix the parser compares at once.
        b"123456: malloc 0x10 5\n999999: free 0x10\n123456: free 0x10\n",
    ];
    for c in cases {
        let bin = enc(&MemoryReplay, c, false).unwrap();
        assert_eq!(dec(&MemoryReplay, &bin), *c);
    }
}

#[test]
fn bad_lines_are_errors_unless_kept() {
    let text = b"1: malloc 0x10 5\n1: mallok 0x10 5\n";
    let e = enc(&MemoryReplay, text, false).unwrap_err();
    assert_eq!(e.position, "2:4");
    let bin = enc(&MemoryReplay, text, true).unwrap();
    assert_eq!(dec(&MemoryReplay, &bin), text);
}

#[test]
fn events_keep_threads_and_kinds() {
    let text = b"7: calloc 0x20 3 4\n8: memalign 0x40 16 100\n7: realloc 0x50 0x20 9\n8: thread_done 0x0\n";
    let ev = read_events(&mut &text[..], "t").unwrap();
    use hatf::internal::shared::allocation::event::AllocKind::*;
    let k: Vec<_> = ev.iter().map(|e| (e.kind, e.thread)).collect();
    assert_eq!(
        k,
        vec![(Calloc, 7), (Memalign, 8), (Realloc, 7), (DestroyThread, 8)]
    );
    assert_eq!((ev[0].size, ev[0].extra), (12, 3));
    assert_eq!((ev[2].old_address, ev[2].address), (0x20, 0x50));
}

#[test]
fn zip_encoder_rejects_what_is_not_a_zip() {
    let e = enc(&MemoryReplayZip, b"1: malloc 0x10 5\n", false).unwrap_err();
    assert_eq!(e.position, "byte 0");
    assert!(!MemoryReplayZip.detect(b"1: malloc 0x10 5\n"));
}

/// A one-entry zip: local header (method, no name), `data`, then `tail`.
fn zip_with(method: u16, data: &[u8], tail: &[u8]) -> Vec<u8> {
    let mut z = b"PK\x03\x04".to_vec();
    z.extend_from_slice(&[20, 0, 0, 0]);
    z.extend_from_slice(&method.to_le_bytes());
    z.extend_from_slice(&[0; 16]); // time, date, CRC-32, sizes
    z.extend_from_slice(&[0, 0, 0, 0]); // name and extra lengths
    z.extend_from_slice(data);
    z.extend_from_slice(tail);
    z
}

fn deflate(text: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

fn deflate_property(bin: &[u8]) -> Option<String> {
    let r = metatf::container::ContainerReader::new(bin).unwrap();
    r.header().property("deflate").map(str::to_string)
}

#[test]
fn zips_that_cannot_be_taken_apart_are_stored_as_their_bytes() {
    // Deflated, but the text is not memory_replay lines.
    let z = zip_with(8, &deflate(b"hello\n"), b"PK\x01\x02 central directory");
    let bin = enc(&MemoryReplayZip, &z, false).unwrap();
    assert_eq!(dec(&MemoryReplayZip, &bin), z);
    assert_eq!(deflate_property(&bin).as_deref(), Some("original-bytes"));
    // Stored (method 0) entry.
    let z = zip_with(0, b"1: malloc 0x10 5\n", b"");
    let bin = enc(&MemoryReplayZip, &z, false).unwrap();
    assert_eq!(dec(&MemoryReplayZip, &bin), z);
    assert_eq!(deflate_property(&bin).as_deref(), Some("original-bytes"));
    // A damaged deflate stream.
    let z = zip_with(8, &[0x07, 0x42, 0x13], b"");
    let bin = enc(&MemoryReplayZip, &z, false).unwrap();
    assert_eq!(dec(&MemoryReplayZip, &bin), z);
    assert_eq!(deflate_property(&bin).as_deref(), Some("original-bytes"));
}

#[test]
fn a_deflated_trace_entry_is_taken_apart_and_modelled() {
    let mut text = Vec::new();
    for i in 0..3000u32 {
        text.extend_from_slice(
            format!("7: malloc 0x{:x} {}\n", 0x1000 + i * 32, 24 + i % 3).as_bytes(),
        );
        text.extend_from_slice(format!("7: free 0x{:x}\n", 0x1000 + i * 32).as_bytes());
    }
    let z = zip_with(8, &deflate(&text), b"PK\x01\x02 central directory");
    let bin = enc(&MemoryReplayZip, &z, false).unwrap();
    assert_eq!(dec(&MemoryReplayZip, &bin), z);
    assert_eq!(deflate_property(&bin).as_deref(), Some("preflate"));
}
