//! What the criterion benches share: the whole encode and decode of one input through a
//! format's container, on one thread, timed as two benchmarks of a group.

use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;
use hatf::format::{DecodeOptions, EncodeOptions, TraceFormat};

/// Times `format`'s encode of `input` ("`noun` to container") and its decode back ("container
/// to `noun`"), each on one thread so that the figures are per core, after checking that the
/// decode gives `input` back byte for byte (`what` names the input in the panic).
pub fn container_round_trip(
    g: &mut BenchmarkGroup<'_, WallTime>,
    format: &dyn TraceFormat,
    input: &[u8],
    noun: &str,
    what: &str,
) {
    let encode_options = EncodeOptions {
        threads: 1,
        ..EncodeOptions::default()
    };
    let encode = || {
        let mut out = Vec::new();
        format
            .encode(&mut &input[..], &mut out, &encode_options)
            .expect("encodes");
        out
    };
    g.bench_function(format!("{noun} to container"), |b| {
        b.iter(|| encode().len())
    });
    let container = encode();
    let decode_options = DecodeOptions {
        threads: 1,
        ..DecodeOptions::default()
    };
    let decode = || {
        let mut out = Vec::with_capacity(input.len());
        format
            .decode(&mut &container[..], &mut out, &decode_options)
            .expect("decodes");
        out
    };
    assert!(
        decode() == input,
        "{what}: the container round trip is lossless"
    );
    g.bench_function(format!("container to {noun}"), |b| {
        b.iter(|| decode().len())
    });
}

/// The corpus folder: `HATF_CORPUS` when set (as the scripts read it), else `shared/corpus`
/// beside the repository, where a checkout in another folder (a git worktree) finds none.
pub fn corpus() -> String {
    std::env::var("HATF_CORPUS")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus").to_string())
}
