//! Name files (class/method/field lists) travel inside the binary and come back byte for byte.

mod et_support;

use std::path::PathBuf;

use et_support::*;
use hatf::format::TraceFormat;
use hatf::internal::formats::et::sections::names;
use hatf::internal::formats::et::{ET2, ET3};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hatf-et-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn check_dir(format: &dyn TraceFormat, dir: &std::path::Path, trace: &[u8], tag: &str) -> usize {
    let expected: Vec<(String, Vec<u8>)> = {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .expect("dir")
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                names::is_name_file(&n).then(|| (n, std::fs::read(e.path()).expect("read")))
            })
            .collect();
        v.sort();
        v
    };
    assert!(!expected.is_empty(), "{} has no name files", dir.display());
    let (bin, _) = encode(format, trace, "t", true, Some(dir.to_path_buf())).expect("encodes");
    let out = scratch(tag);
    let back = decode(format, &bin, Some(out.clone())).expect("decodes");
    assert_eq!(back, trace);
    for (n, bytes) in &expected {
        let got = std::fs::read(out.join(n)).unwrap_or_else(|e| panic!("{n}: {e}"));
        assert!(got == *bytes, "{} {n} differs", dir.display());
    }
    let written = std::fs::read_dir(&out).expect("out").count();
    assert_eq!(written, expected.len());
    let _ = std::fs::remove_dir_all(&out);
    expected.len()
}

#[test]
fn et2_java_name_lists_round_trip() {
    for p in trace_paths("et2-java") {
        let t = read_trace(&p);
        let dir = p.parent().expect("dir");
        assert_eq!(check_dir(&ET2, dir, &t.text, "et2"), 3);
    }
}

#[test]
fn et3_txt_and_large_name_files_round_trip() {
    let Some(c) = corpus() else { return };
    let simple = c.join("et3-merlin/pipeline_results/SimpleTrace");
    let t = read_trace(&simple.join("trace"));
    assert_eq!(check_dir(&ET3, &simple, &t.text, "et3"), 3);
    // et3-large keeps `classs.list.zst` etc.; they are stored as they are (compressed bytes).
    let large = c.join("et3-large/javac-tests");
    assert_eq!(check_dir(&ET3, &large, b"M 1 0 7\n", "large"), 3);
}

#[test]
fn names_are_ignored_without_a_folder_on_decode() {
    let Some(c) = corpus() else { return };
    let simple = c.join("et3-merlin/pipeline_results/SimpleTrace");
    let t = read_trace(&simple.join("trace"));
    let (bin, _) = encode(&ET3, &t.text, "t", false, Some(simple)).expect("encodes");
    assert_eq!(decode(&ET3, &bin, None).expect("decodes"), t.text);
}
