//! Damaged HATF 1.0 native streams and paper encodings. These formats carry no checksum, so a
//! flipped byte can change a value without any way to notice (see docs/ROBUSTNESS.md); what
//! holds, and is tested exhaustively on a small file here: no panic and no endless loop on any
//! damage, and a truncated stream gives a prefix of its records — with an error exactly when the
//! cut is inside a record.

mod hostile_support;

use hatf::internal::formats::native::{NativeReader, NativeWriter, Record};
use hatf::internal::paper::{self, Encoding};
use hatf::internal::shared::allocation::event::AllocEvent;
use hostile_support::trace;

fn events() -> Vec<AllocEvent> {
    let text = trace("memory-replay", 25);
    hatf::internal::formats::memory_replay::read_events(&mut &text[..], "t")
        .expect("generated trace reads")
}

/// Records read until the end or the first error, and whether an error came.
fn read(bytes: &[u8]) -> (Vec<Record>, bool) {
    let mut out = vec![];
    let mut r = NativeReader::new(bytes);
    loop {
        match r.read_record() {
            Ok(Some(rec)) => out.push(rec),
            Ok(None) => return (out, false),
            Err(_) => return (out, true),
        }
        assert!(out.len() <= bytes.len(), "more records than bytes");
    }
}

#[test]
fn native_truncation_gives_a_prefix_and_an_error_inside_a_record() {
    for encoding in [Encoding::HatfNaive, Encoding::HatfBest] {
        let bytes = paper::encode(encoding, &events()).unwrap()[0].bytes.clone();
        let (all, failed) = read(&bytes);
        assert!(!failed);
        // Record boundaries, from writing the records one at a time.
        let mut w = NativeWriter::new(Vec::new());
        let mut boundaries = vec![0];
        for r in &all {
            w.write_record(r).unwrap();
            boundaries.push(w.bytes_written());
        }
        assert_eq!(w.finish().unwrap().0, bytes);
        for cut in 0..bytes.len() {
            let (got, failed) = read(&bytes[..cut]);
            assert_eq!(&all[..got.len()], &got[..], "{encoding:?} cut at {cut}");
            let at_boundary = boundaries.contains(&(cut as u64));
            assert_eq!(failed, !at_boundary, "{encoding:?} cut at {cut}");
        }
    }
}

#[test]
fn native_flips_never_panic_or_loop() {
    let bytes = paper::encode(Encoding::HatfBest, &events()).unwrap()[0]
        .bytes
        .clone();
    for at in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            let _ = read(&damaged);
            let _ = hatf::internal::formats::native::read_events(&damaged[..]);
        }
    }
}

/// Decodes `streams` with the first stream replaced by `main`.
fn decode_with(
    encoding: Encoding,
    streams: &[paper::Stream],
    main: &[u8],
) -> Result<Vec<AllocEvent>, String> {
    let mut s = streams.to_vec();
    s[0].bytes = main.to_vec();
    paper::decode(encoding, &s)
}

#[test]
fn paper_encodings_survive_every_truncation_and_flip() {
    let events = events();
    for encoding in Encoding::ALL {
        let streams = paper::encode(encoding, &events).unwrap();
        let main = &streams[0].bytes;
        for cut in 0..main.len() {
            let got = decode_with(encoding, &streams, &main[..cut]);
            // Fixed-size and HATF records end cleanly or not at all; an `ascii` cut inside a
            // number still parses (the text format has no end marker), so only no-panic there.
            if encoding != Encoding::Ascii {
                if let Ok(got) = got {
                    assert_eq!(
                        &events[..got.len().min(events.len())],
                        &got[..],
                        "{encoding:?} cut at {cut}"
                    );
                }
            }
        }
        for at in 0..main.len() {
            let mut damaged = main.clone();
            damaged[at] ^= 0x41;
            let _ = decode_with(encoding, &streams, &damaged);
        }
    }
}

#[test]
fn random_damage_to_a_large_native_stream_never_panics_and_cuts_give_prefixes() {
    let text = trace("memory-replay", 3000);
    let events = hatf::internal::formats::memory_replay::read_events(&mut &text[..], "t").unwrap();
    let bytes = paper::encode(Encoding::HatfBest, &events).unwrap()[0]
        .bytes
        .clone();
    let (all, _) = read(&bytes);
    let mut at = hostile_support::Positions(0xdead);
    for _ in 0..300 {
        let mut damaged = bytes.clone();
        damaged[at.below(bytes.len())] ^= 1 << at.below(8);
        let _ = read(&damaged);
    }
    for _ in 0..100 {
        let cut = at.below(bytes.len());
        let (got, _) = read(&bytes[..cut]);
        assert_eq!(&all[..got.len()], &got[..], "cut at {cut}");
    }
}
