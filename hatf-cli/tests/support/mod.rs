//! What the command-line tests share: the binary, the sample trace, the corpus, and a terminal.

#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The built `hatf` binary, as a command to run.
pub fn hatf() -> Command {
    Command::cargo_bin("hatf").expect("the hatf binary is built for integration tests")
}

/// The path of the built `hatf` binary.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("hatf")
}

/// The sample `mtrace` log shipped in the repository.
pub fn sample() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/sample.mtrace");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A file of the shared corpus, or `None` (with a message) when the corpus is absent.
pub fn corpus(relative: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipping: {} is absent", path.display());
        None
    }
}

/// Runs the shell `command` with a pseudo-terminal as its standard output and standard error
/// (through util-linux `script`) and returns what the terminal showed; `None` (with a message)
/// when `script` is not installed.
pub fn in_terminal(command: &str, folder: &Path) -> Option<String> {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "skipping: `script` (util-linux) is not installed, so no terminal can be simulated"
        );
        return None;
    }
    let out = std::process::Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .current_dir(folder)
        .stdin(Stdio::null())
        .output()
        .expect("script runs");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The names of the partial files left in `folder`.
pub fn partials(folder: &Path) -> Vec<String> {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hatf-partial-"))
        .collect()
}

/// What `hatf ARGS FILE` writes on standard output, the command having succeeded.
pub fn output_of(args: &[&str], file: &Path) -> Vec<u8> {
    hatf()
        .args(args)
        .arg(file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

/// [`output_of`] as text.
pub fn stdout_of(args: &[&str], file: &Path) -> String {
    String::from_utf8(output_of(args, file)).expect("hatf prints UTF-8")
}

/// The output of a command that ran, the test failing with its standard error unless it
/// succeeded.
pub fn succeeded(output: std::io::Result<std::process::Output>) -> std::process::Output {
    let out = output.expect("the command runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The JSON `hatf stats --json ARGS` prints, the command having succeeded.
pub fn stats_json<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
) -> serde_json::Value {
    let out = succeeded(hatf().arg("stats").arg("--json").args(args).output());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A real ET3 trace (the corpus' LotsOfAllocs) repeated past two blocks (a block holds 2^19
/// lines) and encoded into `dir`: its text and the encoded file, or `None` (with a message)
/// when the corpus is absent.
pub fn multi_block_et3(dir: &Path) -> Option<(Vec<u8>, PathBuf)> {
    let one = std::fs::read(corpus("et/et3-merlin/pipeline_results/LotsOfAllocs/trace")?).unwrap();
    let mut text = Vec::new();
    while text.iter().filter(|&&b| b == b'\n').count() < (1 << 19) * 5 / 2 {
        text.extend_from_slice(&one);
    }
    let input = dir.join("trace");
    std::fs::write(&input, &text).unwrap();
    let out = dir.join("trace.hatf");
    hatf()
        .args(["encode", "--from", "et3", "--level", "1"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    Some((text, out))
}
