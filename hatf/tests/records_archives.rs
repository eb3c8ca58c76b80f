//! `decode --records A..B` for formats that store an archive: a malloc-bench `.trace.gz` gives
//! the protobuf fields of those records, a memory_replay zip the text lines of its entry; files
//! that keep the archive's bytes as they are say why no records can be selected.

use metatf::varint::put_u64;
use std::io::{Cursor, Write};
use std::ops::Range;

use hatf::format::{DecodeOptions, TraceFormat};
use hatf::internal::formats::malloc_bench::MallocBench;
use hatf::internal::formats::memory_replay::MemoryReplayZip;

mod format_support;
use format_support::encode;

fn records(f: &dyn TraceFormat, bin: &[u8], range: Range<u64>) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let options = DecodeOptions {
        input_name: "t".into(),
        ..DecodeOptions::default()
    };
    let mut notes = Vec::new();
    let n = f
        .decode_records(&mut Cursor::new(bin), &mut out, &options, range, &mut |m| {
            notes.push(m.to_string())
        })
        .expect("the format decodes ranges")
        .map_err(|e| e.to_string())?;
    assert!(notes.is_empty(), "{notes:?}");
    let _ = n;
    Ok(out)
}

fn layout(bin: &[u8]) -> String {
    let r = metatf::container::ContainerReader::new(bin).unwrap();
    r.header().property("layout").unwrap_or("").to_string()
}

/// A Tracefile protobuf written field by field: mallocs and frees, then
/// `max_simultaneous_allocs`. Returns each top-level field's bytes.
fn tracefile() -> Vec<Vec<u8>> {
    let mut fields = Vec::new();
    for i in 0..4000u64 {
        // lines { malloc { result_id: i, input_size: 16 + i % 7 } } or free { input_id }
        let mut inner = Vec::new();
        let case = if i % 3 == 2 { 2 } else { 1 };
        inner.push(0x08);
        put_u64(&mut inner, if case == 2 { i - 1 } else { i });
        if case == 1 {
            inner.push(0x10);
            put_u64(&mut inner, 16 + i % 7);
        }
        let mut line = vec![(case << 3) as u8 | 2];
        put_u64(&mut line, inner.len() as u64);
        line.extend_from_slice(&inner);
        let mut field = vec![0x0a];
        put_u64(&mut field, line.len() as u64);
        field.extend_from_slice(&line);
        fields.push(field);
    }
    fields.push(vec![0x10, 0x85, 0x03]);
    fields
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::GzBuilder::new()
        .filename("t.pb")
        .write(Vec::new(), flate2::Compression::new(6));
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn malloc_bench_ranges_are_the_protobuf_fields_of_the_records() {
    let fields = tracefile();
    let bin = encode(&MallocBench, &gzip(&fields.concat()));
    assert_eq!(layout(&bin), "malloc-bench-preflate-5");
    let total = fields.len() as u64;
    for (first, end) in [
        (0, 10),
        (1990, 2010),
        (total - 3, u64::MAX),
        (0, u64::MAX),
        (7, 7),
    ] {
        let want = fields[first as usize..end.min(total) as usize].concat();
        let got = records(&MallocBench, &bin, first..end).unwrap();
        assert!(got == want, "records {first}..{end} differ");
    }
    assert!(records(&MallocBench, &bin, total + 5..total + 9)
        .unwrap()
        .is_empty());
}

#[test]
fn a_trace_gz_kept_as_bytes_has_no_records_to_select() {
    // Reserved gzip flag bits: not taken apart, stored as its bytes.
    let mut gz = gzip(&tracefile().concat());
    gz[3] |= 0x80;
    let bin = encode(&MallocBench, &gz);
    let e = records(&MallocBench, &bin, 0..5).unwrap_err();
    assert!(e.contains("keeps the .trace.gz's bytes as they are"), "{e}");
}

/// A one-entry zip: local header (method, no name), `data`, then `tail`.
fn zip_with(method: u16, data: &[u8], tail: &[u8]) -> Vec<u8> {
    let mut z = b"PK\x03\x04".to_vec();
    z.extend_from_slice(&[20, 0, 0, 0]);
    z.extend_from_slice(&method.to_le_bytes());
    z.extend_from_slice(&[0; 16]);
    z.extend_from_slice(&[0, 0, 0, 0]);
    z.extend_from_slice(data);
    z.extend_from_slice(tail);
    z
}

fn deflate(text: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

#[test]
fn memory_replay_zip_ranges_are_the_lines_of_its_entry() {
    let mut lines = Vec::new();
    for i in 0..3000u32 {
        let tid = 7 + i % 3;
        lines.push(format!(
            "{tid}: malloc 0x{:x} {}\n",
            0x1000 + i * 32,
            24 + i % 5
        ));
        lines.push(format!("{tid}: free 0x{:x}\n", 0x1000 + i * 32));
    }
    let text = lines.concat();
    let z = zip_with(
        8,
        &deflate(text.as_bytes()),
        b"PK\x01\x02 central directory",
    );
    let bin = encode(&MemoryReplayZip, &z);
    assert_eq!(layout(&bin), "memory-replay-zip-preflate-2");
    let total = lines.len() as u64;
    for (first, end) in [(0, 3), (2999, 3004), (total - 2, u64::MAX), (0, u64::MAX)] {
        let want = lines[first as usize..end.min(total) as usize].concat();
        let got = records(&MemoryReplayZip, &bin, first..end).unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), want, "{first}..{end}");
    }
    // Stored (method 0): kept as its bytes, nothing to select.
    let z = zip_with(0, text.as_bytes(), b"");
    let bin = encode(&MemoryReplayZip, &z);
    let e = records(&MemoryReplayZip, &bin, 0..5).unwrap_err();
    assert!(e.contains("has no lines to select"), "{e}");
}
