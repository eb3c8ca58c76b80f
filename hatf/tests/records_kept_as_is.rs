//! `hatf::records` on files that keep an archive byte for byte (a zip whose entry hatf cannot
//! take apart): the records come out of the stored archive's trace entry, parsed by the
//! format's line parser, whole or by range. And the DTD of files that refer to a shipped DTD.

use std::io::{Cursor, Write};
use std::ops::Range;

use hatf::records::{Item, RecordFile, Value};
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

fn encode(format: &str, input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    hatf::by_name(format)
        .expect("a built-in format")
        .encode(&mut &input[..], &mut out, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

fn layout(bin: &[u8]) -> String {
    let r = metatf::container::ContainerReader::new(bin).unwrap();
    r.header().property("layout").unwrap_or("").to_string()
}

/// Each record of `range` as its type's name and its values, printed.
fn records(bin: &[u8], range: Range<u64>) -> Result<Vec<(u64, String, Vec<String>)>, String> {
    let mut input = Cursor::new(bin);
    let file = RecordFile::open(&mut input, "t.hatf").map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    file.read(&mut input, "t.hatf", range, &mut |item| {
        if let Item::Record(r) = item {
            let values = r
                .values
                .iter()
                .map(|v| match v {
                    Value::Null => "-".to_string(),
                    Value::U64(n) => format!("{n:#x}"),
                    Value::I64(n) => n.to_string(),
                    Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                })
                .collect();
            out.push((r.index, file.types()[r.record_type].name.clone(), values));
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(out)
}

fn zip_of(entries: &[(&str, &[u8])], method: CompressionMethod) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data) in entries {
        z.start_file(
            *name,
            SimpleFileOptions::default().compression_method(method),
        )
        .unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap().into_inner()
}

#[test]
fn a_memory_replay_zip_kept_as_is_gives_the_records_of_its_entry() {
    let text =
        b"7: malloc 0x1000 24\n7: free 0x1000\n8: realloc 0x2000 0x0 16\n8: thread_done 0x0\n";
    // A stored (not deflated) entry cannot be taken apart: the archive is kept as is.
    let z = zip_of(&[("trace.txt", text)], CompressionMethod::Stored);
    let bin = encode("memory-replay-zip", &z);
    assert_eq!(layout(&bin), "original-bytes");
    let all = records(&bin, 0..u64::MAX).unwrap();
    let want = [
        (0, "malloc", vec!["0x7", "0x1000", "0x18"]),
        (1, "free", vec!["0x7", "0x1000"]),
        (2, "realloc", vec!["0x8", "0x2000", "0x0", "0x10"]),
        (3, "threadDone", vec!["0x8"]),
    ];
    let want: Vec<_> = want
        .into_iter()
        .map(|(i, n, v)| (i, n.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(all, want);
    assert_eq!(records(&bin, 1..3).unwrap(), want[1..3]);
    assert_eq!(records(&bin, 3..100).unwrap(), want[3..]);
    assert!(records(&bin, 9..20).unwrap().is_empty());
}

/// `text` deflated as two stored blocks: valid, but not what flate2 makes at any level (one
/// block), so hatf cannot make the member again and keeps the archive as is.
fn deflate_in_two_blocks(text: &[u8]) -> Vec<u8> {
    let (a, b) = text.split_at(text.len() / 2);
    let mut out = Vec::new();
    for (last, part) in [(0u8, a), (1, b)] {
        let len = part.len() as u16;
        out.push(last);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(part);
    }
    out
}

/// A zip of one deflated member `name` whose data is `deflated` (of `text`).
fn zip_deflated(name: &str, text: &[u8], deflated: &[u8]) -> Vec<u8> {
    let mut crc = flate2::Crc::new();
    crc.update(text);
    let sizes = |out: &mut Vec<u8>| {
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(deflated.len() as u32).to_le_bytes());
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    };
    // Version 2.0, no flags, method 8 (deflate), no time.
    let mut z = b"PK\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x00\x00".to_vec();
    sizes(&mut z);
    z.extend_from_slice(&[0, 0]);
    z.extend_from_slice(name.as_bytes());
    z.extend_from_slice(deflated);
    let directory = z.len();
    z.extend_from_slice(b"PK\x01\x02\x14\x00\x14\x00\x00\x00\x08\x00\x00\x00\x00\x00");
    sizes(&mut z);
    // No extra field, comment, disk or attributes; the member is at offset 0.
    z.extend_from_slice(&[0; 14]);
    z.extend_from_slice(name.as_bytes());
    let directory_len = z.len() - directory;
    z.extend_from_slice(b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00");
    z.extend_from_slice(&(directory_len as u32).to_le_bytes());
    z.extend_from_slice(&(directory as u32).to_le_bytes());
    z.extend_from_slice(&[0, 0]);
    z
}

#[test]
fn a_jvm_zip_kept_as_is_gives_the_records_of_its_trace_member() {
    let text = b"VS:1\nVI:2\nVD:3\n";
    let z = zip_deflated("trace", text, &deflate_in_two_blocks(text));
    let bin = encode("jvm-zip", &z);
    assert_eq!(layout(&bin), "original-bytes");
    let got = records(&bin, 0..u64::MAX).unwrap();
    let names: Vec<&str> = got.iter().map(|(_, n, _)| n.as_str()).collect();
    assert_eq!(names, ["VS", "VI", "VD"]);
    assert_eq!(got[2].2, ["3"]);
}

#[test]
fn an_archive_kept_as_is_that_cannot_be_read_is_a_clear_error() {
    // Method 0 -> 99 in the headers of the only entry: neither hatf nor a zip reader can
    // read it.
    let mut z = zip_of(&[("trace", b"VS:1\n")], CompressionMethod::Stored);
    let central = z.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    z[8] = 99;
    z[central + 10] = 99;
    let bin = encode("jvm-zip", &z);
    assert_eq!(layout(&bin), "original-bytes");
    let e = records(&bin, 0..u64::MAX).unwrap_err();
    assert!(e.starts_with("t.hatf"), "{e}");
    assert!(e.contains("the archive kept as is cannot be read"), "{e}");
}

#[test]
fn a_file_that_refers_to_its_dtd_gives_the_shipped_text() {
    let text = b"= Start\n@ ./a:[0x4005d6] + 0x1a2b 0x20\n= End\n";
    let bin = encode("mtrace", text);
    let file = RecordFile::open(&mut Cursor::new(&bin[..]), "t.hatf").unwrap();
    assert_eq!(file.dtd(), include_str!("../../dtds/mtrace.dtd"));
    // The record types are the ones the format's record DTD names (`dtds/records/`, which
    // describes the records the reader gives; the shipped DTD describes the stored layout).
    let records_dtd = include_str!("../../dtds/records/mtrace.dtd");
    let schema = metatf_dtd::parse_schema(records_dtd, "records/mtrace.dtd").unwrap();
    let names: Vec<&str> = schema
        .global_records
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert!(!file.types().is_empty());
    for t in file.types() {
        assert!(names.contains(&t.name.as_str()), "{}", t.name);
    }
}
