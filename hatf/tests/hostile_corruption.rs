//! Corruption of encoded files of every text format: truncation at every byte and a flipped
//! byte at every position of a small file (and at random positions of a larger one) give an
//! error — or, for a flip in a byte nobody reads, the original text — never different text.
//! (ET3 flips and the universal reader are also covered by `et_edge.rs` and metatf's
//! `damaged_traces.rs`; the native and paper encodings are in `hostile_native.rs`.)

mod hostile_support;

use hatf::format::Compression;
use hostile_support::{decode, encode, trace, Positions, FORMATS};

/// Decoding `damaged` must fail or give exactly `text`.
fn never_silently_wrong(format: &str, damaged: &[u8], text: &[u8], what: &str) {
    if let Ok(back) = decode(format, damaged) {
        assert!(back == text, "{format}: {what} decoded to different text");
    }
}

#[test]
fn every_truncation_of_a_small_file_is_an_error() {
    for format in FORMATS {
        for compression in [Compression::None, Compression::Zstd] {
            let text = trace(format, 12);
            let bin = encode(format, &text, compression);
            assert_eq!(decode(format, &bin).unwrap(), text, "{format}");
            for cut in 0..bin.len() {
                assert!(
                    decode(format, &bin[..cut]).is_err(),
                    "{format} {compression:?}: cut at {cut} of {} decoded without error",
                    bin.len()
                );
            }
        }
    }
}

#[test]
fn every_byte_flip_of_a_small_file_is_caught() {
    for format in FORMATS {
        for compression in [Compression::None, Compression::Zstd] {
            let text = trace(format, 12);
            let bin = encode(format, &text, compression);
            for at in 0..bin.len() {
                for bit in [0x01, 0x80] {
                    let mut damaged = bin.clone();
                    damaged[at] ^= bit;
                    let what = format!("{compression:?} flip {bit:#x} at {at}");
                    never_silently_wrong(format, &damaged, &text, &what);
                }
            }
        }
    }
}

#[test]
fn random_damage_to_a_larger_file_is_caught() {
    let mut at = Positions(0x5eed);
    for format in FORMATS {
        let text = trace(format, 3000);
        let bin = encode(format, &text, Compression::Zstd);
        for _ in 0..150 {
            let mut damaged = bin.clone();
            let i = at.below(bin.len());
            damaged[i] ^= 1 << at.below(8);
            never_silently_wrong(format, &damaged, &text, &format!("flip at {i}"));
        }
        for _ in 0..40 {
            let cut = at.below(bin.len());
            assert!(
                decode(format, &bin[..cut]).is_err(),
                "{format}: cut at {cut}"
            );
        }
    }
}
