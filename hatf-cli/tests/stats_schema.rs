//! `hatf stats` through the binary: the same JSON keys for allocation, Elephant Tracks and JVM
//! traces, the size histogram, call sites, top threads, the live set as CSV and as an SVG.

mod support;

use support::{corpus, hatf};

const MTRACE: &str = "= Start
@ ./prog:[0x401136] + 0x1000 0x10
@ ./prog:[0x401136] + 0x2000 0x10
@ ./prog:[0x401140] + 0x3000 0x400
@ ./prog:[0x401150] - 0x1000
@ ./prog:[0x401150] - 0x3000
= End
";

fn stats_json(args: &[&str], path: &std::path::Path) -> serde_json::Value {
    support::stats_json(
        args.iter()
            .map(std::ffi::OsStr::new)
            .chain([path.as_os_str()]),
    )
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn an_mtrace_log_gives_sizes_sites_and_the_live_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mtrace");
    std::fs::write(&path, MTRACE).unwrap();
    let v = stats_json(&[], &path);
    assert_eq!(v["schema"], "hatf-stats/1");
    assert_eq!(v["records"], 5);
    assert_eq!(v["objects_allocated"], 3);
    assert_eq!(v["objects_freed"], 2);
    assert_eq!(v["peak_live_bytes"], 0x420);
    assert_eq!(v["live_at_end"]["bytes"], 0x10);
    let sizes: Vec<(u64, u64)> = v["size_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["from"].as_u64().unwrap(), b["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(sizes.first(), Some(&(16, 2)));
    assert_eq!(sizes.last(), Some(&(1024, 1)));
    assert_eq!(v["top_sites_by_bytes"][0]["name"], "./prog:[0x401140]");
    assert_eq!(v["top_sites_by_count"][0]["name"], "./prog:[0x401136]");
    assert_eq!(v["top_sites_by_count"][0]["count"], 2);
    assert_eq!(v["top_threads"][0]["count"], 5);
    let csv = hatf().args(["stats", "--csv"]).arg(&path).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&csv.stdout),
        "events,live_objects,live_bytes\n1,1,16\n2,2,32\n3,3,1056\n4,2,1040\n5,1,16\n"
    );
    let svg = dir.path().join("live.svg");
    hatf()
        .args(["stats", "-q", "--plot"])
        .arg(&svg)
        .arg(&path)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("<polyline"),
        "{svg}"
    );
    assert!(svg.contains("live bytes over time"));
}

#[test]
fn every_format_has_the_same_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mtrace = dir.path().join("t.mtrace");
    std::fs::write(&mtrace, MTRACE).unwrap();
    let et = dir.path().join("t.et");
    std::fs::write(&et, "N 5 16 1 2 0 7\nM 1 0 7\nE 1 7\nD 5 7 2\n").unwrap();
    let jvm = dir.path().join("trace");
    std::fs::write(
        &jvm,
        "VS:1\nVI:2\nOA:3:X:5\nMN:4:1:A:f:0\nMX:5:1:A:f\nOF:6:X:5\nVD:7\n",
    )
    .unwrap();
    let a = stats_json(&[], &mtrace);
    let e = stats_json(&["--from", "et3"], &et);
    let j = stats_json(&["--from", "jvm"], &jvm);
    assert_eq!(keys(&a), keys(&e));
    assert_eq!(keys(&a), keys(&j));
    assert_eq!(e["objects_freed"], 1);
    assert_eq!(e["size_histogram"][0]["from"], 16);
    assert_eq!(j["bytes_allocated"], serde_json::Value::Null);
    assert_eq!(j["top_methods"][0]["name"], "A.f");
    assert_eq!(j["top_classes"][0]["name"], "X");
}

#[test]
fn systemui_lists_its_busiest_threads_first() {
    let Some(path) = corpus("malloc/android/systemui.zip") else {
        return;
    };
    let v = stats_json(&[], &path);
    let top = v["top_threads"].as_array().unwrap();
    assert_eq!(top.len(), 10);
    assert!(v["threads"].as_u64().unwrap() > 10);
    let counts: Vec<u64> = top.iter().map(|t| t["count"].as_u64().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    let total: u64 = v["records_by_kind"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(total, v["records"].as_u64().unwrap());
}
