//! A trace's own text through line patterns on the built binary: `encode --dtd`, `--from any`,
//! `--strict`, `dtd infer`, and `decode` giving back the same bytes.

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn hatf() -> Command {
    Command::cargo_bin("hatf").expect("the hatf binary is built for integration tests")
}

fn lackey_dtd() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dtds/examples/lackey.dtd"
    ))
}

/// Lackey-style lines with a line no pattern spells, a CRLF line and no final newline.
const TEXT: &[u8] = b"==1== Lackey\nI  0401ab70,3\nI  0401ab80,4\n S 1fff0005e8,8\n L 04033e06,1\r\n M 04033e06,1\nI  0401ab73,5";

fn round_trip(dir: &Path, args: &[&str]) {
    let input = dir.join("trace.txt");
    std::fs::write(&input, TEXT).unwrap();
    let out = dir.join("trace.hatf");
    hatf()
        .arg("encode")
        .args(args)
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("-f")
        .assert()
        .success();
    let back = dir.join("back.txt");
    hatf()
        .arg("decode")
        .arg(&out)
        .arg("-o")
        .arg(&back)
        .arg("-f")
        .assert()
        .success();
    assert_eq!(std::fs::read(&back).unwrap(), TEXT);
    // The address 0x0401ab70, whatever the field is called.
    hatf()
        .arg("dump")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("=67218288 "));
}

#[test]
fn encode_with_a_dtd_decodes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let dtd = lackey_dtd();
    round_trip(dir.path(), &["--dtd", dtd.to_str().unwrap()]);
}

#[test]
fn encode_from_any_decodes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(dir.path(), &["--from", "any"]);
}

#[test]
fn strict_refuses_the_first_unmatched_line_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("trace.txt");
    std::fs::write(&input, TEXT).unwrap();
    hatf()
        .args(["encode", "--strict", "--dtd"])
        .arg(lackey_dtd())
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("t.hatf"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("trace.txt: 1:1:"));
}

#[test]
fn dtd_infer_writes_a_valid_dtd() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("trace.txt");
    std::fs::write(&input, b"op 1 0x10\nop 2 0x20\nop 3 0x30\n").unwrap();
    let out = hatf()
        .args(["dtd", "infer"])
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let dtd = String::from_utf8(out).unwrap();
    assert!(dtd.contains("line = \"op \" n1 \" \" n2:#x;"), "{dtd}");
    let path = dir.path().join("my.dtd");
    std::fs::write(&path, &dtd).unwrap();
    hatf().args(["dtd", "check"]).arg(&path).assert().success();
}
