//! What the library's integration tests share: a trace encoded or decoded in memory by a
//! format, the test failing with the format's error if it fails.

#![allow(dead_code)]

use hatf::format::{DecodeOptions, EncodeOptions, TraceFormat};

/// `input` encoded by `f` with the default options.
pub fn encode(f: &dyn TraceFormat, input: &[u8]) -> Vec<u8> {
    encode_with(f, input, &EncodeOptions::default())
}

/// `input` encoded by `f` with `options`.
pub fn encode_with(f: &dyn TraceFormat, input: &[u8], options: &EncodeOptions) -> Vec<u8> {
    let mut out = Vec::new();
    f.encode(&mut &input[..], &mut out, options)
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// `bin` decoded by `f` with the default options.
pub fn decode(f: &dyn TraceFormat, bin: &[u8]) -> Vec<u8> {
    decode_with(f, bin, &DecodeOptions::default())
}

/// `bin` decoded by `f` on `threads` threads.
pub fn decode_on(f: &dyn TraceFormat, bin: &[u8], threads: usize) -> Vec<u8> {
    let options = DecodeOptions {
        threads,
        ..DecodeOptions::default()
    };
    decode_with(f, bin, &options)
}

/// `bin` decoded by `f` with `options`.
pub fn decode_with(f: &dyn TraceFormat, bin: &[u8], options: &DecodeOptions) -> Vec<u8> {
    let mut out = Vec::new();
    f.decode(&mut &bin[..], &mut out, options)
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

/// The `xz -9` and `zstd -19 --long=27` sizes of `text` (the command-line tools' settings,
/// through the libraries): the general-purpose compressors a format's file is measured against.
pub fn peers(text: &[u8]) -> (usize, usize) {
    use std::io::Write;
    let mut x = xz2::write::XzEncoder::new(Vec::new(), 9);
    x.write_all(text).unwrap();
    let xz = x.finish().unwrap().len();
    let mut z = zstd::stream::Encoder::new(Vec::new(), 19).unwrap();
    z.long_distance_matching(true).unwrap();
    z.window_log(27).unwrap();
    z.write_all(text).unwrap();
    (xz, z.finish().unwrap().len())
}
