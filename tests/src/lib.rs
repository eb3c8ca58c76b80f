//! Shared helpers for the cross-crate integration tests: locating the real-trace corpus.
#![warn(missing_docs)]

use std::path::PathBuf;

/// The `../shared/corpus` folder beside the repository, if present.
///
/// Tests that need real traces call this and skip, printing why, when it returns `None`.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipping: corpus not found at {} (../shared absent)",
            dir.display()
        );
        None
    }
}
