//! Replays the cargo-fuzz seed corpus (`/fuzz/corpus/dtd_parser` at the repository root) on
//! stable Rust, with the same checks as the fuzz target: no panic, and formatting keeps the schema.

use std::path::Path;

#[test]
fn every_corpus_file_is_handled_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/dtd_parser");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: no fuzz corpus at {}", dir.display());
        return;
    };
    let mut replayed = 0;
    for entry in entries {
        let path = entry.expect("readable entry").path();
        let bytes = std::fs::read(&path).expect("readable file");
        // The fuzz target only sees UTF-8; libFuzzer-found files may be anything.
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let parsed = metatf_dtd::parse_schema(text, "corpus.dtd");
        if let Ok(formatted) = metatf_dtd::format_dtd(text, "corpus.dtd") {
            if let Ok(schema) = parsed {
                assert_eq!(
                    metatf_dtd::parse_schema(&formatted, "corpus.dtd").ok(),
                    Some(schema),
                    "{}",
                    path.display()
                );
            }
        }
        replayed += 1;
    }
    assert!(
        replayed >= 5,
        "expected the seed corpus, replayed {replayed} files"
    );
}
