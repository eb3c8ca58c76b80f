//! glibc mtrace: byte-for-byte round trips on the corpus, odd inputs and generated text, and
//! error positions.

use hatf::internal::formats::mtrace::{read_events, Mtrace};
use hatf::{DecodeOptions, EncodeOptions, TraceFormat};
use proptest::prelude::*;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

fn encode_with(text: &[u8], keep_bad_lines: bool) -> Result<Vec<u8>, hatf::FormatError> {
    let mut out = Vec::new();
    let options = EncodeOptions {
        input_name: "t.mtrace".into(),
        keep_bad_lines,
        ..EncodeOptions::default()
    };
    Mtrace.encode(&mut &text[..], &mut out, &options)?;
    Ok(out)
}

fn decode(bin: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    Mtrace
        .decode(&mut &bin[..], &mut out, &DecodeOptions::default())
        .expect("decode");
    out
}

fn round_trip(text: &[u8]) -> usize {
    let bin = encode_with(text, false).expect("encode");
    assert!(decode(&bin) == text, "round trip differs");
    bin.len()
}

#[test]
fn corpus_mtrace_files_round_trip_byte_for_byte() {
    let dir = std::path::Path::new(CORPUS).join("malloc/glibc-mtrace");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    };
    let mut seen = 0;
    for e in entries.flatten() {
        let path = e.path();
        if !path.to_string_lossy().ends_with(".mtrace.zst") {
            continue;
        }
        let text = zstd::decode_all(std::fs::File::open(&path).unwrap()).unwrap();
        let size = round_trip(&text);
        eprintln!(
            "{}: {} bytes of text → {size} bytes",
            path.display(),
            text.len()
        );
        assert!(
            size * 20 < text.len(),
            "{} compresses less than 20×",
            path.display()
        );
        seen += 1;
    }
    assert!(seen >= 2, "expected the two corpus mtrace files");
}

#[test]
fn odd_inputs_round_trip() {
    let cases: &[&[u8]] = &[
        b"",
        b"= Start\n",
        b"= Start",
        b"= Start\n@ a:[0x1] + 0x10 0x20\n@ a:[0x1] - 0x10",
        b"= Start\r\n@ a:[0x1] + 0x10 0x20\r\n@ a:[0x1] - 0x10\r\n",
        b"= Start\n= Something else\n= End\n",
        b"+ 0x10 0x20\n- 0x10\n- (nil)\n+ (nil) 0\n",
        b"@ x y:[0x1] + 0x10 0x20\n@ x y:[0x1] < 0x10\n@ x y:[0x1] > 0x30 0x40\n",
        b"+ 0x0010 0x20\n+ 0X20 0x20\n+ 0x30 0x20\n- 0x30\n- 0x30\n- 0x999\n",
        b"@ a + 0x10 0\n@ a + 0x10 0x0\n",
        // Allocations at a live address (lost frees): flagged in the address stream.
        b"@ a + 0x10 0x20\n@ a + 0x30 0x20\n@ a + 0x10 0x40\n@ a - 0x30\n@ a - 0x10\n@ a - 0x10\n",
    ];
    for c in cases {
        let bin = encode_with(c, false).expect("encode");
        assert_eq!(
            String::from_utf8_lossy(&decode(&bin)),
            String::from_utf8_lossy(c)
        );
    }
    // Blank lines are not mtrace lines: an error, or kept verbatim on request.
    let blank = b"= Start\n\n@ a + 0x10 0x20\n\n";
    assert_eq!(encode_with(blank, false).unwrap_err().position, "2:1");
    assert_eq!(decode(&encode_with(blank, true).unwrap()), blank);
}

#[test]
fn bad_lines_are_errors_with_line_and_column_unless_kept() {
    let text = b"= Start\n@ a:[0x1] + 0x10 0x20\n@ a:[0x1] * 0x10\n";
    let e = encode_with(text, false).unwrap_err();
    assert_eq!(e.file, "t.mtrace");
    assert_eq!(e.position, "3:1");
    assert!(e.message.contains("@ a:[0x1] * 0x10"), "{}", e.message);
    let e = encode_with(b"@ a + 0xq1 0x20\n", false).unwrap_err();
    assert_eq!(e.position, "1:7");
    let bin = encode_with(text, true).unwrap();
    assert_eq!(decode(&bin), text);
    // A doubled space is not how glibc prints; it is an error too.
    assert_eq!(
        encode_with(b"+ 0x30  0x20\n", false).unwrap_err().position,
        "1:1"
    );
}

#[test]
fn events_pair_realloc_halves() {
    let text = b"= Start\n@ a + 0x10 0x20\n@ a < 0x10\n@ a > 0x40 0x80\n@ b - 0x40\n";
    let ev = read_events(&mut &text[..], "t").unwrap();
    use hatf::internal::shared::allocation::event::AllocKind::*;
    let kinds: Vec<_> = ev.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![Malloc, Realloc, Free]);
    assert_eq!(
        (ev[1].old_address, ev[1].address, ev[1].size),
        (0x10, 0x40, 0x80)
    );
}

fn arb_line() -> impl Strategy<Value = Vec<u8>> {
    let caller = prop_oneof![Just(None), "[a-z /.:()+\\[\\]0-9]{1,12}".prop_map(Some),];
    let addr = prop_oneof![Just(0u64), 1u64..64, any::<u64>()].prop_map(|a| a * 16);
    let size = prop_oneof![Just(0u64), 1u64..100, any::<u64>()];
    let op = 0u8..9;
    (caller, op, addr, size, "[ -~]{0,20}").prop_map(|(c, op, a, s, junk)| {
        let mut l = String::new();
        if let Some(c) = c {
            l.push_str("@ ");
            l.push_str(&c);
            l.push(' ');
        }
        let sz = if s == 0 {
            "0".to_string()
        } else {
            format!("{s:#x}")
        };
        let ad = if a == 0 {
            "(nil)".to_string()
        } else {
            format!("{a:#x}")
        };
        match op {
            0 | 1 => l.push_str(&format!("+ {ad} {sz}\n")),
            2 | 3 => l.push_str(&format!("- {ad}\n")),
            4 => l.push_str(&format!("< {ad}\n")),
            5 => l.push_str(&format!("> {ad} {sz}\n")),
            6 => l.push_str(&format!("+ {ad} {sz}\r\n")),
            7 => l = format!("= {junk}\n"),
            _ => l.push_str(&format!("- {a:#X}\n")),
        }
        l.into_bytes()
    })
}

proptest! {
    #[test]
    fn generated_logs_round_trip(lines in prop::collection::vec(arb_line(), 0..60), cut in any::<bool>()) {
        let mut text: Vec<u8> = lines.concat();
        if cut && !text.is_empty() {
            text.pop();
        }
        let bin = encode_with(&text, false).expect("encode");
        prop_assert_eq!(decode(&bin), text);
    }

    #[test]
    fn arbitrary_bytes_round_trip_with_keep_bad_lines(text in prop::collection::vec(any::<u8>(), 0..300)) {
        let bin = encode_with(&text, true).expect("encode");
        prop_assert_eq!(decode(&bin), text);
    }
}

#[test]
fn stats_count_kinds_bytes_and_peak() {
    let text =
        b"= Start\n@ a + 0x10 0x20\n@ a + 0x40 0x8\n@ a < 0x10\n@ a > 0x80 0x100\n@ b - 0x40\n";
    let r = Mtrace.stats(&mut &text[..], "t").unwrap().unwrap();
    assert_eq!(r.json["records_by_kind"]["malloc"], 2);
    assert_eq!(r.json["records_by_kind"]["realloc"], 1);
    assert_eq!(r.json["records_by_kind"]["free"], 1);
    assert_eq!(r.json["bytes_allocated"], 0x20 + 0x8 + 0x100);
    assert_eq!(r.json["peak_live_bytes"], 0x108);
    assert_eq!(r.json["live_at_end"]["objects"], 1);
    assert!(r.text.contains("peak live bytes     264"), "{}", r.text);
}

#[test]
fn sample_recording_round_trips() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/sample.mtrace");
    let text = std::fs::read(path).expect("samples/sample.mtrace is part of the repository");
    assert!(Mtrace.detect(&text[..text.len().min(65536)]));
    let size = round_trip(&text);
    assert!(size * 10 < text.len());
}
