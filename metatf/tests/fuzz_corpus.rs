//! Replays the corpora and crash reproducers of the fuzz targets on the Meta-TF runtime
//! (`fuzz/corpus/{universal_reader,container_reader,round_trip}` and `fuzz/artifacts/...`) on
//! stable Rust, through the very check functions the fuzz targets run (`fuzz/checks/`).

#[path = "../../fuzz/checks/container_reader.rs"]
mod container_reader;
#[path = "../../fuzz/checks/replay.rs"]
mod replay;
#[path = "../../fuzz/checks/round_trip.rs"]
mod round_trip;
#[path = "../../fuzz/checks/universal_reader.rs"]
mod universal_reader;

use std::path::Path;

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz"))
}

#[test]
fn universal_reader_corpus_replays() {
    let n = replay::replay(fuzz_dir(), "universal_reader", universal_reader::check);
    assert!(n == 0 || n >= 10, "expected the seeds, replayed {n} files");
}

#[test]
fn container_reader_corpus_replays() {
    let n = replay::replay(fuzz_dir(), "container_reader", container_reader::check);
    assert!(n == 0 || n >= 10, "expected the seeds, replayed {n} files");
}

#[test]
fn round_trip_corpus_replays() {
    let n = replay::replay(fuzz_dir(), "round_trip", round_trip::check);
    assert!(n == 0 || n >= 10, "expected a corpus, replayed {n} files");
}
