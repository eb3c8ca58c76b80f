//! Without `--threads`, a small input file is encoded (and a small binary decoded) on one
//! thread, a large one or a pipe on every core (`thread_choice.rs`): the bytes written must be
//! the same as with any explicit thread count.

use std::path::Path;

mod support;
use support::hatf;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/sample.mtrace");

/// Encodes `input` with `threads` (`None`: the default) into `out` and returns the bytes.
fn encode(input: &Path, out: &Path, threads: Option<&str>) -> Vec<u8> {
    let mut cmd = hatf();
    cmd.args(["encode", "-q", "-f"]);
    if let Some(n) = threads {
        cmd.args(["--threads", n]);
    }
    cmd.arg(input).arg("-o").arg(out).assert().success();
    std::fs::read(out).unwrap()
}

/// Decodes `input` with `threads` (`None`: the default) and returns the text.
fn decode(input: &Path, out: &Path, threads: Option<&str>) -> Vec<u8> {
    let mut cmd = hatf();
    cmd.args(["decode", "-q", "-f"]);
    if let Some(n) = threads {
        cmd.args(["--threads", n]);
    }
    cmd.arg(input).arg("-o").arg(out).assert().success();
    std::fs::read(out).unwrap()
}

/// Small inputs (one thread by default) and one past the one-thread limit (every core), each
/// encoded and decoded with the default and with explicit counts.
#[test]
fn the_default_thread_count_changes_no_byte() {
    let dir = tempfile::tempdir().unwrap();
    let sample = std::fs::read(SAMPLE).unwrap();
    // Three lines; the sample (2.2 MB); eight samples in a row (18 MB, over the 16 MiB limit).
    let three_lines: Vec<u8> = sample
        .split_inclusive(|&b| b == b'\n')
        .take(3)
        .flatten()
        .copied()
        .collect();
    let repeated = sample.repeat(8);
    for (name, text) in [
        ("three.mtrace", &three_lines),
        ("sample.mtrace", &sample),
        ("repeated.mtrace", &repeated),
    ] {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        let out = dir.path().join("out.hatf");
        let by_default = encode(&input, &out, None);
        for n in ["1", "2", "3"] {
            assert!(
                encode(&input, &out, Some(n)) == by_default,
                "{name}: --threads {n} wrote other bytes than the default"
            );
        }
        // Through a pipe the size is unknown (past the first 64 KiB), and every core is used:
        // the same file again.
        let piped = hatf()
            .args(["encode", "-q"])
            .write_stdin(text.clone())
            .output()
            .unwrap();
        assert!(piped.status.success());
        assert!(piped.stdout == by_default, "{name}: through a pipe");
        let binary = dir.path().join("kept.hatf");
        std::fs::write(&binary, &by_default).unwrap();
        let back = dir.path().join("back.txt");
        for threads in [None, Some("1"), Some("2")] {
            assert!(
                &decode(&binary, &back, threads) == text,
                "{name}: decoding with {threads:?} threads did not give the text back"
            );
        }
    }
}
