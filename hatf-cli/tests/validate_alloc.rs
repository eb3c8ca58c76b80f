//! `hatf validate` on allocation traces: each kind of problem on its line, text and JSON, the
//! exit status, binary (`.hatf`) inputs, and the real traces of the corpus.

mod support;

use support::{corpus, hatf};

/// An mtrace log with one problem of each kind a trace can show.
const BAD_MTRACE: &str = "= Start
@ ./prog:[0x401136] + 0x1000 0x10
@ ./prog:[0x401140] - 0x1000
@ ./prog:[0x401150] - 0x1000
@ ./prog:[0x401160] - 0x2000
@ ./prog:[0x401170] < 0x3000
@ ./prog:[0x401170] > 0x4000 0x20
@ ./prog:[0x401180] + 0x4000 0x8
@ ./prog:[0x401190] < 0x1000
@ ./prog:[0x401190] > 0x6000 0x40
@ ./prog:[0x4011a0] - 0x6000
= End
";

fn write(dir: &tempfile::TempDir, name: &str, text: &[u8]) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_problem_of_an_mtrace_log_is_printed_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "bad.mtrace", BAD_MTRACE.as_bytes());
    let out = hatf().arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let name = path.display().to_string();
    let expected = [
        "4: double free of block 0x1000 (freed on line 3)",
        "5: free of block 0x2000, which was never allocated",
        "6: realloc of block 0x3000, which was never allocated",
        "8: block 0x4000 is allocated again while live (allocated on line 6, never freed)",
        "9: realloc of block 0x1000, freed on line 3",
        "8: leak: block 0x4000 of 8 bytes is never freed",
    ]
    .map(|l| format!("{name}:{l}\n"))
    .concat();
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("6 problems found"), "{stderr}");
}

#[test]
fn json_holds_every_problem_with_its_kind() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "bad.mtrace", BAD_MTRACE.as_bytes());
    let out = hatf()
        .args(["validate", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "mtrace");
    assert_eq!(v["count"], 6);
    assert_eq!(v["by_kind"]["leak"], 1);
    assert_eq!(v["by_kind"]["double-free"], 1);
    let problems = v["problems"].as_array().unwrap();
    let lines: Vec<(u64, &str)> = problems
        .iter()
        .map(|p| (p["line"].as_u64().unwrap(), p["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        lines,
        [
            (4, "double-free"),
            (5, "free-of-unknown"),
            (6, "realloc-of-unknown"),
            (8, "allocation-of-live"),
            (9, "realloc-of-freed"),
            (8, "leak"),
        ]
    );
}

#[test]
fn a_clean_trace_is_valid_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let text = "= Start\n@ ./p:[0x1] + 0x10 0x8\n@ ./p:[0x1] < 0x10\n@ ./p:[0x1] > 0x20 0x9\n@ ./p:[0x1] - 0x20\n= End\n";
    let path = write(&dir, "ok.mtrace", text.as_bytes());
    let out = hatf().arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}: valid `mtrace` trace\n", path.display())
    );
    let out = hatf()
        .args(["validate", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["count"], 0);
    assert_eq!(v["problems"], serde_json::json!([]));
}

#[test]
fn memory_replay_and_wee_alloc_problems_name_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let replay =
        "1: malloc 0xa0 16\n1: free 0xa0\n2: free 0xa0\n2: realloc 0xc0 0xb0 8\n2: free 0x0\n";
    let path = write(&dir, "t.txt", replay.as_bytes());
    let out = hatf()
        .args(["validate", "--from", "memory-replay"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let name = path.display();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{name}:3: double free of block 0xa0 (freed on line 2)\n\
             {name}:4: realloc of block 0xb0, which was never allocated\n\
             {name}:4: leak: block 0xc0 of 8 bytes is never freed\n"
        )
    );
    let wee = "Alloc(8),\nFree(0),\nFree(0),\nFree(5),\nAlloc(3),\n";
    let path = write(&dir, "w.trace", wee.as_bytes());
    let out = hatf()
        .args(["validate", "--from", "wee-alloc"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let name = path.display();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{name}:3: double free of allocation 0 (freed on line 2)\n\
             {name}:4: free of allocation 5, which was never allocated\n\
             {name}:5: leak: allocation 1 of 3 bytes is never freed\n"
        )
    );
}

#[test]
fn an_encoded_trace_is_validated_like_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let text = write(&dir, "bad.mtrace", BAD_MTRACE.as_bytes());
    let binary = dir.path().join("bad.hatf");
    hatf()
        .arg("encode")
        .arg(&text)
        .arg("-o")
        .arg(&binary)
        .assert()
        .success();
    let from_text = hatf().arg("validate").arg(&text).output().unwrap();
    let from_binary = hatf().arg("validate").arg(&binary).output().unwrap();
    assert_eq!(from_binary.status.code(), Some(1));
    let strip = |out: &[u8], name: &std::path::Path| {
        String::from_utf8_lossy(out).replace(&name.display().to_string(), "NAME")
    };
    assert_eq!(
        strip(&from_binary.stdout, &binary),
        strip(&from_text.stdout, &text)
    );
}

#[test]
fn corpus_allocation_traces_report_their_leaks() {
    for (file, from, leaks) in [
        ("malloc/glibc-mtrace/python-json.mtrace.zst", "auto", 527),
        ("malloc/android/systemui.zip", "auto", 53645),
        ("malloc/wee_alloc/dogfood.trace", "wee-alloc", 18868),
    ] {
        let Some(path) = corpus(file) else { return };
        let out = hatf()
            .args(["validate", "--json", "--from", from])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{file}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["by_kind"]["leak"], leaks, "{file}");
        assert_eq!(v["count"], leaks, "{file}: only leaks");
        assert_eq!(v["problems"].as_array().unwrap().len(), leaks, "{file}");
    }
}

#[test]
fn corpus_malloc_bench_trace_is_valid() {
    let Some(path) = corpus("malloc/malloc-bench/traces/grep.trace.gz") else {
        return;
    };
    let out = hatf().arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("valid `malloc-bench` trace\n"));
}

/// A malloc-bench `.trace.gz`: the gzip of a `Tracefile` protobuf holding `lines`.
fn malloc_bench(lines: &[&[u8]]) -> Vec<u8> {
    use std::io::Write;
    let mut message = Vec::new();
    for line in lines {
        message.extend_from_slice(&[0x0a, line.len() as u8]);
        message.extend_from_slice(line);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&message).unwrap();
    gz.finish().unwrap()
}

#[test]
fn malloc_bench_problems_name_their_records() {
    // malloc {result_id 1, input_size 16}; free {input_id 1}; free {input_id 7}.
    let malloc1: &[u8] = &[0x0a, 0x04, 0x08, 0x01, 0x10, 0x10];
    let free1: &[u8] = &[0x12, 0x02, 0x08, 0x01];
    let free7: &[u8] = &[0x12, 0x02, 0x08, 0x07];
    let dir = tempfile::tempdir().unwrap();
    let bytes = malloc_bench(&[malloc1, free1, free1, free7, malloc1]);
    let path = write(&dir, "t.trace.gz", &bytes);
    let out = hatf().arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let name = path.display();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{name}: record 3: double free of block id 1 (freed on record 2)\n\
             {name}: record 4: free of block id 7, which was never allocated\n\
             {name}: record 5: leak: block id 1 of 16 bytes is never freed\n"
        )
    );
    let out = hatf()
        .args(["validate", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["problems"][0]["record"], 3);
    assert_eq!(v["problems"][0]["kind"], "double-free");
}
