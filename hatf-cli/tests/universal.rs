//! The universal path on the built binary: `encode --from text --dtd`, `dump`, `inspect`.

use predicates::prelude::*;
use std::path::{Path, PathBuf};

mod support;
use support::hatf;

fn hatf10() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds/hatf10.dtd"))
}

const RECORDS: &str = "section number=1
alloc size=16 address=4096 time=0 thread=0 heap=0 length=0 data=\"\"
alloc size=99999999999 address=4112 time=0 thread=0 heap=0 length=0 data=\"\"
free address=4096 time=0 thread=0 heap=0 length=0 data=\"\"
realloc size=32 address=4112 address=8192 time=0 thread=7 heap=0 length=3 data=\"a\\x0ab\"
comment length=5 data=\"hello\"
";

/// Encodes with the fixed-width layout (`--model plain`), whose widening metadata records these
/// tests look at.
fn encode_text(dir: &Path, text: &str, name: &str) -> PathBuf {
    let input = dir.join(format!("{name}.txt"));
    std::fs::write(&input, text).unwrap();
    let out = dir.join(format!("{name}.hatf"));
    hatf()
        .args(["encode", "--from", "text", "--model", "plain", "--dtd"])
        .arg(hatf10())
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    out
}

#[test]
fn dump_then_encode_from_text_then_dump_is_the_identity() {
    let dir = tempfile::tempdir().unwrap();
    let first = encode_text(dir.path(), RECORDS, "first");
    let text = support::stdout_of(&["dump"], &first);
    // The writer widened `size` for the large value instead of truncating it.
    assert!(text.contains("metadata alloc size@1 width 5"), "{text}");
    assert!(
        text.contains("alloc size=99999999999 address=4112"),
        "{text}"
    );
    let second = encode_text(dir.path(), &text, "second");
    assert_eq!(support::stdout_of(&["dump"], &second), text);
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap()
    );
}

/// The default `--model auto` layout: the same records come back from `dump` and `decode`.
#[test]
fn the_model_engine_reads_back_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("auto.txt");
    std::fs::write(&input, RECORDS).unwrap();
    let out = dir.path().join("auto.hatf");
    hatf()
        .args(["encode", "--from", "text", "--dtd"])
        .arg(hatf10())
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let decoded = support::output_of(&["decode"], &out);
    assert_eq!(String::from_utf8(decoded).unwrap(), RECORDS);
    let plain = encode_text(dir.path(), RECORDS, "plain");
    let records = |text: String| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("metadata"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        records(support::stdout_of(&["dump"], &out)),
        records(support::stdout_of(&["dump"], &plain))
    );
}

#[test]
fn inspect_prints_the_embedded_dtd_verbatim_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = encode_text(dir.path(), RECORDS, "t");
    let dtd = std::fs::read(hatf10()).unwrap();
    hatf()
        .args(["inspect", "--dtd"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::eq(dtd.as_slice()));
    // The text description names the totals and every section with its codec.
    hatf()
        .arg("inspect")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("1 blocks, 9 records"))
        .stdout(predicate::str::contains("  section 0: element width"));
    let json = hatf()
        .args(["inspect", "--json"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let value: serde_json::Value = serde_json::from_slice(&json).expect("inspect --json is JSON");
    // 6 records of the text, plus the metadata the writer added: one widening `size`, and two
    // taking `thread` out of `default 0` (interpretation `none`, then a width) for thread 7.
    assert_eq!(value["total_records"], 9, "{value}");
    let lines = hatf()
        .args(["dump", "--json"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    for line in String::from_utf8(lines).unwrap().lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

#[test]
fn a_bad_text_line_is_refused_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.txt");
    std::fs::write(&input, "section number=1\nalloc size=16 adress=4096\n").unwrap();
    hatf()
        .args(["encode", "--from", "text", "--dtd"])
        .arg(hatf10())
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("bad.hatf"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.txt: 2:"));
    assert!(!dir.path().join("bad.hatf").exists());
}

#[test]
fn dump_reads_a_trace_stored_with_a_format_model() {
    let dir = tempfile::tempdir().unwrap();
    let text = "= Start\n@ ./prog:[0x1234] + 0x55d150bc4740 0x10\n@ ./prog:[0x1240] - 0x55d150bc4740\n= End\n";
    let input = dir.path().join("t.mtrace");
    std::fs::write(&input, text).unwrap();
    let file = dir.path().join("t.hatf");
    hatf()
        .arg("encode")
        .arg(&input)
        .arg("-o")
        .arg(&file)
        .assert()
        .success();
    hatf()
        .arg("dump")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::eq(
            "start\nmalloc site=\"./prog:[0x1234]\" address=94357491042112 size=16\nfree site=\"./prog:[0x1240]\" address=94357491042112\nend\n",
        ));
    hatf()
        .arg("decode")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::eq(text.as_bytes()));
}
