//! Round trips of hand-made traces covering every line shape the encoder distinguishes.

mod et_support;

use et_support::*;
use hatf::format::TraceFormat;
use hatf::internal::formats::et::{ET2, ET3};

fn round_trip(format: &dyn TraceFormat, text: &[u8], keep: bool) -> usize {
    let (bin, _) = encode(format, text, "t", keep, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(metatf::looks_like_container(&bin));
    let back = decode(format, &bin, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        String::from_utf8_lossy(&back),
        String::from_utf8_lossy(text)
    );
    bin.len()
}

#[test]
fn every_line_shape_round_trips() {
    let text = b"# comment\n\nN 5 16 1 2 0 9\nA 6 24 1 3 2 9\nN 5 16 1 2 0 9\nM 10 5 9\nW 5 33 9\nW 5 33 9\n\
U 5 6 2 9\nU 0 0 2 9\nE 10 9\nE 11 9\nT 10 5 6 9\nH 10 5 6 9\nX 10 5 6 9\nD 6 9 3\nD 5 9 2 16\nD 77 9 1\n\
D 5 9 4\nE  1 2\nN 05 16 1 2 0 9\nW 5 18446744073709551615 9\nM 1 2 3\r\nW 1 2 3\n\t\n   \nE 1 2";
    for f in [&ET2 as &dyn TraceFormat, &ET3] {
        round_trip(f, text, false);
    }
}

#[test]
fn bad_lines_kept_and_restored() {
    let text = b"M 1 0 7\nM 515 0 2018699554W 650023597 123 2018699554\nE 114 205029188E 95 205029188\nQ\nE 1 7\n";
    let (bin, report) = encode(&ET2, text, "t", true, None).expect("kept");
    assert_eq!(report.bad_lines, 3);
    assert_eq!(report.records, 5);
    assert_eq!(decode(&ET2, &bin, None).expect("decodes"), text);
}

#[test]
fn empty_and_unterminated_inputs() {
    round_trip(&ET3, b"", false);
    round_trip(&ET3, b"\n", false);
    round_trip(&ET3, b"E 1 2", false);
    round_trip(&ET3, b"garbage without newline", true);
}

#[test]
fn both_u_orders_round_trip_under_either_name() {
    let et2 = b"N 1311053135 16 1 2 0 7\nU 1311053135 19 118352462 7\nU 1311053135 20 0 7\n";
    let et3 = b"N 914504136 16 1 2 0 7\nU 0 914504136 2 7\nU 914504136 0 4 7\n";
    for f in [&ET2 as &dyn TraceFormat, &ET3] {
        round_trip(f, et2, false);
        round_trip(f, et3, false);
    }
}

#[test]
fn detection_tells_the_u_order() {
    let et2 = b"M 1 0 7\nU 1311053135 19 118352462 2018699554\nE 1 7\n";
    let et3 = b"M 1 0 7\nU 0 914504136 2 1283928880\nE 1 7\n";
    assert!(ET2.detect(et2) && !ET3.detect(et2));
    assert!(ET3.detect(et3) && !ET2.detect(et3));
    assert!(!ET2.detect(b"@ /lib/libc.so.6:[0x1] + 0x55 0x10\n"));
    assert!(!ET3.detect(b"= Start\n"));
}

#[test]
fn large_synthetic_trace_spans_blocks() {
    // More lines than one block holds, so block boundaries and model resets are exercised.
    let mut text = Vec::new();
    let mut x: u64 = 12345;
    let lines = hatf::internal::formats::et::encode::BLOCK_LINES + 1000;
    for i in 0..lines {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let obj = x & 0x7fff_ffff;
        let line = match i % 5 {
            0 => format!("N {obj} 16 {} 3 0 77\n", i % 7),
            1 => format!("M {} {obj} 77\n", i % 11),
            2 => format!("E {} 77\n", (i - 1) % 11),
            3 => format!("U {obj} {} 4 77\n", x >> 40),
            _ => format!("D {obj} 77 {i}\n"),
        };
        text.extend_from_slice(line.as_bytes());
    }
    round_trip(&ET3, &text, false);
}

#[test]
fn damaged_binaries_give_errors_not_panics() {
    let text = b"N 5 16 1 2 0 9\nM 10 5 9\nW 5 33 9\nU 5 0 2 9\nE 10 9\nD 5 9 3\n# c\n";
    let (bin, _) = encode(&ET3, text, "t", false, None).expect("encodes");
    for cut in [0, 4, 20, bin.len() / 2, bin.len() - 1] {
        assert!(decode(&ET3, &bin[..cut], None).is_err(), "cut at {cut}");
    }
    for pos in 0..bin.len() {
        let mut bad = bin.clone();
        bad[pos] ^= 0x10;
        // Checksums catch nearly every flip; whatever happens, it must not panic, and a
        // success must still be the original text (the flip hit a byte nobody reads).
        if let Ok(back) = decode(&ET3, &bad, None) {
            assert_eq!(back, text, "flip at byte {pos}");
        }
    }
}
