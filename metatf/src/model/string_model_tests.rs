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

/// The strings of `items` decoded after coding with a cap of `bits`, and as they should be.
fn round_trip(
    items: &[(usize, Option<usize>, Vec<u8>)],
    bits: u32,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let strings = strings(items);
    let bytes = encode(&strings, bits);
    let back = decode(&bytes, &strings, bits).unwrap();
    (back, strings.into_iter().map(|(_, s)| s).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn strings_round_trip(
        items in proptest::collection::vec(item(), 0..200),
        bits in MIN_TABLE_BITS..=MAX_TABLE_BITS,
    ) {
        let (back, want) = round_trip(&items, bits);
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

/// `cycle` strings of one length, all distinct (more than the 15 candidates of a length), in
/// the same order `rounds` times, in two fields.
fn cycles(cycle: u32, rounds: u32) -> Vec<(u64, Vec<u8>)> {
    let fields = [field_id("text1"), field_id("text2")];
    (0..rounds)
        .flat_map(|_| 0..cycle)
        .map(|k| {
            let s = format!("proc {:04} state S kworker/{k:03}", k * 7919 % 10_000);
            (fields[k as usize % 2], s.into_bytes())
        })
        .collect()
}

/// A run of strings seen before codes each as its successor (rank 0): the second to
/// twentieth rounds of 60 strings take a small part of a byte each. Without successors the
/// strings are none of the 15 candidates of their length and are coded byte by byte through
/// the match model, about a byte each.
#[test]
fn repeated_runs_code_as_successors() {
    let once = cycles(60, 1);
    let many = cycles(60, 20);
    let (a, b) = (encode(&once, 16).len(), encode(&many, 16).len());
    let repeats = many.len() - once.len();
    assert!(
        (b - a) * 8 * 4 < repeats,
        "{} bytes for {repeats} repeated strings",
        b - a
    );
    let back = decode(&encode(&many, 16), &many, 16).unwrap();
    assert!(back.iter().zip(&many).all(|(b, (_, s))| b == s));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Runs repeated with changes (a string replaced, dropped or added), so that successors
    /// hit, miss, and point at strings of other lengths.
    #[test]
    fn repeated_runs_round_trip(
        run in proptest::collection::vec(item(), 1..40),
        changes in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, item()), 0..30),
        rounds in 1usize..6,
    ) {
        let mut items = Vec::new();
        for _ in 0..rounds {
            items.extend(run.iter().cloned());
        }
        for (at, what, new) in changes {
            let i = at.index(items.len());
            match what {
                0 => items[i] = new,
                1 if items.len() > 1 => {
                    items.remove(i);
                }
                _ => items.insert(i, new),
            }
        }
        let (back, want) = round_trip(&items, MIN_TABLE_BITS);
        prop_assert_eq!(back, want);
    }
}

/// Records of a short name (too short for the match model's 6-byte hash) and a string whose
/// first bytes the name decides, then random digits; or the digits alone.
fn named(prefixed: bool) -> Vec<(u64, Vec<u8>)> {
    const NAMES: [(&str, &str); 4] = [
        ("read", "fd=3, "),
        ("brk", "NULL, "),
        ("mmap", "addr="),
        ("close", "#"),
    ];
    let (name, args) = (field_id("name"), field_id("args"));
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut out = Vec::new();
    for _ in 0..2000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (n, p) = NAMES[(x >> 60) as usize & 3];
        let digits = (x & 0xFF_FFFF).to_string();
        let s = if prefixed {
            format!("{p}{digits}")
        } else {
            digits
        };
        out.push((name, n.as_bytes().to_vec()));
        out.push((args, s.into_bytes()));
    }
    out
}

/// The joined history (order 5 across strings) learns what a string's first bytes are after
/// the string before it: the name's prefixes cost less than half a bit a record (about 0.4
/// with it; about 0.75 when context 4 reads only the string's own bytes).
#[test]
fn strings_before_predict_first_bytes() {
    let (with, without) = (named(true), named(false));
    let (a, b) = (encode(&with, 16).len(), encode(&without, 16).len());
    let records = with.len() / 2;
    assert!(
        a * 16 < b * 16 + records,
        "{a} bytes with the prefixes, {b} without, {records} records"
    );
    let back = decode(&encode(&with, 16), &with, 16).unwrap();
    assert!(back.iter().zip(&with).all(|(b, (_, s))| b == s));
}

/// A dictionary keeps at most 32 KiB of strings per field, however many strings it may
/// hold: a field of 1,000-byte strings stops at 32 of them.
#[test]
fn dictionaries_keep_bounded_bytes() {
    let mut m = StringModel::new(MIN_TABLE_BITS);
    let mut e = Encoder::new();
    let f = field_id("line");
    for k in 0..100u32 {
        let s = format!("{k:04}").repeat(250);
        m.encode(&mut e, f, s.as_bytes());
    }
    let (count, bytes) = m.kept(f);
    assert_eq!((count, bytes), (32, 32_000));
}
