//! Elephant Tracks through the binary: `hatf stats` names methods and classes from the name
//! files stored in a binary trace or given beside a text one, and an ET2 trace (compressed or
//! not) is detected as ET2.

mod support;

use std::path::Path;
use support::{corpus, hatf, stats_json};

/// A small ET2 trace with no `U` records: methods 5 and 6, allocations in classes 7 and 8.
const TRACE: &str = "M 5 0 42\nN 1001 24 7 55 0 42\nE 5 42\nM 6 0 42\nN 1002 32 7 56 0 42\n\
                     A 1003 40 8 57 4 42\nE 6 42\nM 5 0 42\nE 5 42\n";

/// Name files in the two shapes ET2 writes them.
fn write_names(dir: &Path) {
    std::fs::write(
        dir.join("classes.list"),
        "7  com/example/Node\n8  com/example/Leaf\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("methods.list"),
        "5, com/example/Main, run\n6, com/example/Node, <init>\n",
    )
    .unwrap();
}

fn top(v: &serde_json::Value, list: &str) -> Vec<(String, u64, Option<u64>)> {
    v[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["count"].as_u64().unwrap(),
                r["bytes"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn stats_of_a_binary_trace_names_methods_and_classes_from_its_stored_name_files() {
    let dir = tempfile::tempdir().unwrap();
    let names = dir.path().join("names");
    std::fs::create_dir(&names).unwrap();
    write_names(&names);
    let text = dir.path().join("trace.txt");
    std::fs::write(&text, TRACE).unwrap();
    let binary = dir.path().join("trace.hatf");
    hatf()
        .args(["encode", "--from", "et2", "--names"])
        .arg(&names)
        .arg(&text)
        .arg("-o")
        .arg(&binary)
        .assert()
        .success();

    let v = stats_json([binary.as_os_str()]);
    assert_eq!(
        top(&v, "top_methods"),
        [
            ("com/example/Main.run".to_string(), 2, None),
            ("com/example/Node.<init>".to_string(), 1, None)
        ]
    );
    assert_eq!(
        top(&v, "top_classes"),
        [
            ("com/example/Node".to_string(), 2, Some(56)),
            ("com/example/Leaf".to_string(), 1, Some(40))
        ]
    );

    let table = hatf().arg("stats").arg(&binary).output().unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.contains("com/example/Main.run") && table.contains("com/example/Leaf"),
        "{table}"
    );
    assert!(
        !table.contains("method 5") && !table.contains("class 7"),
        "{table}"
    );
}

#[test]
fn stats_of_a_text_trace_names_what_names_gives_and_shows_ids_without_it() {
    let dir = tempfile::tempdir().unwrap();
    write_names(dir.path());
    let text = dir.path().join("trace.txt");
    std::fs::write(&text, TRACE).unwrap();

    let named = stats_json(["--names".as_ref(), dir.path().as_os_str(), text.as_os_str()]);
    assert_eq!(top(&named, "top_methods")[0].0, "com/example/Main.run");
    assert_eq!(top(&named, "top_classes")[0].0, "com/example/Node");

    let bare = stats_json([text.as_os_str()]);
    assert_eq!(top(&bare, "top_methods")[0].0, "method 5");
    assert_eq!(top(&bare, "top_classes")[0].0, "class 7");
    // Only the names differ.
    assert_eq!(top(&bare, "top_classes")[0].1, 2);
}

#[test]
fn a_missing_names_folder_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("trace.txt");
    std::fs::write(&text, TRACE).unwrap();
    let out = hatf()
        .args(["stats", "--names", "/nonexistent/names"])
        .arg(&text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/names"));
}

/// The format `hatf encode -v` detects for `input`.
fn detected(input: &Path, out: &Path) -> String {
    let run = support::succeeded(
        hatf()
            .args(["encode", "-v", "-f", "--keep-bad-lines"])
            .arg(input)
            .arg("-o")
            .arg(out)
            .output(),
    );
    let err = String::from_utf8_lossy(&run.stderr);
    let at = err.find("detected format `").expect("-v names the format") + 17;
    err[at..].split('`').next().unwrap().to_string()
}

#[test]
fn et2_java_traces_are_detected_as_et2_compressed_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.hatf");
    for program in ["hello_world", "lots_of_allocs", "methods", "new_call"] {
        let Some(packed) = corpus(&format!("et/et2-java/data/{program}/trace.bz2")) else {
            return;
        };
        assert_eq!(detected(&packed, &out), "et2", "{program} trace.bz2");
        let mut text = Vec::new();
        std::io::Read::read_to_end(
            &mut bzip2::read::BzDecoder::new(std::fs::File::open(&packed).unwrap()),
            &mut text,
        )
        .unwrap();
        let plain = dir.path().join(format!("{program}.trace"));
        std::fs::write(&plain, &text).unwrap();
        assert_eq!(detected(&plain, &out), "et2", "{program} as text");
    }
    // ET3 traces stay ET3.
    if let Some(et3) = corpus("et/et3-merlin/pipeline_results/Methods/trace") {
        assert_eq!(detected(&et3, &out), "et3");
    }
}
