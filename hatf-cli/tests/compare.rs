//! `hatf compare` end to end.

use std::process::Command;

mod support;

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

    let out = support::succeeded(
        hatf()
            .arg("compare")
            .arg(&trace)
            .arg("--csv")
            .arg("--plot")
            .arg(&plot)
            .output(),
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("trace,format,records,column,compressor,bytes,bytes_per_record,encode_ms,decode_ms")
    );
    // 300 mallocs + 100 frees.
    let simple: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains(",simple,none,"))
        .collect();
    assert_eq!(simple.len(), 1, "{simple:?}");
    assert!(
        simple[0].starts_with("small.mtrace,mtrace,400,simple,none,12800,32.0000,"),
        "{}",
        simple[0]
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
    assert!(String::from_utf8_lossy(&out.stderr).contains("no trace format recognises"));
}

/// The milliseconds of a CSV line's last two fields; `None` when they are empty.
fn csv_times(line: &str) -> Option<(f64, f64)> {
    let fields: Vec<&str> = line.split(',').collect();
    let [.., encode, decode] = fields.as_slice() else {
        return None;
    };
    Some((encode.parse().ok()?, decode.parse().ok()?))
}

#[test]
fn every_variant_is_timed_in_the_table_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("small.mtrace");
    std::fs::write(&trace, small_mtrace()).unwrap();

    let csv = hatf()
        .arg("compare")
        .arg(&trace)
        .arg("--csv")
        .output()
        .unwrap();
    assert!(csv.status.success());
    let csv = String::from_utf8(csv.stdout).unwrap();
    // 7 encodings x 3 variants, hatf auto, generic plain and auto, and the text with 3 peers.
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 7 * 3 + 1 + 2 + 4, "{csv}");
    for row in &rows {
        if row.contains(",text,none,") {
            assert!(row.ends_with(",,"), "{row}");
            continue;
        }
        let (encode, decode) = csv_times(row).unwrap_or_else(|| panic!("no times: {row}"));
        assert!(encode > 0.0 && decode > 0.0, "{row}");
    }

    let json = hatf()
        .arg("compare")
        .arg(&trace)
        .arg("--json")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let t = &v["traces"][0];
    for (name, e) in t["encodings"].as_object().unwrap() {
        for variant in ["bytes", "gzip", "zstd"] {
            let times = &e["times_ms"][variant];
            assert!(
                times["encode_ms"].as_f64().unwrap() > 0.0,
                "{name} {variant}"
            );
            assert!(
                times["decode_ms"].as_f64().unwrap() > 0.0,
                "{name} {variant}"
            );
        }
    }
    assert!(t["auto"]["times_ms"]["decode_ms"].as_f64().unwrap() > 0.0);
    for peer in ["gzip9", "zstd19_long27", "xz9"] {
        assert!(t["text"]["times_ms"][peer]["encode_ms"].as_f64().unwrap() > 0.0);
    }

    let table = hatf().arg("compare").arg(&trace).output().unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    let timed = table
        .lines()
        .skip_while(|l| !l.starts_with("Times"))
        .filter(|l| l.starts_with("small.mtrace"))
        .count();
    assert_eq!(timed, rows.len(), "{table}");
    assert!(
        table.contains("hatf-best + zstd-19") && table.contains("text + xz-9"),
        "{table}"
    );
}

#[test]
fn the_chart_draws_every_compressed_variant_in_its_own_colour_with_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("small.mtrace");
    std::fs::write(&trace, small_mtrace()).unwrap();
    let plot = dir.path().join("chart.svg");
    let out = hatf()
        .arg("compare")
        .arg(&trace)
        .arg("--json")
        .arg("--plot")
        .arg(&plot)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let svg = std::fs::read_to_string(&plot).unwrap();

    // The legend: one swatch per series, `fill` then the label.
    let legend: Vec<(String, String)> = svg
        .lines()
        .filter(|l| l.starts_with("<rect x=") && l.contains(r#"width="12" height="12""#))
        .map(|l| {
            let fill = l
                .split("fill=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let label = l.split("\">").last().unwrap().trim_end_matches("</text>");
            (fill.to_string(), label.replace("&amp;", "&"))
        })
        .collect();
    let mut expected: Vec<String> = Vec::new();
    for name in v["traces"][0]["encodings"].as_object().unwrap().keys() {
        expected.push(format!("{name} + gzip-9"));
        expected.push(format!("{name} + zstd-19"));
    }
    expected.extend(
        [
            "hatf auto",
            "generic plain",
            "generic auto",
            "text + gzip-9",
            "text + zstd-19-long27",
            "text + xz-9",
        ]
        .map(String::from),
    );
    let labels: Vec<&String> = legend.iter().map(|(_, l)| l).collect();
    for e in &expected {
        assert!(
            labels.contains(&e),
            "{e} missing from the legend {labels:?}"
        );
    }
    assert_eq!(legend.len(), expected.len());
    let colours: std::collections::HashSet<&String> = legend.iter().map(|(c, _)| c).collect();
    assert_eq!(
        colours.len(),
        legend.len(),
        "two series share a colour: {legend:?}"
    );

    // Three panels (size, encode time, decode time), each with a bar and a value per series.
    let bars = svg
        .lines()
        .filter(|l| l.starts_with("<rect x=") && l.contains("<title>"))
        .count();
    assert_eq!(bars, 3 * expected.len());
    let labels = svg
        .lines()
        .filter(|l| l.contains(r#"font-size="9""#))
        .count();
    assert_eq!(labels, bars);
    // The xz bar's label is its bytes per record, as the JSON gives it.
    let t = &v["traces"][0];
    let xz = t["text"]["xz9"].as_f64().unwrap() / t["records"].as_f64().unwrap();
    assert!(
        svg.contains(&format!("text + xz-9 = {xz:.2} bytes per record")),
        "{xz:.2}"
    );
}
