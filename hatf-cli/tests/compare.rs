//! `hatf compare` end to end.

use std::process::Command;

fn hatf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hatf"))
}

/// A small mtrace log with 64-bit addresses, a realloc and a calloc-sized block.
fn small_mtrace() -> String {
    let mut s = String::from("= Start\n");
    for i in 0..300u64 {
        let a = 0x5555_5555_9000 + 0x40 * i;
        s.push_str(&format!("@ ./prog:[0x401136] + {a:#x} {:#x}\n", 16 + i % 7));
        if i % 3 == 0 {
            s.push_str(&format!("@ ./prog:[0x401150] - {a:#x}\n"));
        }
    }
    s.push_str("= End\n");
    s
}

#[test]
fn no_arguments_compares_the_built_in_sample_as_json() {
    let out = hatf().args(["compare", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["traces"][0];
    assert_eq!(t["trace"], "sample.mtrace");
    assert_eq!(t["format"], "mtrace");
    let records = t["records"].as_u64().unwrap();
    assert!(records > 1000);
    let enc = t["encodings"].as_object().unwrap();
    let names: Vec<&str> = enc.keys().map(|k| k.as_str()).collect();
    for n in [
        "simple",
        "ascii",
        "hatf-naive",
        "hatf-best",
        "split",
        "hatf-splitaddr",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
        let e = &enc[n];
        let (raw, gz, zs) = (
            e["bytes"].as_u64().unwrap(),
            e["gzip"].as_u64().unwrap(),
            e["zstd"].as_u64().unwrap(),
        );
        assert!(gz < raw && zs < raw, "{n}: {raw} {gz} {zs}");
    }
    // 64-bit addresses: every simple record needs its continuation record.
    assert_eq!(enc["simple"]["bytes"].as_u64().unwrap(), 32 * records);
    assert!(enc["hatf-best"]["bytes"].as_u64() < enc["hatf-naive"]["bytes"].as_u64());
    assert_eq!(enc["hatf-best"]["bytes"], enc["hatf-splitaddr"]["bytes"]);
    let text = &t["text"];
    assert!(text["xz9"].as_u64().unwrap() < text["bytes"].as_u64().unwrap());
    assert!(text["gzip9"].as_u64().unwrap() > 0 && text["zstd19_long27"].as_u64().unwrap() > 0);
}

#[test]
fn csv_table_and_plot_for_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("small.mtrace");
    std::fs::write(&trace, small_mtrace()).unwrap();
    let plot = dir.path().join("sizes.svg");
    std::fs::write(&plot, "old").unwrap();

    let out = hatf()
        .arg("compare")
        .arg(&trace)
        .arg("--csv")
        .arg("--plot")
        .arg(&plot)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("trace,format,records,column,compressor,bytes,bytes_per_record")
    );
    // 300 mallocs + 100 frees.
    let simple: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains(",simple,none,"))
        .collect();
    assert_eq!(
        simple,
        ["small.mtrace,mtrace,400,simple,none,12800,32.0000"]
    );
    assert!(csv.contains(",text,xz-9,"));
    assert!(csv.contains(",hatf-best,zstd-19,"));

    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg"), "{svg:.40}");
    assert!(svg.contains("small.mtrace") && svg.contains("hatf-best + gzip-9"));
    assert!(svg.trim_end().ends_with("</svg>"));

    let table = hatf().arg("compare").arg(&trace).output().unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("small.mtrace"))
        .unwrap();
    assert!(row.contains("32.00 / "), "{row}");
}

#[test]
fn missing_input_fails_with_its_name() {
    let out = hatf()
        .args(["compare", "/nonexistent/trace.mtrace"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/trace.mtrace"), "{err}");
}

#[test]
fn unknown_format_fails() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("x.txt");
    std::fs::write(&trace, "hello\nworld\n").unwrap();
    let out = hatf().arg("compare").arg(&trace).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no allocation trace format"));
}
