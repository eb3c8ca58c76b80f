//! The model engine on prefixes of the two foreign traces in `shared/corpus/foreign/` (tools
//! hatf has no front end for), in their record text form with their plain DTDs: the exact round
//! trip, and the size against zstd -19 on the same lines of the original text. The bounds are
//! those of a 100,000-line prefix (the models learn over a trace, so whole traces do better:
//! see the sizes in the docs).

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Lines of each trace the test encodes.
const LINES: usize = 100_000;

fn foreign_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/foreign")
}

/// The first [`LINES`] lines of the original trace and their record text form, or `None` (with
/// a message) when the corpus or python3 is missing.
fn prefix(trace: &str, kind: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let dir = foreign_dir();
    let Ok(file) = std::fs::File::open(dir.join(trace)) else {
        eprintln!("skipping: {} is absent", dir.join(trace).display());
        return None;
    };
    let reader = std::io::BufReader::new(zstd::Decoder::new(file).unwrap());
    let mut text = Vec::new();
    for line in reader.split(b'\n').take(LINES) {
        text.extend_from_slice(&line.unwrap());
        text.push(b'\n');
    }
    let child = Command::new("python3")
        .arg(dir.join("to_records.py"))
        .arg(kind)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("skipping: python3 is not available to run to_records.py");
        return None;
    };
    let mut stdin = child.stdin.take().unwrap();
    let input = text.clone();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let mut records = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut records)
        .unwrap();
    feeder.join().unwrap().unwrap();
    assert!(child.wait().unwrap().success());
    Some((text, records))
}

/// Encodes with `--model auto`, checks the exact round trip, returns (model bytes, zstd -19 bytes).
fn measure(trace: &str, kind: &str, dtd: &str) -> Option<(usize, usize)> {
    let (text, records) = prefix(trace, kind)?;
    let dtd = std::fs::read_to_string(foreign_dir().join(dtd)).unwrap();
    let mut file = Vec::new();
    metatf::encode_text_with(
        &dtd,
        "foreign.dtd",
        &records[..],
        &mut file,
        metatf::Codec::Zstd,
        3,
        metatf::TextModel::Auto,
    )
    .unwrap();
    let mut back = Vec::new();
    metatf::print_records(&file[..], &mut back).unwrap();
    assert!(back == records, "{kind}: the records do not round-trip");
    let zstd = zstd::encode_all(&text[..], 19).unwrap().len();
    eprintln!("{kind}: {} bytes, zstd -19 {zstd} bytes", file.len());
    Some((file.len(), zstd))
}

#[test]
fn lackey_prefix_at_most_three_quarters_of_zstd() {
    if let Some((model, zstd)) = measure("lackey-python-json.txt.zst", "lackey", "lackey.dtd") {
        assert!(model * 4 <= zstd * 3, "{model} bytes vs zstd -19 {zstd}");
    }
}

/// Frees name what allocations created and allocations take back freed addresses: `live` and
/// keyed `reuse` ranks bring the prefix to about 0.44 of zstd -19.
#[test]
fn heaptrack_prefix_at_most_half_of_zstd() {
    if let Some((model, zstd)) =
        measure("heaptrack-perl-hash.raw.zst", "heaptrack", "heaptrack.dtd")
    {
        assert!(model * 2 <= zstd, "{model} bytes vs zstd -19 {zstd}");
    }
}
