//! Strings coded with their ends (docs/FORMAT.md §7, "Strings with their ends"): the string
//! model on its own (round trips mixed with strings of known length, damaged input, a size
//! check), and blocks whose lengths are coded with their strings, all, some or none.

use proptest::prelude::*;

use super::block::{encode_ended, Coding};
use super::choice::Choice;
use super::engine::Carried;
use super::flat::FlatBlock;
use super::numbers::NumberModel;
use super::order::Orders;
use super::range::{Decoder, Encoder};
use super::strings::{field_id, StringModel, MIN_TABLE_BITS};
use super::trials::choose_best;
use super::{decode_alone, Streams};
use crate::universal::plan::Catalog;
use crate::universal::Value;

/// A piece of a string: a name, a number, a separator or any byte.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => prop::sample::select(vec!["openat", "(AT_FDCWD, ", ") = 0", "/usr/lib/", "ENOENT"])
            .prop_map(|w| w.as_bytes().to_vec()),
        2 => (0u64..1 << 30).prop_map(|n| n.to_string().into_bytes()),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ]
}

/// A string: its field (of two), whether it is coded with its end, and its bytes (possibly
/// empty, possibly a copy of the string `copy` items before).
fn item() -> impl Strategy<Value = (usize, bool, Option<usize>, Vec<u8>)> {
    (
        0usize..2,
        any::<bool>(),
        prop_oneof![3 => Just(None), 1 => (1usize..20).prop_map(Some)],
        proptest::collection::vec(piece(), 0..8).prop_map(|p| p.concat()),
    )
}

/// The strings of `items`, copies resolved: (field, ended, bytes).
fn strings(items: &[(usize, bool, Option<usize>, Vec<u8>)]) -> Vec<(u64, bool, Vec<u8>)> {
    let fields = [field_id("text1"), field_id("args")];
    let mut out: Vec<(u64, bool, Vec<u8>)> = Vec::new();
    for (f, ended, copy, s) in items {
        let s = match copy {
            Some(back) if *back <= out.len() => out[out.len() - back].2.clone(),
            _ => s.clone(),
        };
        out.push((fields[*f], *ended, s));
    }
    out
}

fn encode(strings: &[(u64, bool, Vec<u8>)]) -> Vec<u8> {
    let mut m = StringModel::new(MIN_TABLE_BITS);
    let mut e = Encoder::new();
    for (f, ended, s) in strings {
        if *ended {
            m.encode_ended(&mut e, *f, s);
        } else {
            m.encode(&mut e, *f, s);
        }
    }
    e.finish()
}

/// Decodes what [`encode`] wrote, the ended strings limited to `limit` bytes each.
fn decode(
    bytes: &[u8],
    strings: &[(u64, bool, Vec<u8>)],
    limit: u64,
) -> Result<Vec<Vec<u8>>, String> {
    let mut m = StringModel::new(MIN_TABLE_BITS);
    let mut d = Decoder::new(bytes);
    strings
        .iter()
        .map(|(f, ended, s)| {
            let mut out = Vec::new();
            if *ended {
                let n = m.decode_ended(&mut d, *f, limit, &mut out)?;
                assert_eq!(n, out.len());
                assert!(n as u64 <= limit, "{n} bytes past the limit {limit}");
            } else {
                m.decode(&mut d, *f, s.len(), &mut out)?;
            }
            Ok(out)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn ended_strings_round_trip(items in proptest::collection::vec(item(), 0..150)) {
        let strings = strings(&items);
        let back = decode(&encode(&strings), &strings, u64::MAX).unwrap();
        let want: Vec<Vec<u8>> = strings.into_iter().map(|(_, _, s)| s).collect();
        prop_assert_eq!(back, want);
    }

    /// Flipped bytes give an error or other strings, never a panic, and no ended string
    /// longer than the limit.
    #[test]
    fn damaged_ended_strings_give_no_panic(
        items in proptest::collection::vec(item(), 1..80),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        limit in 0u64..64,
    ) {
        let strings = strings(&items);
        let mut bytes = encode(&strings);
        for (at, x) in &flips {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] ^= x;
            }
        }
        let _ = decode(&bytes, &strings, limit);
    }
}

/// A string longer than the limit is refused with an error.
#[test]
fn an_ended_string_past_its_limit_is_an_error() {
    let strings = vec![(field_id("line"), true, b"0123456789".to_vec())];
    let bytes = encode(&strings);
    assert!(decode(&bytes, &strings, 10).is_ok());
    let e = decode(&bytes, &strings, 9).unwrap_err();
    assert!(e.contains("runs past"), "{e}");
}

/// Arguments of calls whose ends the bytes show (`) = 0`) but whose lengths vary at random:
/// with their ends they take fewer bytes than with their lengths coded beside them by an
/// adaptive number model, which must spend about the entropy of the lengths.
#[test]
fn ends_shown_by_the_bytes_code_smaller_than_lengths() {
    let f = field_id("args");
    let strings: Vec<Vec<u8>> = (0..3000u64)
        .map(|k| {
            let z = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            let digits = (z % 24 + 1) as usize;
            let n = format!("{:0digits$}", z % 1000, digits = digits);
            format!("3, \"{n}\") = 0").into_bytes()
        })
        .collect();
    let mut m = StringModel::new(MIN_TABLE_BITS);
    let mut e = Encoder::new();
    for s in &strings {
        m.encode_ended(&mut e, f, s);
    }
    let ended = e.finish().len();
    let mut m = StringModel::new(MIN_TABLE_BITS);
    let mut lengths = NumberModel::default();
    let mut e = Encoder::new();
    for s in &strings {
        lengths.encode(&mut e, s.len() as u64);
        m.encode(&mut e, f, s);
    }
    let known = e.finish().len();
    assert!(
        ended * 10 < known * 9,
        "{ended} bytes with ends, {known} with lengths"
    );
}

const DTD: &str = "tag.width = 1;
nameLength.width = 2; nameLength.interpretation = none;
name.interpretation = none;
argsLength.width = 2; argsLength.interpretation = none;
args.interpretation = none;
fd.width = 8; fd.interpretation = none;
call : (tag, nameLength, name, fd, argsLength, args) {
    tag.value = 4; name.width = nameLength.value; args.width = argsLength.value;
}
";

/// `n` calls: a name of four, a descriptor, and arguments of varied length.
fn block(catalog: &Catalog, n: usize) -> FlatBlock {
    let plan = catalog.by_tag(None, 4).unwrap();
    let names = ["read", "write", "openat", "close"];
    let mut flat = FlatBlock::default();
    for k in 0..n {
        let z = (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33;
        let name = names[(z % 4) as usize].as_bytes().to_vec();
        let args = format!(
            "{}, \"{}\") = {}",
            z % 7,
            "x".repeat((z % 30) as usize),
            z % 3
        );
        let fields = vec![
            Value::Uint(name.len() as u64),
            Value::Bytes(name),
            Value::Uint(z % 7),
            Value::Uint(args.len() as u64),
            Value::Bytes(args.into_bytes()),
        ];
        flat.push(plan, &fields).unwrap();
    }
    flat
}

/// A block codes with every endable length coded with its string, with none and with one,
/// and each decodes to its records; damaged, it gives an error or other records, never a
/// panic; the writer's choice codes it about as small as the smaller way.
#[test]
fn blocks_with_some_or_all_ends_round_trip() {
    let schema = metatf_dtd::parse_schema(DTD, "ends.dtd").unwrap();
    let catalog = Catalog::new(&schema).unwrap();
    let streams = Streams::new(&catalog);
    let flat = block(&catalog, 3000);
    let declared = |_: u8| false;
    let endable: Vec<usize> = (0..streams.len()).filter(|&s| streams.endable(s)).collect();
    let names: Vec<&str> = endable
        .iter()
        .map(|&s| streams.info[s].name.as_str())
        .collect();
    // The two lengths, and that of the built-in comment record.
    assert_eq!(names, ["length", "nameLength", "argsLength"]);
    let n = streams.len();
    let plain = Orders::plain(&catalog);
    let best = choose_best(
        &catalog,
        &streams,
        &flat,
        None,
        &declared,
        &[],
        &plain,
        &vec![true; n],
        &Carried::default(),
    )
    .unwrap();
    let choices: &[Choice] = &best.choices;
    let coding = Coding {
        catalog: &catalog,
        streams: &streams,
        block: &flat,
        choices,
        tag_context: best.tag_context,
        section: None,
        declared: &declared,
        orders: &plain,
    };
    let code = |ended: &[bool]| {
        encode_ended(&coding, ended, None, &Carried::default())
            .unwrap()
            .0
    };
    let all = streams.all_ends();
    let mut one = vec![false; n];
    one[endable[2]] = true;
    let mut sizes = Vec::new();
    for ended in [all, vec![false; n], one] {
        let bytes = code(&ended);
        let (back, _) =
            decode_alone(&catalog, &streams, &bytes, flat.records, None, &declared).unwrap();
        assert_eq!(back.words, flat.words);
        assert_eq!(back.bytes, flat.bytes);
        sizes.push(bytes.len());
        for i in (0..bytes.len()).step_by(7) {
            let mut bad = bytes.clone();
            bad[i] ^= 0x5A;
            let _ = decode_alone(&catalog, &streams, &bad, flat.records, None, &declared);
        }
    }
    // Random runs of `x` end where nothing foretells it: their lengths code smaller on their
    // own, with the names' and the descriptors' predictors, than their ends among the bytes.
    assert!(sizes[1] < sizes[0], "sizes all, none, args: {sizes:?}");
    // The writer's choice measures that and codes the block within 2 % of the smaller way.
    let (chosen, _) =
        super::ends_choice::encode(&coding, &best.bits, false, &mut Carried::default()).unwrap();
    let smallest = sizes.iter().min().copied().unwrap_or(0);
    assert!(
        chosen.len() * 100 <= smallest * 102,
        "{} bytes chosen; all, none, args: {sizes:?}",
        chosen.len()
    );
    let (back, _) =
        decode_alone(&catalog, &streams, &chosen, flat.records, None, &declared).unwrap();
    assert_eq!(back.bytes, flat.bytes);
}
