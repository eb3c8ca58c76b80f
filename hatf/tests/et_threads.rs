//! Elephant Tracks blocks are encoded on several threads: the output must not depend on the
//! thread count, and must decode back to the input.

mod et_support;

use et_support::*;
use hatf::format::{DecodeOptions, EncodeOptions, TraceFormat};
use hatf::internal::formats::et::encode::BLOCK_LINES;
use hatf::internal::formats::et::ET3;

#[test]
fn the_thread_count_does_not_change_the_output() {
    let Some(path) = trace_paths("et3-merlin")
        .into_iter()
        .find(|p| p.ends_with("pipeline_results/LotsOfAllocs/trace"))
    else {
        return;
    };
    // A real trace repeated past two and a half blocks, so a batch holds full and partial blocks.
    let one = read_trace(&path).text;
    let lines = one.iter().filter(|&&b| b == b'\n').count();
    let mut text = Vec::new();
    while text.iter().filter(|&&b| b == b'\n').count() < BLOCK_LINES * 5 / 2 {
        text.extend_from_slice(&one);
    }
    assert!(lines > 0);
    let encode_with = |threads: usize| {
        let options = EncodeOptions {
            input_name: "repeated".into(),
            threads,
            level: Some(1),
            ..EncodeOptions::default()
        };
        let mut out = Vec::new();
        let report = ET3
            .encode(&mut &text[..], &mut out, &options)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(report.input_bytes, text.len() as u64);
        out
    };
    let single = encode_with(1);
    for threads in [2, 3] {
        assert!(
            encode_with(threads) == single,
            "{threads} threads changed the output"
        );
    }
    let mut r = metatf::ContainerReader::new(&single[..]).expect("container");
    let mut blocks = 0;
    while r.next_block().expect("block").is_some() {
        blocks += 1;
    }
    assert_eq!(blocks, 3);
    let back = decode(&ET3, &single, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(back == text, "the repeated trace does not round-trip");
    // Blocks are decoded on several threads too, and written in order.
    for threads in [2, 3] {
        let options = DecodeOptions {
            input_name: "repeated".into(),
            names_dir: None,
            threads,
            positioned: None,
        };
        let mut back = Vec::new();
        ET3.decode(&mut &single[..], &mut back, &options)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(back == text, "{threads} decoding threads changed the text");
    }
}
