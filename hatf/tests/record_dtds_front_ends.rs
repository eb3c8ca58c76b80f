//! Each record DTD of `dtds/records/` against the records its front end really gives for a
//! trace (a corpus trace for mtrace, memory_replay, ET2 and ET3; a generated one for JVM, of
//! which no real trace is public): every record `hatf dump` prints has a record of the same
//! name in the DTD with the same fields in the same order (a byte string's length field left
//! out, as the text form implies it), and the generic engine reads the whole record text with
//! that DTD. `hatf/src/records/builtin.rs` ties the DTDs to the readers' tables; this ties them
//! to what the front ends produce.

mod jvm_support;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use hatf::format::EncodeOptions;
use hatf::internal::compare::{record_dtds, record_text};
use hatf::records::{Item, RecordFile};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

/// Lines of a corpus trace read: enough to meet every record its producer writes.
const LINES: usize = 200_000;

/// The first [`LINES`] lines of a corpus file, unpacked by its extension; `None` when the
/// corpus is absent.
fn corpus_text(rel: &str) -> Option<Vec<u8>> {
    let path = PathBuf::from(CORPUS).join(rel);
    let Ok(file) = std::fs::File::open(&path) else {
        println!("skipped: no {} (the corpus is absent)", path.display());
        return None;
    };
    let mut reader: Box<dyn Read> = match path.extension().and_then(|e| e.to_str()) {
        Some("zst") => Box::new(zstd::Decoder::new(file).expect("zstd stream")),
        Some("bz2") => Box::new(bzip2::read::BzDecoder::new(file)),
        Some("zip") => {
            let mut archive = zip::ZipArchive::new(file).expect("zip archive");
            let mut member = archive.by_index(0).expect("zip member");
            let mut text = Vec::new();
            member.read_to_end(&mut text).expect("zip member text");
            Box::new(std::io::Cursor::new(text))
        }
        _ => Box::new(file),
    };
    let mut text = Vec::new();
    reader.read_to_end(&mut text).expect("corpus text");
    if let Some((end, _)) = text
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(LINES - 1)
    {
        text.truncate(end + 1);
    }
    Some(text)
}

/// The DTD's records: name → field names, the tag and byte strings' length fields left out.
fn dtd_records(dtd: &str, file: &str) -> BTreeMap<String, Vec<String>> {
    let schema = metatf::dtd::parse_schema(dtd, file).unwrap_or_else(|d| panic!("{file}: {d}"));
    schema
        .global_records
        .iter()
        .map(|r| {
            let lengths: Vec<u16> = r
                .fields
                .iter()
                .filter_map(|f| match f.kind {
                    metatf::dtd::FieldKind::Bytes { length_position } => Some(length_position),
                    _ => None,
                })
                .collect();
            let fields = r
                .fields
                .iter()
                .filter(|f| f.position != 0 && !lengths.contains(&f.position))
                .map(|f| f.name.clone())
                .collect();
            (r.name.clone(), fields)
        })
        .collect()
}

/// Encodes `text` as `format` (lines that do not parse kept verbatim, as real traces need),
/// and checks every record met against the format's record DTD; returns the record names met.
fn check(format: &str, text: &[u8], name: &str) -> Vec<String> {
    let f = hatf::by_name(format).expect("a built-in format");
    let mut file = Vec::new();
    let options = EncodeOptions {
        input_name: name.to_string(),
        keep_bad_lines: true,
        ..EncodeOptions::default()
    };
    f.encode(&mut &text[..], &mut file, &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let (dtd_file, dtd) = record_dtds::of_format(format).expect("a record DTD");
    let declared = dtd_records(dtd, dtd_file);

    let mut input = std::io::Cursor::new(&file[..]);
    let records = RecordFile::open(&mut input, name).expect("the file opens");
    let types = records.types().to_vec();
    let mut met = vec![false; types.len()];
    records
        .read(&mut input, name, 0..u64::MAX, &mut |item| {
            if let Item::Record(r) = item {
                met[r.record_type] = true;
            }
            Ok(())
        })
        .expect("the records read");
    let mut names = Vec::new();
    for (t, _) in types.iter().zip(&met).filter(|(_, m)| **m) {
        let fields: Vec<String> = t.fields.iter().map(|f| f.name.clone()).collect();
        assert_eq!(
            declared.get(&t.name),
            Some(&fields),
            "{name}: record `{}` as the front end gives it is not {dtd_file}'s",
            t.name
        );
        names.push(t.name.clone());
    }

    // The generic engine reads every record the front end gave, through the DTD alone.
    let (records_text, count) = record_text::of_file(&file, name).expect("record text");
    let read = metatf::encode_text(
        dtd,
        dtd_file,
        &records_text[..],
        std::io::sink(),
        metatf::Codec::None,
        0,
    )
    .unwrap_or_else(|e| panic!("{name}: {dtd_file} does not read the records: {e}"));
    assert_eq!(read, count, "{name}");
    names
}

fn check_corpus(format: &str, rel: &str, expected: &[&str]) {
    let Some(text) = corpus_text(rel) else {
        return;
    };
    let met = check(format, &text, rel);
    for e in expected {
        assert!(
            met.iter().any(|m| m == e),
            "{rel}: no `{e}` record in {met:?}"
        );
    }
}

#[test]
fn mtrace_records_are_the_mtrace_dtds() {
    check_corpus(
        "mtrace",
        "malloc/glibc-mtrace/perl-hash.mtrace.zst",
        &["malloc", "free"],
    );
}

#[test]
fn memory_replay_records_are_the_memory_replay_dtds() {
    check_corpus(
        "memory-replay",
        "malloc/android/systemui.zip",
        &["malloc", "free"],
    );
}

#[test]
fn et2_records_are_the_et2_dtds() {
    // lots_of_allocs has every record kind et2-java writes, and glued lines kept verbatim.
    check_corpus(
        "et2",
        "et/et2-java/data/lots_of_allocs/trace.bz2",
        &["N", "M", "E", "U", "W", "verbatim"],
    );
}

#[test]
fn et3_records_are_the_et3_dtds() {
    check_corpus(
        "et3",
        "et/et3-merlin/pipeline_results/SimpleTrace/trace_with_deaths",
        &["N", "A", "M", "E", "U", "D"],
    );
}

#[test]
fn jvm_records_are_the_jvm_dtds() {
    let (text, _) = jvm_support::trace(11, 4_000, 3, jvm_support::Ends::Lf);
    let met = check("jvm", text.as_bytes(), "generated.jvm");
    assert!(met.len() >= 5, "{met:?}");
}

#[test]
fn every_built_in_format_is_checked_here_or_has_no_records_of_its_own() {
    // The allocation formats not above (wee_alloc, malloc-bench) are tied by builtin.rs; this
    // test names the ones above so that a new format is not silently left out.
    let checked = ["mtrace", "memory-replay", "et2", "et3", "jvm"];
    for f in hatf::registry() {
        let name = f.name();
        let zipped = name.strip_suffix("-zip").unwrap_or(name);
        assert!(
            checked.contains(&zipped) || ["wee-alloc", "malloc-bench"].contains(&name),
            "{name} has no test tying its record DTD to its records"
        );
    }
}
