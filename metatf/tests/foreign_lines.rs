//! The two foreign traces in `shared/corpus/foreign/`, read from their *raw* text: a prefix of
//! each encoded with the hand-written DTD in `dtds/examples/` and with an inferred DTD, checked
//! to decode byte for byte and measured against zstd -19 on the same text. Skipped (with a
//! message) when the corpus is absent.

use std::io::{BufRead, Read};
use std::path::PathBuf;

use metatf::lines::{decode_lines, encode_lines, infer::infer_dtd, LineOptions};

/// Lines of each trace used (the whole traces are measured by the benchmarks in the docs).
const PREFIX_LINES: usize = 100_000;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn prefix(trace: &str) -> Option<Vec<u8>> {
    let path = repo().join("../shared/corpus/foreign").join(trace);
    let Ok(file) = std::fs::File::open(&path) else {
        eprintln!("skipping: {} is absent", path.display());
        return None;
    };
    let mut reader = std::io::BufReader::new(zstd::Decoder::new(file).unwrap());
    let mut text = Vec::new();
    for _ in 0..PREFIX_LINES {
        if reader.read_until(b'\n', &mut text).unwrap() == 0 {
            break;
        }
    }
    Some(text)
}

/// Encoded size with `dtd`, after checking the exact round trip.
fn encoded(dtd: &str, text: &[u8]) -> usize {
    let mut file = Vec::new();
    encode_lines(dtd, "foreign.dtd", text, &mut file, LineOptions::default()).unwrap();
    let mut back = Vec::new();
    decode_lines(&file[..], &mut back).unwrap();
    assert!(back == text, "the decoded text differs from the original");
    file.len()
}

fn zstd19(text: &[u8]) -> usize {
    let mut out = Vec::new();
    zstd::stream::Encoder::new(&mut out, 19)
        .unwrap()
        .auto_finish()
        .write_all_from(text);
    out.len()
}

trait WriteAll {
    fn write_all_from(self, text: &[u8]);
}

impl<W: std::io::Write> WriteAll for W {
    fn write_all_from(mut self, text: &[u8]) {
        self.write_all(text).unwrap();
    }
}

fn check(trace: &str, dtd_file: &str, bound: f64) {
    let Some(text) = prefix(trace) else {
        return;
    };
    let mut dtd = String::new();
    std::fs::File::open(repo().join("dtds/examples").join(dtd_file))
        .unwrap()
        .read_to_string(&mut dtd)
        .unwrap();
    let z = zstd19(&text);
    let given = encoded(&dtd, &text);
    let inferred = encoded(&infer_dtd(&text[..text.len().min(4 << 20)]), &text);
    eprintln!(
        "{trace}: {} lines, zstd -19 {z}, with {dtd_file} {given}, inferred {inferred}",
        PREFIX_LINES
    );
    for (what, size) in [("the example DTD", given), ("the inferred DTD", inferred)] {
        assert!(
            (size as f64) <= bound * z as f64,
            "{trace} with {what}: {size} bytes, over {bound} x zstd -19 ({z})"
        );
    }
}

// Bounds: what these prefixes reach, with a margin for other machines' libraries; the sizes
// on whole traces against xz -9 and zstd -19 are in docs/PERFORMANCE.md.

#[test]
fn heaptrack_raw_text_round_trips_and_compresses() {
    check("heaptrack-perl-hash.raw.zst", "heaptrack-raw.dtd", 0.85);
}

#[test]
fn lackey_text_round_trips_and_compresses() {
    check("lackey-python-json.txt.zst", "lackey.dtd", 0.85);
}
