//! Text traces kept compressed are read through their compressor, recognised by magic bytes,
//! by every command that reads text; formats that are themselves compressed files keep their
//! bytes.

mod support;

use std::io::{Read, Write};
use support::{corpus, hatf, sample};

/// Compresses a text.
type Packer = fn(&[u8]) -> Vec<u8>;

fn gzip(text: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

fn bzip2(text: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

fn xz(text: &[u8]) -> Vec<u8> {
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

fn zstd(text: &[u8]) -> Vec<u8> {
    zstd::encode_all(text, 1).unwrap()
}

#[test]
fn every_compressed_form_encodes_and_decodes_to_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let plain_stats = hatf()
        .args(["stats", "--json"])
        .write_stdin(text.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let forms: [(&str, Packer); 4] = [("gz", gzip), ("bz2", bzip2), ("xz", xz), ("zst", zstd)];
    let plain = dir.path().join("plain.mtrace");
    std::fs::write(&plain, &text).unwrap();
    for (suffix, pack) in forms {
        let packed = dir.path().join(format!("sample.mtrace.{suffix}"));
        std::fs::write(&packed, pack(&text)).unwrap();
        // Several inputs: each is written next to it, a compressed one named without its
        // compression suffix (the file keeps the text).
        hatf()
            .args(["encode", "-q", "-f", "--level", "1"])
            .arg(&packed)
            .arg(&plain)
            .assert()
            .success();
        assert!(dir.path().join("plain.mtrace.hatf").exists());
        let encoded = dir.path().join("sample.mtrace.hatf");
        let back = hatf()
            .args(["decode", "-c"])
            .arg(&encoded)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        assert!(back == text, "{suffix}: decode did not give the text back");
        std::fs::remove_file(&encoded).unwrap();
        // stats and validate read it too, from a file and from standard input.
        let stats = hatf()
            .args(["stats", "--json"])
            .arg(&packed)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        assert_eq!(
            stats, plain_stats,
            "{suffix}: stats differ from the plain text's"
        );
    }
}

#[test]
fn validate_reads_every_compressed_form_from_standard_input() {
    let Some(trace) = corpus("et/et3-merlin/java/trace") else {
        return;
    };
    let text = std::fs::read(&trace).unwrap();
    let verdict = |input: Vec<u8>| {
        let out = hatf()
            .args(["validate", "-"])
            .write_stdin(input)
            .output()
            .unwrap();
        (out.status.code(), out.stdout, out.stderr)
    };
    let plain = verdict(text.clone());
    // The trace has a problem to report, so the comparison covers the report itself.
    assert_eq!(plain.0, Some(1));
    assert!(String::from_utf8_lossy(&plain.2).contains("<stdin>:"));
    for pack in [gzip, bzip2, xz, zstd] {
        assert_eq!(verdict(pack(&text)), plain);
    }
}

#[test]
fn compare_reads_a_bzip2_text_from_standard_input() {
    let text = sample();
    let plain = hatf()
        .args(["compare", "--csv", "-"])
        .write_stdin(text.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let packed = hatf()
        .args(["compare", "--csv", "-"])
        .write_stdin(bzip2(&text))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    // The same sizes; the times (the last two fields) differ from run to run.
    let sizes = |csv: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(csv)
            .lines()
            .map(|l| l.rsplitn(3, ',').nth(2).unwrap_or(l).to_string())
            .collect()
    };
    assert_eq!(sizes(&plain), sizes(&packed));
    assert!(String::from_utf8_lossy(&plain).contains("mtrace"));
}

#[test]
fn a_damaged_stream_is_an_error_naming_the_compressor_without_raw_bytes() {
    let mut damaged = b"BZh91AY&SY".to_vec();
    damaged.extend((0..200u8).map(|i| i.wrapping_mul(37)));
    let out = hatf()
        .args(["encode", "--from", "et2", "-o", "/dev/null"])
        .write_stdin(damaged)
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).expect("the message is text");
    assert!(err.contains("damaged bzip2 data"), "{err}");
    assert!(
        !err.chars().any(|c| c.is_control() && c != '\n'),
        "control characters in {err:?}"
    );
}

#[test]
fn the_elephant_tracks_bzip2_trace_round_trips() {
    let Some(trace) = corpus("et/et2-java/data/hello_world/trace.bz2") else {
        return;
    };
    let mut text = Vec::new();
    bzip2::read::MultiBzDecoder::new(std::fs::File::open(&trace).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.hatf");
    hatf()
        .args(["encode", "--from", "et2", "--keep-bad-lines", "-o"])
        .arg(&out)
        .arg(&trace)
        .assert()
        .success();
    let back = support::output_of(&["decode"], &out);
    assert!(back == text, "the decompressed text did not come back");
}

#[test]
fn a_malloc_bench_trace_gz_is_kept_byte_for_byte_not_unwrapped() {
    let Some(trace) = corpus("malloc/malloc-bench/traces/grep.trace.gz") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("grep.trace.gz");
    std::fs::copy(&trace, &copy).unwrap();
    // With several inputs, one missing: it is reported, the other is still encoded.
    hatf()
        .args(["encode", "-v", "--level", "1"])
        .arg(dir.path().join("absent.trace.gz"))
        .arg(&copy)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("absent.trace.gz: cannot open"))
        .stderr(predicates::str::contains("detected format `malloc-bench`"))
        .stderr(predicates::str::contains("1 of 2 inputs failed"));
    // The input was encoded to its own name, the suffix kept (the gzip file is the trace).
    let encoded = dir.path().join("grep.trace.gz.hatf");
    let back = hatf()
        .args(["decode", "-c"])
        .arg(&encoded)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(
        back == std::fs::read(&trace).unwrap(),
        "the .trace.gz changed"
    );
}

/// A command's exit code and standard output.
type Outcome = (Option<i32>, Vec<u8>);

#[test]
fn a_compressed_binary_trace_is_read_by_every_command_that_reads_binary() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let plain = dir.path().join("s.mtrace");
    std::fs::write(&plain, &text).unwrap();
    let binary = dir.path().join("s.hatf");
    hatf()
        .arg("encode")
        .arg(&plain)
        .arg("-o")
        .arg(&binary)
        .assert()
        .success();
    let bytes = std::fs::read(&binary).unwrap();
    let run = |args: &[&str], file: &std::path::Path| {
        let out = hatf().args(args).arg(file).output().unwrap();
        (out.status.code(), out.stdout)
    };
    let expected: Vec<(&[&str], Outcome)> = [
        &["decode", "-c"][..],
        &["decode", "-c", "--records", "100..200"],
        &["inspect", "--json"],
        &["verify"],
        &["stats", "--json"],
        &["validate", "--json"],
        &["dump", "--records", "0..50"],
    ]
    .into_iter()
    .map(|args| (args, run(args, &binary)))
    .collect();
    assert!(expected[0].1 .1 == text);
    // validate exits 1 for the sample's leaks; every other command succeeds.
    assert!(expected
        .iter()
        .all(|(args, (code, _))| *code == Some(if args[0] == "validate" { 1 } else { 0 })));
    // `export` writes a file; what it wrote from `input`.
    let export = |input: &std::path::Path| {
        let out = dir.path().join("export.csv");
        hatf()
            .args(["export", "-f", "--to", "csv", "--records", "0..50"])
            .arg(input)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        std::fs::read(&out).unwrap()
    };
    let exported = export(&plain);
    assert!(exported.len() > 50);
    assert!(export(&binary) == exported);
    let forms: [(&str, Packer); 4] = [("gz", gzip), ("bz2", bzip2), ("xz", xz), ("zst", zstd)];
    for (suffix, pack) in forms {
        // Compressed text is exported like the text, and a compressed binary like the binary.
        let packed_text = dir.path().join(format!("s.mtrace.{suffix}"));
        std::fs::write(&packed_text, pack(&text)).unwrap();
        assert!(
            export(&packed_text) == exported,
            "export of s.mtrace.{suffix}"
        );
        let packed = dir.path().join(format!("s.hatf.{suffix}"));
        std::fs::write(&packed, pack(&bytes)).unwrap();
        assert!(export(&packed) == exported, "export of s.hatf.{suffix}");
        for (args, (code, stdout)) in &expected {
            let (got_code, got) = run(args, &packed);
            assert_eq!(got_code, *code, "{args:?} on .{suffix}");
            // inspect, verify and validate name the file; the rest print only the trace.
            if matches!(args[0], "decode" | "stats" | "dump") {
                assert!(got == *stdout, "{args:?} on .{suffix} differs");
            } else {
                assert!(!got.is_empty(), "{args:?} on .{suffix} printed nothing");
            }
        }
    }
}
