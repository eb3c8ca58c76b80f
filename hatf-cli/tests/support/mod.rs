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
