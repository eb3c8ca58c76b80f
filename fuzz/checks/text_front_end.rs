//! The check behind the text front-end fuzz targets, shared with the stable replay test
//! `hatf/tests/fuzz_corpus.rs` so CI runs exactly what the fuzzer ran.
//!
//! Input layout: the first byte picks options (bit 0: keep bad lines; bits 1..: the encoding),
//! the rest is the trace text. Whatever `encode` accepts, `decode` must give back byte for byte.

#![allow(dead_code)] // each target uses one of the entry points

use hatf::by_name;
use hatf::format::{Compression, DecodeOptions, EncodeOptions, FormatError};
use hatf::internal::paper::{self, Encoding};
use hatf::internal::shared::allocation::event::AllocEvent;

/// A front end's "text → allocation events" reader, where it has one.
pub type ReadEvents = fn(&mut dyn std::io::Read, &str) -> Result<Vec<AllocEvent>, FormatError>;

/// Encodes `data` with the format called `format`; on success decodes and compares.
pub fn check(format: &str, data: &[u8], read_events: Option<ReadEvents>) {
    let f = by_name(format).unwrap_or_else(|| panic!("no format {format}"));
    let (flags, text) = data.split_first().unwrap_or((&0, &[]));
    let encodings = f.encodings();
    let options = EncodeOptions {
        input_name: "fuzz".into(),
        encoding: encodings[usize::from(flags >> 1) % encodings.len()].to_string(),
        compression: Compression::None,
        keep_bad_lines: flags & 1 != 0,
        ..EncodeOptions::default()
    };
    let mut bin = Vec::new();
    if f.encode(&mut &text[..], &mut bin, &options).is_ok() {
        let mut back = Vec::new();
        let decoded = f.decode(&mut &bin[..], &mut back, &DecodeOptions::default());
        if let Err(e) = decoded {
            panic!("{format}: decoding what was just encoded failed: {e}");
        }
        assert!(
            back == text,
            "{format}: decode(encode(text)) differs from text"
        );
    }
    let _ = f.stats(&mut &text[..], "fuzz");
    let _ = f.validate(&mut &text[..], "fuzz", &mut |_| {});
    if let Some(Ok(events)) = read_events.map(|read| read(&mut &text[..], "fuzz")) {
        paper_encodings_keep(&events);
    }
}

/// Every paper encoding either refuses `events` or gives them back unchanged.
fn paper_encodings_keep(events: &[AllocEvent]) {
    for encoding in Encoding::ALL {
        if let Ok(streams) = paper::encode(encoding, events) {
            let back = paper::decode(encoding, &streams);
            assert!(
                back.as_deref() == Ok(events),
                "{}: events changed: {:?}",
                encoding.name(),
                back.err()
            );
        }
    }
}

/// The malloc-bench check: with bit 7 of the first byte set, the rest is a protobuf message
/// that is gzipped first, so the fuzzer reaches the protobuf reader behind the gzip layer.
pub fn check_malloc_bench(data: &[u8]) {
    use std::io::Write;
    let read = Some(hatf::internal::formats::malloc_bench::read_events as ReadEvents);
    match data.split_first() {
        Some((&flags, message)) if flags & 0x80 != 0 => {
            let mut gz = flate2::write::GzEncoder::new(vec![flags & 0x7f], Default::default());
            gz.write_all(message).expect("writing to memory");
            check(
                "malloc-bench",
                &gz.finish().expect("writing to memory"),
                read,
            );
        }
        _ => check("malloc-bench", data, read),
    }
}
