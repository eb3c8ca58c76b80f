//! A file of layout `et-model-1` written at zstd level 19 (`data/et3-model-1.hatf`) still
//! decodes, and the encoder's model is unchanged: at
//! `--level 19` it writes that file byte for byte, at the default level a different but
//! equally decodable one. The text is synthetic (`data/make_et3_model_1.py`).

mod et_support;

use et_support::*;
use hatf::format::{EncodeOptions, TraceFormat};
use hatf::internal::formats::et::ET3;

const TEXT: &[u8] = include_bytes!("data/et3-model-1.trace");
const OLD: &[u8] = include_bytes!("data/et3-model-1.hatf");

fn encode_at(level: Option<i32>, threads: usize) -> Vec<u8> {
    let options = EncodeOptions {
        input_name: "et3-model-1.trace".into(),
        level,
        threads,
        ..EncodeOptions::default()
    };
    let mut out = Vec::new();
    ET3.encode(&mut &TEXT[..], &mut out, &options)
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

#[test]
fn an_et_model_1_file_decodes() {
    let back = decode(&ET3, OLD, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(back == TEXT, "the old file does not decode to its text");
}

#[test]
fn level_19_writes_the_old_file_byte_for_byte() {
    for threads in [1, 2] {
        assert!(
            encode_at(Some(19), threads) == OLD,
            "{threads} threads: the model or the packing changed"
        );
    }
}

#[test]
fn the_default_level_round_trips() {
    let new = encode_at(None, 2);
    assert_eq!(new, encode_at(None, 1), "the thread count changed the file");
    let back = decode(&ET3, &new, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(back == TEXT, "the default encoding does not round-trip");
}
