//! A trace's own text through line patterns on the built binary: `encode --dtd`, `--from any`,
//! `--strict`, `dtd infer`, and `decode` giving back the same bytes.

use predicates::prelude::*;
use std::path::{Path, PathBuf};

mod support;
use support::hatf;

fn lackey_dtd() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dtds/examples/lackey.dtd"
    ))
}

/// Lackey-style lines with a line no pattern spells, a CRLF line and no final newline.
const TEXT: &[u8] = b"==1== Lackey\nI  0401ab70,3\nI  0401ab80,4\n S 1fff0005e8,8\n L 04033e06,1\r\n M 04033e06,1\nI  0401ab73,5";

fn round_trip(dir: &Path, args: &[&str]) {
    let input = dir.join("trace.txt");
    std::fs::write(&input, TEXT).unwrap();
    let out = dir.join("trace.hatf");
    hatf()
        .arg("encode")
        .args(args)
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("-f")
        .assert()
        .success();
    let back = dir.join("back.txt");
    hatf()
        .arg("decode")
        .arg(&out)
        .arg("-o")
        .arg(&back)
        .arg("-f")
        .assert()
        .success();
    assert_eq!(std::fs::read(&back).unwrap(), TEXT);
    // The address 0x0401ab70, whatever the field is called.
    hatf()
        .arg("dump")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("=67218288 "));
}

#[test]
fn encode_with_a_dtd_decodes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let dtd = lackey_dtd();
    round_trip(dir.path(), &["--dtd", dtd.to_str().unwrap()]);
}

#[test]
fn encode_from_any_decodes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(dir.path(), &["--from", "any"]);
}

#[test]
fn model_fast_decodes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let dtd = lackey_dtd();
    round_trip(
        dir.path(),
        &["--dtd", dtd.to_str().unwrap(), "--model", "fast"],
    );
    round_trip(dir.path(), &["--from", "any", "--model", "fast"]);
}

/// A loop's memory trace: the default codes each block both ways and keeps the smaller, so
/// its file is no larger than `--model fast`'s, and both decode to the text.
#[test]
fn the_default_model_is_no_larger_than_fast() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = Vec::new();
    for round in 0..3000u64 {
        for (i, size) in [3u64, 5, 2, 7, 4].iter().enumerate() {
            let pc = 0x0401_ab70 + 16 * i as u64;
            text.extend(format!("I  {pc:08x},{size}\n").bytes());
            if i % 2 == 0 {
                let data = 0x1f_ff00_05e8 - 8 * (round % 37) + 64 * i as u64;
                text.extend(format!(" S {data:08x},8\n").bytes());
            }
        }
    }
    let input = dir.path().join("loop.txt");
    std::fs::write(&input, &text).unwrap();
    let dtd = lackey_dtd();
    let mut sizes = Vec::new();
    for model in ["auto", "fast"] {
        let args = ["--dtd", dtd.to_str().unwrap(), "--model", model];
        assert_eq!(encode_decode(dir.path(), &args, &input), text);
        sizes.push(
            std::fs::metadata(dir.path().join("out.hatf"))
                .unwrap()
                .len(),
        );
    }
    assert!(
        sizes[0] <= sizes[1],
        "auto {} bytes, fast {}",
        sizes[0],
        sizes[1]
    );
}

#[test]
fn strict_refuses_the_first_unmatched_line_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("trace.txt");
    std::fs::write(&input, TEXT).unwrap();
    hatf()
        .args(["encode", "--strict", "--dtd"])
        .arg(lackey_dtd())
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("t.hatf"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("trace.txt: 1:1:"));
}

#[test]
fn dtd_infer_writes_a_valid_dtd() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("trace.txt");
    std::fs::write(&input, b"op 1 0x10\nop 2 0x20\nop 3 0x30\n").unwrap();
    let out = hatf()
        .args(["dtd", "infer"])
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let dtd = String::from_utf8(out).unwrap();
    assert!(dtd.contains("line = \"op \" n1 \" \" n2:#x;"), "{dtd}");
    let path = dir.path().join("my.dtd");
    std::fs::write(&path, &dtd).unwrap();
    hatf().args(["dtd", "check"]).arg(&path).assert().success();
}

/// Runs `hatf encode ARGS INPUT -o OUT` then `decode`, and returns the decoded bytes.
fn encode_decode(dir: &Path, args: &[&str], input: &Path) -> Vec<u8> {
    let out = dir.join("out.hatf");
    hatf()
        .arg("encode")
        .args(args)
        .arg(input)
        .arg("-o")
        .arg(&out)
        .arg("-f")
        .assert()
        .success();
    let back = dir.join("back.txt");
    hatf()
        .arg("decode")
        .arg(&out)
        .arg("-o")
        .arg(&back)
        .arg("-f")
        .assert()
        .success();
    std::fs::read(&back).unwrap()
}

#[test]
fn compressed_text_is_read_through_its_decompressor() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("trace.txt.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(TEXT).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let zst = dir.path().join("trace.txt.zst");
    std::fs::write(&zst, zstd::encode_all(TEXT, 3).unwrap()).unwrap();
    let dtd = lackey_dtd();
    for input in [&gz, &zst] {
        // The text comes back, not the compressed bytes.
        assert_eq!(encode_decode(dir.path(), &["--from", "any"], input), TEXT);
        let with_dtd = ["--dtd", dtd.to_str().unwrap()];
        assert_eq!(encode_decode(dir.path(), &with_dtd, input), TEXT);
    }
    hatf()
        .args(["dtd", "infer"])
        .arg(&gz)
        .assert()
        .success()
        .stdout(predicate::str::contains("line ="));
}

#[test]
fn text_with_no_frequent_line_shape_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("odd.txt");
    for text in [&b"one line only\n"[..], b"", b"a\n(b)\n{c: d}\n"] {
        std::fs::write(&input, text).unwrap();
        assert_eq!(encode_decode(dir.path(), &["--from", "any"], &input), text);
    }
}

/// Runs a real line-based tracer on this machine, if it is installed, and returns its trace.
fn real_trace(dir: &Path, tool: &str, args: &[&str], trace: &str) -> Option<PathBuf> {
    let out = dir.join(trace);
    let ran = std::process::Command::new(tool)
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    match ran {
        Ok(s) if s.success() && out.exists() => Some(out),
        _ => {
            println!("skipped: `{tool}` is not installed or cannot trace here");
            None
        }
    }
}

#[test]
fn real_traces_of_other_tools_round_trip_with_from_any() {
    let dir = tempfile::tempdir().unwrap();
    let traces = [
        real_trace(
            dir.path(),
            "strace",
            &[
                "-f",
                "-tt",
                "-o",
                "strace.txt",
                "sh",
                "-c",
                "ls -la / /usr /etc",
            ],
            "strace.txt",
        ),
        real_trace(
            dir.path(),
            "valgrind",
            &[
                "--trace-malloc=yes",
                "--log-file=valgrind.txt",
                "ls",
                "-la",
                "/usr",
            ],
            "valgrind.txt",
        ),
    ];
    for trace in traces.into_iter().flatten() {
        let text = std::fs::read(&trace).unwrap();
        let out = dir.path().join("real.hatf");
        let run = hatf()
            .args(["encode", "--from", "any", "-v", "-f", "-o"])
            .arg(&out)
            .arg(&trace)
            .assert()
            .success();
        let said = String::from_utf8_lossy(&run.get_output().stderr).to_string();
        // "N lines: R records, V kept verbatim": the inferred patterns, not verbatim copies,
        // hold most lines.
        let count = |after: &str| -> u64 {
            let at = said.find(after).unwrap_or_else(|| panic!("{said}"));
            said[..at].rsplit(' ').next().unwrap().parse().unwrap()
        };
        let (records, verbatim) = (count(" records"), count(" kept verbatim"));
        assert!(records > verbatim, "{}: {said}", trace.display());
        let back = dir.path().join("real.txt");
        hatf()
            .args(["decode", "-f", "-o"])
            .arg(&back)
            .arg(&out)
            .assert()
            .success();
        assert!(std::fs::read(&back).unwrap() == text, "{}", trace.display());
        let size = std::fs::metadata(&out).unwrap().len();
        assert!(
            size * 4 < text.len() as u64,
            "{}: {size} bytes",
            trace.display()
        );
    }
}

/// The smaller of `xz -9` and `zstd -19` on `text`.
fn best_general_compressor(text: &[u8]) -> usize {
    use std::io::Read;
    let mut xz = Vec::new();
    xz2::read::XzEncoder::new(text, 9)
        .read_to_end(&mut xz)
        .unwrap();
    let zstd = zstd::encode_all(text, 19).unwrap();
    xz.len().min(zstd.len())
}

#[test]
fn real_strace_of_python_is_smaller_than_xz_and_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let Some(trace) = real_trace(
        dir.path(),
        "strace",
        &[
            "-f",
            "-tt",
            "-o",
            "strace.txt",
            "python3",
            "-c",
            "import json, email, http.client",
        ],
        "strace.txt",
    ) else {
        return;
    };
    let text = std::fs::read(&trace).unwrap();
    assert_eq!(encode_decode(dir.path(), &["--from", "any"], &trace), text);
    let size = std::fs::metadata(dir.path().join("out.hatf"))
        .unwrap()
        .len() as f64;
    let best = best_general_compressor(&text) as f64;
    // The model must clearly beat the general-purpose compressors on such a regular trace;
    // the bound leaves room for other machines' libraries and paths.
    assert!(
        size < 0.85 * best,
        "{} lines: hatf {size} bytes, best of xz -9 and zstd -19 {best}",
        text.split(|&b| b == b'\n').count()
    );
}

#[test]
fn lines_that_repeat_exactly_decode_however_little_they_cost() {
    // 24 numbers a line, the same line 150,000 times: once learned, each number codes in a
    // small fraction of a bit, far more fields to a coded byte than varied text gives.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("same.txt");
    let line: Vec<String> = (0..24).map(|i| (i * 7 + 3).to_string()).collect();
    let text = format!("{}\n", line.join(" ")).repeat(150_000);
    std::fs::write(&input, &text).unwrap();
    assert_eq!(
        encode_decode(dir.path(), &["--from", "any"], &input),
        text.as_bytes()
    );
}
