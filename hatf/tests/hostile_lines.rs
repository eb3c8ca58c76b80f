//! Hostile text: a last line that does not parse, lines longer than any trace line, and input
//! with no line end at all. Strict mode refuses each at its line, in bounded memory.

mod hostile_support;

use hatf::by_name;
use hatf::format::{EncodeOptions, FormatError};
use hatf::internal::shared::text::line_reader::MAX_LINE_BYTES;
use hostile_support::decode;

/// Encodes `text` as `format`, strict or keeping bad lines.
fn try_encode(format: &str, text: &[u8], keep_bad_lines: bool) -> Result<Vec<u8>, FormatError> {
    let f = by_name(format).unwrap_or_else(|| panic!("no format {format}"));
    let options = EncodeOptions {
        keep_bad_lines,
        ..EncodeOptions::default()
    };
    let mut out = Vec::new();
    f.encode(&mut &text[..], &mut out, &options)?;
    Ok(out)
}

/// One valid line of each line-based format.
const VALID: [(&str, &[u8]); 6] = [
    ("mtrace", b"= Start\n@ ./a:[0x4] + 0x10 0x20\n"),
    ("memory-replay", b"1: malloc 0x10 16\n"),
    ("wee-alloc", b"Alloc(8),\n"),
    ("et2", b"A 1 10 C 7\n"),
    ("et3", b"N 1 10 7 0 0\n"),
    ("jvm", b"VS:0\n"),
];

#[test]
fn strict_mode_refuses_an_unparseable_last_line_without_a_newline() {
    for (format, valid) in &VALID[..3] {
        let lines = valid.iter().filter(|&&b| b == b'\n').count();
        let mut text = valid.to_vec();
        text.extend_from_slice(b"JUNK");
        let e = try_encode(format, &text, false).expect_err(format);
        assert_eq!(e.position, format!("{}:1", lines + 1), "{format}: {e}");
        assert!(e.message.contains("JUNK"), "{format}: {e}");
        // Kept verbatim with --keep-bad-lines, and given back byte for byte.
        let bin = try_encode(format, &text, true).unwrap();
        assert_eq!(decode(format, &bin).unwrap(), text, "{format}");
    }
    // A valid last line without its newline encodes in strict mode.
    for (format, text) in [
        ("mtrace", &b"= Start\n@ ./a:[0x4] + 0x10 0x20"[..]),
        ("memory-replay", b"1: malloc 0x10 16\n1: free 0x10"),
        ("wee-alloc", b"Alloc(8),\nFree(0),"),
    ] {
        let bin = try_encode(format, text, false).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(decode(format, &bin).unwrap(), text, "{format}");
    }
}

/// Every text format refuses a line longer than the limit at its number, strict or not, and
/// a line just under it is read (kept verbatim where it does not parse).
#[test]
fn lines_longer_than_the_limit_are_refused_at_their_line() {
    for (format, valid) in VALID {
        let lines = valid.iter().filter(|&&b| b == b'\n').count();
        let mut text = valid.to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        text.extend_from_slice(b"\n");
        text.extend_from_slice(valid);
        for keep in [false, true] {
            let e = try_encode(format, &text, keep).expect_err(format);
            assert_eq!(e.position, format!("{}:1", lines + 1), "{format}: {e}");
            assert!(e.message.contains("longer than"), "{format}: {e}");
            // The message does not repeat the line.
            assert!(
                e.to_string().len() < 1000,
                "{format}: {} bytes",
                e.to_string().len()
            );
        }
        // The same line as the input's last, without a `\n`.
        let cut = text.len() - valid.len() - 1;
        let e = try_encode(format, &text[..cut], true).expect_err(format);
        assert_eq!(e.position, format!("{}:1", lines + 1), "{format}: {e}");
    }
    for (format, valid) in &VALID[..3] {
        let mut text = valid.to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES));
        text.extend_from_slice(b"\n");
        let bin = try_encode(format, &text, true).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert!(decode(format, &bin).unwrap() == text, "{format}");
        // Strict mode refuses it as a line that does not parse, without repeating it whole.
        let e = try_encode(format, &text, false).expect_err(format);
        assert!(
            e.to_string().len() < 1000,
            "{format}: {} bytes",
            e.to_string().len()
        );
    }
}

/// Input without any line end (`/dev/zero`) is refused after the limit, not read whole.
#[test]
fn endless_input_without_line_ends_is_refused_quickly() {
    for (format, _) in VALID {
        let mut zeros = std::io::Read::take(std::io::repeat(0), 1 << 40);
        let f = by_name(format).unwrap();
        let e = f
            .encode(&mut zeros, &mut Vec::new(), &EncodeOptions::default())
            .expect_err(format);
        assert_eq!(e.position, "1:1", "{format}: {e}");
        assert!(e.message.contains("longer than"), "{format}: {e}");
    }
}
