//! The paper's encodings on the first lines of real traces from the shared corpus (skipped when the
//! corpus is absent).

use hatf::internal::compare;
use hatf::internal::paper::{self, Encoding};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

/// The first `lines` lines of a corpus file, unpacked as they are read (the files are large).
fn head(rel: &str, lines: usize) -> Option<Vec<u8>> {
    let path = Path::new(CORPUS).join(rel);
    if !path.exists() {
        eprintln!("skipped: {} is absent", path.display());
        return None;
    }
    let file = std::fs::File::open(&path).unwrap();
    let take = |r: &mut dyn Read| {
        let mut out = Vec::new();
        let mut r = BufReader::new(r);
        for _ in 0..lines {
            if r.read_until(b'\n', &mut out).unwrap() == 0 {
                break;
            }
        }
        out
    };
    Some(if rel.ends_with(".zip") {
        let mut zip = zip::ZipArchive::new(file).unwrap();
        let mut entry = zip.by_index(0).unwrap();
        take(&mut entry)
    } else {
        take(&mut zstd::stream::read::Decoder::new(file).unwrap())
    })
}

fn check(rel: &str) {
    let Some(text) = head(rel, 10_000) else {
        return;
    };
    let format = compare::input::detect(&text, rel).unwrap();
    let events = compare::input::events(format, &text, rel)
        .unwrap()
        .expect("an allocation trace");
    assert!(events.len() > 7_500, "{rel}: {} events", events.len());
    let mut raw = std::collections::HashMap::new();
    for enc in Encoding::ALL {
        let streams = paper::encode(enc, &events).unwrap();
        assert_eq!(
            paper::decode(enc, &streams).unwrap(),
            events,
            "{}",
            enc.name()
        );
        let total: usize = streams.iter().map(|s| s.bytes.len()).sum();
        raw.insert(enc.name(), total);
    }
    // Section 3.1's ordering without compression: HATF best < HATF naive < ASCII.
    assert!(raw["hatf-best"] < raw["hatf-naive"], "{raw:?}");
    assert!(raw["hatf-naive"] < raw["ascii"], "{raw:?}");
    assert_eq!(raw["hatf-best"], raw["hatf-splitaddr"]);
}

#[test]
fn glibc_mtrace_perl_hash_head() {
    check("malloc/glibc-mtrace/perl-hash.mtrace.zst");
}

#[test]
fn android_systemui_head() {
    check("malloc/android/systemui.zip");
}
