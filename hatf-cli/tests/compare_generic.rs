//! `hatf compare` on every kind of trace: Elephant Tracks (ET2, ET3), JVM, and the record text
//! form with `--dtd`. Every column has a size, and the generic engine's sizes are those of the
//! files `hatf encode --from text --dtd X --model plain|auto` writes from `hatf dump`'s records.

use std::path::{Path, PathBuf};
use std::process::Command;

fn hatf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hatf"))
}

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// A corpus file, or `None` (with a message) when the corpus is absent.
fn corpus(path: &str) -> Option<PathBuf> {
    let p = Path::new(CORPUS).join(path);
    if p.exists() {
        Some(p)
    } else {
        println!("skipped: no {} (the corpus is absent)", p.display());
        None
    }
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("hatf runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `hatf compare --json ARGS`: the one trace's object.
fn compare_json(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let out = run(hatf().args(["compare", "--json"]).args(args));
    let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    v["traces"][0].clone()
}

/// The sizes of the files `hatf encode --from text --dtd DTD --model plain|auto` writes from
/// the record text `records`.
fn encoded_by_hand(dir: &Path, dtd: &Path, records: &Path) -> (u64, u64) {
    let size = |model: &str| {
        let out = dir.join(format!("{model}.hatf"));
        run(hatf()
            .args(["encode", "--from", "text", "--dtd"])
            .arg(dtd)
            .args(["--model", model, "-f", "-o"])
            .arg(&out)
            .arg(records));
        std::fs::metadata(&out).expect("encoded file").len()
    };
    (size("plain"), size("auto"))
}

/// The record text `hatf dump` prints for `hatf encode --keep-bad-lines [--from FORMAT] trace`.
fn dumped(dir: &Path, trace: &Path, from: Option<&str>) -> PathBuf {
    let bin = dir.join("trace.hatf");
    let mut encode = hatf();
    encode
        .args(["encode", "--keep-bad-lines", "-f", "-o"])
        .arg(&bin);
    if let Some(f) = from {
        encode.args(["--from", f]);
    }
    run(encode.arg(trace));
    let text = run(hatf().arg("dump").arg(&bin));
    let records = dir.join("trace.rec");
    std::fs::write(&records, text).expect("write records");
    records
}

fn bytes(v: &serde_json::Value) -> u64 {
    v["bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("no size: {v}"))
}

/// Every column of a built-in format's row has a size, and the generic ones are the sizes of
/// the files encoded by hand from `hatf dump`'s records of the same trace.
fn check_built_in(trace: &Path, format: &str, dtd: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    // More lines than any of these traces has: the generic engine gets the whole trace.
    let t = compare_json(&[
        trace.as_os_str(),
        "--generic-lines".as_ref(),
        "100000000".as_ref(),
    ]);
    assert_eq!(t["format"], format, "{t}");
    assert!(t["records"].as_u64().unwrap() > 0, "{t}");
    let specific = bytes(&t["auto"]);
    let g = &t["generic"];
    assert_eq!(g["dtd"], dtd);
    assert!(g["lines"].is_null(), "{g}");
    assert_eq!(g["specific"].as_u64(), Some(specific));
    for peer in ["gzip9", "zstd19_long27", "xz9", "best"] {
        assert!(t["text"][peer].as_u64().unwrap() > 0, "{peer}");
    }
    let (plain, auto) = (bytes(&g["plain"]), bytes(&g["auto"]));
    assert!(plain > 0 && auto > 0 && specific > 0);
    let ratio = g["auto_over_specific"].as_f64().unwrap();
    assert!((ratio - auto as f64 / specific as f64).abs() < 1e-9);

    let records = dumped(dir.path(), trace, Some(format));
    let lines = std::fs::read_to_string(&records).unwrap().lines().count() as u64;
    assert_eq!(g["records"].as_u64(), Some(lines));
    assert_eq!(
        encoded_by_hand(dir.path(), &repo(dtd), &records),
        (plain, auto),
        "generic plain and auto differ from hatf encode --from text --dtd {dtd}"
    );
}

#[test]
fn an_et2_trace_gets_every_column() {
    if let Some(trace) = corpus("et/et2-java/data/hello_world/trace.bz2") {
        check_built_in(&trace, "et2", "dtds/records/et2.dtd");
    }
}

#[test]
fn a_malloc_bench_trace_gets_every_column() {
    // Its protobuf leaves fields out (every malloc's alignment): the records name them in
    // `absent`, so the generic engine reads them.
    if let Some(trace) = corpus("malloc/malloc-bench/traces/server.trace.gz") {
        check_built_in(&trace, "malloc-bench", "dtds/records/malloc-bench.dtd");
    }
}

#[test]
fn generic_lines_zero_is_refused_with_a_reason() {
    let out = hatf()
        .args(["compare", "--generic-lines", "0"])
        .output()
        .expect("hatf runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--generic-lines 0: give how many lines"),
        "{err}"
    );
}

#[test]
fn an_et3_trace_gets_every_column() {
    if let Some(trace) = corpus("et/et3-merlin/pipeline_results/SimpleTrace/trace_with_deaths") {
        check_built_in(&trace, "et3", "dtds/records/et3.dtd");
    }
}

/// A JVM trace as TraceVis reads it (seed 002): no real one is public, so it is made here.
fn jvm_text() -> String {
    let mut text = String::from("VS:100\nVI:105\nCL:106:Main\nCL:107:java/lang/String\n");
    for k in 0..3000u64 {
        let t = 1 + k % 2;
        let id = 1_000_003 * (k + 1) % 2_147_483_647;
        text.push_str(&format!("MN:{}:{t}:Main:step:0\n", 110 + 3 * k));
        text.push_str(&format!("OA:{}:java/lang/String:{id}\n", 110 + 3 * k));
        text.push_str(&format!(
            "MN:{}:{t}:java/lang/String:<init>:{id}\n",
            111 + 3 * k
        ));
        text.push_str(&format!("MX:{}:{t}:java/lang/String:<init>\n", 111 + 3 * k));
        text.push_str(&format!("MX:{}:{t}:Main:step\n", 112 + 3 * k));
    }
    text.push_str("VD:9400\n");
    text
}

#[test]
fn a_jvm_trace_gets_every_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("run.trace");
    std::fs::write(&trace, jvm_text()).unwrap();
    check_built_in(&trace, "jvm", "dtds/records/jvm.dtd");
}

#[test]
fn the_record_text_form_with_a_dtd_gets_the_generic_and_text_columns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let records = dumped(dir.path(), &repo("samples/sample.mtrace"), None);
    let dtd = repo("dtds/records/mtrace.dtd");
    let t = compare_json(&[records.as_os_str(), "--dtd".as_ref(), dtd.as_os_str()]);
    assert_eq!(t["format"], "dtd");
    let g = &t["generic"];
    let (plain, auto) = (bytes(&g["plain"]), bytes(&g["auto"]));
    assert!(plain > 0 && auto > 0);
    assert!(
        g["specific"].is_null() && g["auto_over_specific"].is_null(),
        "{g}"
    );
    for peer in ["gzip9", "zstd19_long27", "xz9", "best"] {
        assert!(t["text"][peer].as_u64().unwrap() > 0, "{peer}");
    }
    assert!(t["auto"].is_null());
    let lines = std::fs::read_to_string(&records).unwrap().lines().count() as u64;
    assert_eq!(t["records"].as_u64(), Some(lines));
    assert_eq!(encoded_by_hand(dir.path(), &dtd, &records), (plain, auto));
}

#[test]
fn a_foreign_record_text_with_its_dtd_matches_hatf_encode() {
    let (Some(raw), Some(dtd), Some(script)) = (
        corpus("foreign/heaptrack-perl-hash.raw.zst"),
        corpus("foreign/heaptrack.dtd"),
        corpus("foreign/to_records.py"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    // The first 40,000 lines, converted by the corpus's own script.
    let text = zstd::stream::decode_all(std::fs::File::open(raw).unwrap()).unwrap();
    let end = text
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(39_999)
        .map_or(text.len(), |(i, _)| i + 1);
    let mut convert = match Command::new("python3")
        .arg(&script)
        .arg("heaptrack")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            println!("skipped: no python3 to run to_records.py ({e})");
            return;
        }
    };
    let mut stdin = convert.stdin.take().unwrap();
    let prefix = text[..end].to_vec();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(&prefix).unwrap();
    });
    let out = convert.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert!(out.status.success());
    let records = dir.path().join("heaptrack.rec");
    std::fs::write(&records, &out.stdout).unwrap();

    let t = compare_json(&[records.as_os_str(), "--dtd".as_ref(), dtd.as_os_str()]);
    let g = &t["generic"];
    let (plain, auto) = (bytes(&g["plain"]), bytes(&g["auto"]));
    assert_eq!(encoded_by_hand(dir.path(), &dtd, &records), (plain, auto));
    // The records hold the text's information, so the engine beats gzip on them.
    assert!(auto < t["text"]["gzip9"].as_u64().unwrap(), "{t}");
}

#[test]
fn a_dtd_with_line_patterns_reads_the_traces_own_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = repo("samples/sample.mtrace");
    let dtd = repo("dtds/records/mtrace.dtd");
    let t = compare_json(&[trace.as_os_str(), "--dtd".as_ref(), dtd.as_os_str()]);
    let g = &t["generic"];
    let auto = bytes(&g["auto"]);
    let out = dir.path().join("lines.hatf");
    run(hatf()
        .args(["encode", "--dtd"])
        .arg(&dtd)
        .arg("-o")
        .arg(&out)
        .arg(&trace));
    assert_eq!(std::fs::metadata(&out).unwrap().len(), auto);
}

#[test]
fn a_prefix_for_the_generic_engine_is_said_and_measured_against_the_same_lines() {
    let out = run(hatf().args(["compare", "--generic-lines", "5000"]));
    let table = String::from_utf8(out).unwrap();
    assert!(
        table.contains(
            "note: generic engine on sample.mtrace: dtds/records/mtrace.dtd, the first 5000 lines"
        ),
        "{table}"
    );
    let t = compare_json(&["--generic-lines".as_ref(), "5000".as_ref()]);
    let g = &t["generic"];
    assert_eq!(g["lines"].as_u64(), Some(5000));
    // The sample's 5000 first lines hold fewer records than the whole trace, and the
    // format-specific size set against them is of those lines too.
    assert!(g["records"].as_u64().unwrap() <= 5000);
    assert!(g["specific"].as_u64().unwrap() < bytes(&t["auto"]));
}

/// The main table's columns and notes, numbers and spacing left out: its shape is stable, its
/// figures move with the engine.
#[test]
fn the_table_names_every_column() {
    let out = run(hatf().args(["compare", "--generic-lines", "2000"]));
    let table = String::from_utf8(out).unwrap();
    let head: Vec<String> = table
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let words: Vec<String> = l
                .split_whitespace()
                .map(|w| {
                    if w.chars().any(|c| c.is_ascii_digit()) && !w.contains('-') {
                        "#".to_string()
                    } else {
                        w.to_string()
                    }
                })
                .collect();
            words.join(" ")
        })
        .collect();
    insta::assert_snapshot!(head.join("\n"));
}
