//! Property tests of the byte-string model on its own: strings built from words, digit runs,
//! separators and repeats (the dictionary, match model, word and column contexts all fire),
//! over several fields and table caps, decode to the same bytes; text that repeats codes
//! smaller than its bytes.

use proptest::prelude::*;

use super::range::{Decoder, Encoder};
use super::strings::{field_id, StringModel, MAX_TABLE_BITS, MIN_TABLE_BITS};

const WORDS: [&str; 8] = [
    "openat",
    "AT_FDCWD",
    "/usr/lib/",
    "x86_64",
    "= 0x7f",
    "read(3, ",
    "ENOENT",
    "mmap",
];

/// A piece of a string: a word, a digit run, one separator, or any byte.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => (0usize..WORDS.len()).prop_map(|i| WORDS[i].as_bytes().to_vec()),
        2 => (0u64..1 << 40).prop_map(|n| n.to_string().into_bytes()),
        2 => prop::sample::select(b" (),=_\"/".to_vec()).prop_map(|b| vec![b]),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ]
}

/// A string of one of three fields, or a copy of an earlier string (index taken modulo).
fn item() -> impl Strategy<Value = (usize, Option<usize>, Vec<u8>)> {
    (
        0usize..3,
        prop_oneof![3 => Just(None), 1 => any::<usize>().prop_map(Some)],
        proptest::collection::vec(piece(), 0..12).prop_map(|p| p.concat()),
    )
}

/// The strings of `items`, copies resolved.
fn strings(items: &[(usize, Option<usize>, Vec<u8>)]) -> Vec<(u64, Vec<u8>)> {
    let fields = ["text1", "text2", "path"].map(field_id);
    let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
    for (f, copy, s) in items {
        let s = match copy {
            Some(i) if !out.is_empty() => out[i % out.len()].1.clone(),
            _ => s.clone(),
        };
        out.push((fields[*f], s));
    }
    out
}

fn encode(strings: &[(u64, Vec<u8>)], bits: u32) -> Vec<u8> {
    let mut m = StringModel::new(bits);
    let mut e = Encoder::new();
    for (f, s) in strings {
        m.encode(&mut e, *f, s);
    }
    e.finish()
}

fn decode(bytes: &[u8], strings: &[(u64, Vec<u8>)], bits: u32) -> Result<Vec<Vec<u8>>, String> {
    let mut m = StringModel::new(bits);
    let mut d = Decoder::new(bytes);
    strings
        .iter()
        .map(|(f, s)| {
            let mut out = Vec::new();
            m.decode(&mut d, *f, s.len(), &mut out)?;
            Ok(out)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn strings_round_trip(
        items in proptest::collection::vec(item(), 0..200),
        bits in MIN_TABLE_BITS..=MAX_TABLE_BITS,
    ) {
        let strings = strings(&items);
        let bytes = encode(&strings, bits);
        let back = decode(&bytes, &strings, bits).unwrap();
        let want: Vec<Vec<u8>> = strings.into_iter().map(|(_, s)| s).collect();
        prop_assert_eq!(back, want);
    }

    #[test]
    fn damaged_strings_give_no_panic(
        items in proptest::collection::vec(item(), 1..100),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
    ) {
        let strings = strings(&items);
        let mut bytes = encode(&strings, MIN_TABLE_BITS);
        for (at, x) in &flips {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] ^= x;
            }
        }
        let _ = decode(&bytes, &strings, MIN_TABLE_BITS);
    }
}

#[test]
fn repeated_text_codes_small() {
    let line = b"openat(AT_FDCWD, \"/usr/lib/x86_64-linux-gnu/libc.so.6\", O_RDONLY) = 3";
    let strings: Vec<(u64, Vec<u8>)> = (0..500u32)
        .map(|k| {
            let mut s = line.to_vec();
            s.extend_from_slice(k.to_string().as_bytes());
            (field_id("text2"), s)
        })
        .collect();
    let raw: usize = strings.iter().map(|(_, s)| s.len()).sum();
    let bytes = encode(&strings, 16);
    assert!(bytes.len() * 20 < raw, "{} bytes for {raw}", bytes.len());
    let back = decode(&bytes, &strings, 16).unwrap();
    assert!(back.iter().zip(&strings).all(|(b, (_, s))| b == s));
}
