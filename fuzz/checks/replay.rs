//! Replays a fuzz target's corpus (`fuzz/corpus/<target>`) and its crash reproducers
//! (`fuzz/artifacts/<target>`) through the target's check on stable Rust, naming the file that
//! fails. Included by the `fuzz_corpus` tests of the crates.

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("readable folder entry").path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Runs `check` on every file of the target's corpus and artifacts; returns how many ran.
/// Skips (returning 0, with the reason printed) when the repository's `fuzz/` is absent.
pub fn replay(fuzz_dir: &Path, target: &str, check: fn(&[u8])) -> usize {
    let corpus = fuzz_dir.join("corpus").join(target);
    if !corpus.is_dir() {
        eprintln!("skipping: no fuzz corpus at {}", corpus.display());
        return 0;
    }
    let mut all = files(&corpus);
    all.extend(files(&fuzz_dir.join("artifacts").join(target)));
    for path in &all {
        let bytes = std::fs::read(path).expect("readable corpus file");
        if std::panic::catch_unwind(|| check(&bytes)).is_err() {
            panic!("fuzz input {} fails the {target} check", path.display());
        }
    }
    all.len()
}
