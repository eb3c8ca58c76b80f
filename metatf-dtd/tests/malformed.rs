//! Every file in `tests/malformed/` must be rejected, and the rendered errors are pinned by
//! snapshots (one per file, `snapshots/malformed__<file>.snap`).

use std::path::Path;

#[test]
fn every_malformed_dtd_is_rejected_with_a_pinned_message() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/malformed exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "dtd"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 30,
        "expected at least 30 malformed DTDs, found {}",
        files.len()
    );
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable file");
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let errors = match metatf_dtd::parse_schema(&text, &name) {
            Ok(_) => panic!("{name} should be rejected"),
            Err(e) => e,
        };
        assert!(!errors.is_empty());
        for d in errors.iter() {
            assert!(
                d.line >= 1 && d.column >= 1,
                "{name}: bad position in {d:?}"
            );
            assert!(
                d.hint.is_some(),
                "{name}: every error carries a hint: {d:?}"
            );
        }
        let stem = path.file_stem().and_then(|n| n.to_str()).unwrap_or("?");
        insta::assert_snapshot!(stem, errors.to_string());
    }
}
