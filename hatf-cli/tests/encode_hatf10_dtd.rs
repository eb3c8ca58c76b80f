//! `hatf encode --encoding hatf10-dtd`: allocation events through the codec generated from
//! `dtds/hatf10.dtd`, read back by the universal path (`hatf dump`, `encode --from text`).

use std::path::{Path, PathBuf};

mod support;
use support::hatf;

/// An mtrace log with a 64-bit address (the writer must widen `address`), a realloc pair and
/// a free.
const MTRACE: &str = "= Start
@ ./prog:[0x401136] + 0x1000 0x10
@ ./prog:[0x401136] + 0x7f0000001040 0x20
@ ./prog:[0x401150] < 0x1000
@ ./prog:[0x401150] > 0x2000 0x30
@ ./prog:[0x401160] - 0x7f0000001040
= End
";

fn encode(dir: &Path) -> PathBuf {
    let input = dir.join("small.mtrace");
    std::fs::write(&input, MTRACE).unwrap();
    let out = dir.join("small.hatf");
    let done = hatf()
        .args(["encode", "--encoding", "hatf10-dtd"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    // The user is told that the text cannot come back.
    let err = String::from_utf8_lossy(&done.get_output().stderr).to_string();
    assert!(err.contains("keeps the events only"), "{err}");
    out
}

fn dump(file: &Path) -> String {
    let out = hatf().arg("dump").arg(file).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).expect("dump is UTF-8")
}

#[test]
fn dump_reads_the_generated_writers_records_through_the_embedded_dtd() {
    let dir = tempfile::tempdir().unwrap();
    let file = encode(dir.path());
    let text = dump(&file);
    let records: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("metadata") && !l.is_empty())
        .collect();
    assert_eq!(
        records,
        [
            "section number=1",
            "alloc size=16 address=4096 time=0 thread=0 heap=0 length=0 data=\"\"",
            "alloc size=32 address=139637976731712 time=0 thread=0 heap=0 length=0 data=\"\"",
            "realloc size=48 address=4096 address=8192 time=0 thread=0 heap=0 length=0 data=\"\"",
            "free address=139637976731712 time=0 thread=0 heap=0 length=0 data=\"\"",
        ],
        "{text}"
    );
    // The 64-bit address did not fit address.width = 4: the writer widened it, as the
    // universal writer does.
    assert!(
        text.lines()
            .any(|l| l.starts_with("metadata alloc address") && l.contains("width")),
        "{text}"
    );
}

/// The dump read back by the universal text path (`encode --from text`, with the original
/// `hatf10.dtd`) dumps the same again. The files are not compared byte for byte here: the
/// generated writer embeds the DTD text the derive renders from the generated types, this
/// path the file's own text (comments and all); the byte-for-byte agreement of the two writers
/// under one DTD text is `hatf::internal::formats::hatf10_dtd::tests`.
#[test]
fn the_universal_text_path_reads_the_dump_back_to_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let file = encode(dir.path());
    let text = dir.path().join("dump.txt");
    std::fs::write(&text, dump(&file)).unwrap();
    let again = dir.path().join("again.hatf");
    hatf()
        .args(["encode", "--from", "text", "--dtd"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds/hatf10.dtd"))
        .arg(&text)
        .arg("-o")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(dump(&again), dump(&file));
}

#[test]
fn decode_refuses_the_events_only_file_and_names_dump() {
    let dir = tempfile::tempdir().unwrap();
    let file = encode(dir.path());
    let out = hatf().arg("decode").arg(&file).assert().failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("hatf dump"), "{err}");
}

#[test]
fn an_unknown_encoding_lists_hatf10_dtd() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("small.mtrace");
    std::fs::write(&input, MTRACE).unwrap();
    let out = hatf()
        .args(["encode", "--encoding", "nope"])
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("x.hatf"))
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("hatf10-dtd"), "{err}");
}
