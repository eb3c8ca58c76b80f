//! `hatf dump` reads the records of every format's default encoding, in the text form and as
//! one JSON object per record, whole or by range; the records agree with `decode --records`.

mod support;

use std::path::{Path, PathBuf};

use support::{corpus, hatf, stdout_of};

fn encode(input: &Path, extra: &[&str], dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(format!("{name}.hatf"));
    hatf()
        .arg("encode")
        .args(extra)
        .arg(input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    out
}

fn json_records(file: &Path, range: Option<&str>) -> Vec<serde_json::Value> {
    let mut args = vec!["dump", "--json"];
    if let Some(r) = range {
        args.extend(["--records", r]);
    }
    stdout_of(&args, file)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// Dumps records `from..from+n` and checks them against the same range decoded as text: same
/// count, consecutive indexes, and the checked field's value in each record's line.
fn agrees_with_decode(file: &Path, from: u64, n: u64, field: &str, hex: bool) {
    let range = format!("{from}..{}", from + n);
    let records = json_records(file, Some(&range));
    let text = stdout_of(&["decode", "--records", &range], file);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(records.len() as u64, n, "{}", file.display());
    assert_eq!(lines.len() as u64, n);
    let mut checked = 0;
    for (k, (r, line)) in records.iter().zip(&lines).enumerate() {
        assert_eq!(r["index"], from + k as u64, "{r}");
        assert!(r["record"].is_string(), "{r}");
        if let Some(v) = r[field].as_u64() {
            let shown = if hex { format!("{v:x}") } else { v.to_string() };
            assert!(line.contains(&shown), "{r} vs {line}");
            checked += 1;
        }
    }
    assert!(checked > 0, "no record of {range} had `{field}`");
}

#[test]
fn small_files_of_every_format_dump_their_records() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str, &str); 5] = [
        (
            "t.mtrace",
            "= Start\n@ ./a:[0x4011] + 0x55d0 0x20\n@ ./a:[0x4012] < 0x55d0\n@ ./a:[0x4012] > 0x66e0 0x40\n@ ./a:[0x4013] - 0x66e0\n= End\n",
            "reallocNew",
            r#"{"record":"reallocNew","index":3,"site":"./a:[0x4012]","address":26336,"size":64}"#,
        ),
        (
            "t.replay",
            "17: malloc 0x7a10 32\n17: calloc 0x7b20 4 8\n18: realloc 0x7c30 0x7a10 64\n18: free 0x7b20\n17: thread_done 0x0\n",
            "realloc",
            r#"{"record":"realloc","index":2,"thread":18,"address":31792,"old_address":31248,"size":64}"#,
        ),
        (
            "t.wee",
            "Alloc(16),\nAlloc(32),\nFree(0),\n",
            "free",
            r#"{"record":"free","index":2,"alloc_index":0}"#,
        ),
        (
            "t.et3",
            "N 100 32 5 7 0 9\nM 3 100 9\nU 100 200 4 9\nE 3 9\nD 100 9 2\n",
            "U",
            r#"{"record":"U","index":2,"obj":100,"value":200,"field":4,"thread":9}"#,
        ),
        (
            "t.jvm",
            "VS:1\nTB:2:1\nOA:3:java/lang/String:77\nMN:4:1:Foo:bar:77\nMX:5:1:Foo:bar\nVD:6\n",
            "OA",
            r#"{"record":"OA","index":2,"time":3,"class":"java/lang/String","obj":77}"#,
        ),
    ];
    for (name, text, record, expected) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        let from = match name {
            "t.replay" => "memory-replay",
            "t.wee" => "wee-alloc",
            "t.et3" => "et3",
            "t.jvm" => "jvm",
            _ => "mtrace",
        };
        let file = encode(&input, &["--from", from], dir.path(), name);
        let json = stdout_of(&["dump", "--json"], &file);
        assert_eq!(json.lines().count(), text.lines().count(), "{name}: {json}");
        let line = json
            .lines()
            .find(|l| l.contains(&format!("\"record\":\"{record}\"")))
            .unwrap_or_else(|| panic!("{name}: no {record} in {json}"));
        assert_eq!(line, expected, "{name}");
        let plain = stdout_of(&["dump"], &file);
        assert_eq!(
            plain.lines().count(),
            text.lines().count(),
            "{name}: {plain}"
        );
        assert!(
            plain.lines().any(|l| l.starts_with(record)),
            "{name}: {plain}"
        );
        // A range gives those records only.
        let two = stdout_of(&["dump", "--json", "--records", "1..3"], &file);
        assert_eq!(two.lines().count(), 2, "{name}: {two}");
        assert!(two.starts_with(r#"{"record":"#) && two.contains(r#""index":1,"#));
    }
}

#[test]
fn malloc_bench_protobuf_records_dump_with_absent_fields_zero_and_named() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // lines { malloc { result_id: 1 input_size: 24 } }, lines { free { input_id: 1 } },
    // max_simultaneous_allocs: 1
    let message = [
        0x0a, 0x06, 0x0a, 0x04, 0x08, 0x01, 0x10, 0x18, 0x0a, 0x04, 0x12, 0x02, 0x08, 0x01, 0x10,
        0x01,
    ];
    let input = dir.path().join("t.trace.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&message).unwrap();
    std::fs::write(&input, gz.finish().unwrap()).unwrap();
    let file = encode(&input, &["--from", "malloc-bench"], dir.path(), "mb");
    let records = json_records(&file, None);
    let shown: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        shown,
        [
            // `absent`: bit 2 (alignment) left out; bits 1 and 2 (size, alignment).
            r#"{"absent":4,"alignment":0,"id":1,"index":0,"record":"malloc","size":24}"#,
            r#"{"absent":6,"alignment":0,"id":1,"index":1,"record":"free","size":0}"#,
            r#"{"index":2,"record":"maxSimultaneousAllocs","value":1}"#,
        ]
    );
    // The record text form carries them, and reads back through the record DTD.
    let text = stdout_of(&["dump"], &file);
    assert!(
        text.starts_with(
            "malloc id=1 size=24 alignment=0 absent=4\nfree id=1 size=0 alignment=0 absent=6\n"
        ),
        "{text}"
    );
    let dtd = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dtds/records/malloc-bench.dtd");
    let records = dir.path().join("mb.rec");
    std::fs::write(&records, &text).unwrap();
    let back = dir.path().join("mb-generic.hatf");
    hatf()
        .args(["encode", "--from", "text", "--dtd"])
        .arg(&dtd)
        .arg("-o")
        .arg(&back)
        .arg(&records)
        .assert()
        .success();
    let again: String = stdout_of(&["dump"], &back)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(again, text);
}

#[test]
fn corpus_files_of_every_format_dump_like_decode() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "malloc/glibc-mtrace/python-json.mtrace.zst",
            "address",
            true,
        ),
        ("malloc/android/systemui.zip", "address", true),
        ("malloc/wee_alloc/ls.trace", "size", false),
        ("et/et2-java/data/lots_of_allocs/trace.bz2", "obj", false),
        (
            "et/et3-merlin/pipeline_results/LotsOfAllocs/trace_with_deaths",
            "obj",
            false,
        ),
    ];
    for (k, (path, field, hex)) in cases.iter().enumerate() {
        let Some(input) = corpus(path) else { return };
        // The et2-java traces hold damaged lines, kept verbatim.
        let file = encode(&input, &["--keep-bad-lines"], dir.path(), &format!("c{k}"));
        let from = if path.contains("wee_alloc") { 10 } else { 1000 };
        agrees_with_decode(&file, from, 60, field, *hex);
    }
    // malloc-bench records are protobuf, not lines: counted against `stats`.
    let Some(input) = corpus("malloc/malloc-bench/traces/scp.trace.gz") else {
        return;
    };
    let file = encode(&input, &[], dir.path(), "scp");
    let records = json_records(&file, None);
    let stats: serde_json::Value =
        serde_json::from_str(&stdout_of(&["stats", "--json"], &input)).unwrap();
    let lines = records
        .iter()
        .filter(|r| r["record"] != "maxSimultaneousAllocs")
        .count() as u64;
    assert_eq!(Some(lines), stats["records"].as_u64());
}
