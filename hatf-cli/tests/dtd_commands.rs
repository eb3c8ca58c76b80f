//! `hatf dtd check` and `hatf dtd fmt` on the built binary.

use predicates::prelude::*;
use std::path::PathBuf;

mod support;
use support::hatf;

fn repo_dtds() -> Vec<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("dtds/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "dtd"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no DTDs in {}", dir.display());
    files
}

#[test]
fn every_shipped_dtd_checks_clean() {
    hatf()
        .args(["dtd", "check"])
        .args(repo_dtds())
        .assert()
        .success();
}

#[test]
fn check_reports_every_error_with_position_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.dtd");
    std::fs::write(
        &bad,
        "tag.width=1;\nsection heap 1 {\n  alloc : (tag, sise) { tag.value = 4; }\n  free : (tag) { tag.value = 4; }\n}\n",
    )
    .unwrap();
    let assert = hatf().args(["dtd", "check"]).arg(&bad).assert().code(1);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("bad.dtd:3:17"),
        "first error not located:\n{stderr}"
    );
    assert!(
        stderr.contains("bad.dtd:4:30"),
        "second error not reported:\n{stderr}"
    );
    assert!(
        stderr.contains("hatf: error: 1 of 1 DTD files have errors"),
        "{stderr}"
    );
}

#[test]
fn fmt_is_idempotent_on_shipped_dtds() {
    let dir = tempfile::tempdir().unwrap();
    for dtd in repo_dtds() {
        let once = hatf()
            .args(["dtd", "fmt"])
            .arg(&dtd)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let path = dir.path().join("once.dtd");
        std::fs::write(&path, &once).unwrap();
        hatf()
            .args(["dtd", "fmt"])
            .arg(&path)
            .assert()
            .success()
            .stdout(predicate::eq(once.as_slice()));
    }
}

#[test]
fn compile_writes_the_same_code_as_the_golden_file() {
    let dtd = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds/hatf10.dtd"));
    let golden = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/hatf10.rs"
    ));
    let want = std::fs::read(&golden).expect("golden file for hatf10.dtd");
    hatf()
        .args(["dtd", "compile"])
        .arg(&dtd)
        .assert()
        .success()
        .stdout(predicate::eq(want.as_slice()));
}
