//! Byte-for-byte round trips of every Elephant Tracks trace in the shared corpus.

mod et_support;

use et_support::*;
use hatf::internal::formats::et::{ET2, ET3};

#[test]
fn et3_merlin_traces_round_trip() {
    let paths = trace_paths("et3-merlin");
    for p in &paths {
        let t = read_trace(p);
        let (bin, report) = encode(&ET3, &t.text, &p.display().to_string(), false, None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(report.input_bytes, t.text.len() as u64);
        assert_eq!(report.bad_lines, 0);
        let back = decode(&ET3, &bin, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(back == t.text, "{} does not round-trip", p.display());
        eprintln!("{} {} -> {}", p.display(), t.text.len(), bin.len());
    }
}

#[test]
fn et2_java_traces_round_trip_with_bad_lines_kept() {
    let paths = trace_paths("et2-java");
    for p in &paths {
        let t = read_trace(p);
        let (bin, report) = encode(&ET2, &t.text, &p.display().to_string(), true, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let back = decode(&ET2, &bin, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(back == t.text, "{} does not round-trip", p.display());
        eprintln!(
            "{} {} -> {} bad {}",
            p.display(),
            t.text.len(),
            bin.len(),
            report.bad_lines
        );
    }
}

fn large_round_trip(sub: &str) {
    for p in trace_paths(sub) {
        let t = read_trace(&p);
        let start = std::time::Instant::now();
        let (bin, report) =
            encode(&ET3, &t.text, "trace", false, None).unwrap_or_else(|e| panic!("{e}"));
        let enc = start.elapsed();
        assert_eq!(
            report.records,
            t.text.iter().filter(|&&b| b == b'\n').count() as u64
        );
        let back = decode(&ET3, &bin, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(back == t.text, "{} does not round-trip", p.display());
        eprintln!(
            "{} {} -> {} (encode {:.1?}, total {:.1?})",
            p.display(),
            t.text.len(),
            bin.len(),
            enc,
            start.elapsed()
        );
    }
}

#[test]
#[ignore = "javac-tests is 76 MB of text (two files); run with --ignored"]
fn et3_large_javac_tests_round_trip() {
    large_round_trip("et3-large/javac-tests");
}

#[test]
#[ignore = "javac is 560 MB of text; run with --ignored"]
fn et3_large_javac_round_trip() {
    large_round_trip("et3-large/javac");
}

#[test]
fn corpus_traces_are_detected_with_their_dialect() {
    use hatf::format::TraceFormat;
    let has_u = |head: &[u8]| head.split(|&b| b == b'\n').any(|l| l.starts_with(b"U "));
    let dialects: [(&str, &dyn TraceFormat); 2] = [("et2-java", &ET2), ("et3-merlin", &ET3)];
    for (sub, by_u) in dialects {
        for p in trace_paths(sub) {
            let t = read_trace(&p);
            let head = &t.text[..t.text.len().min(64 << 10)];
            // Exactly one of the two names claims an ET trace.
            assert!(ET2.detect(head) != ET3.detect(head), "{}", p.display());
            if has_u(head) {
                // `U` records tell the dialect.
                assert!(by_u.detect(head), "{}", p.display());
            } else if sub == "et2-java" {
                // No `U` records (hello_world, methods), but records glued onto one line by
                // ET2's unlocked writer.
                assert!(ET2.detect(head), "{}", p.display());
            } else {
                // Nothing tells them apart: ET3, the current producer.
                assert!(ET3.detect(head), "{}", p.display());
            }
        }
    }
}
