//! `hatf compare`: the paper's Table 4 on real traces, next to general-purpose compressors.
//!
//! For each trace: bytes per record of every paper encoding uncompressed, with gzip -9 and with
//! zstd -19 (each stream of an encoding compressed on its own and the sizes added), the size of
//! `hatf encode` with encoding `auto` where the trace's format offers it, and gzip -9,
//! zstd -19 --long=27 and xz -9 run on the original text. A record is one allocation event.
//!
//! Every variant is also timed both ways (wall clock, one thread): writing it (the encoding, then
//! its compressor) and reading it back (the decompressor, then the decoding). Each is checked to
//! give back what it was given.

pub mod input;
pub mod peers;
pub mod render;
pub mod variants;

use crate::format::{DecodeOptions, EncodeOptions, FormatError, TraceFormat};
use crate::paper::{self, Encoding};
use crate::shared::allocation::event::AllocEvent;
use std::time::{Duration, Instant};

/// Sizes in bytes of one encoding of one trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    /// Uncompressed.
    pub raw: u64,
    /// Each stream through gzip -9, summed.
    pub gzip: u64,
    /// Each stream through zstd -19, summed.
    pub zstd: u64,
}

/// Wall-clock times of one variant: writing it and reading it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Times {
    /// From the events (or text) to the stored bytes.
    pub encode: Duration,
    /// From the stored bytes back to the events (or text).
    pub decode: Duration,
}

impl std::ops::Add for Times {
    type Output = Times;
    fn add(self, other: Times) -> Times {
        Times {
            encode: self.encode + other.encode,
            decode: self.decode + other.decode,
        }
    }
}

/// The times of an encoding's three variants, matching [`Sizes`]: the encoding alone, and
/// the encoding followed by gzip -9 or zstd -19 on each stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EncodingTimes {
    /// The encoding alone.
    pub raw: Times,
    /// The encoding, then gzip -9 (and gunzip, then the decoding).
    pub gzip: Times,
    /// The encoding, then zstd -19.
    pub zstd: Times,
}

/// One encoding's result: sizes, or why the encoding cannot hold this trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// The encoding's name (see [`Encoding::name`]).
    pub encoding: &'static str,
    /// Sizes, or the reason there are none.
    pub sizes: Result<Sizes, String>,
    /// Times of each variant; all zero when there are no sizes.
    pub times: EncodingTimes,
}

/// The general-purpose compressors on the original text, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPeers {
    /// Text size.
    pub raw: u64,
    /// gzip -9.
    pub gzip9: u64,
    /// zstd -19 --long=27.
    pub zstd19_long27: u64,
    /// xz -9.
    pub xz9: u64,
    /// Compress and decompress times of each, in the same order.
    pub times: PeerTimes,
}

/// Compress (`encode`) and decompress (`decode`) times of the text peers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeerTimes {
    /// gzip -9.
    pub gzip9: Times,
    /// zstd -19 --long=27.
    pub zstd19_long27: Times,
    /// xz -9.
    pub xz9: Times,
}

/// Everything measured on one trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRow {
    /// The trace's name (file name).
    pub trace: String,
    /// The detected format.
    pub format: String,
    /// Allocation events (the "records" of bytes per record).
    pub records: u64,
    /// One cell per paper encoding, in [`Encoding::ALL`] order.
    pub cells: Vec<Cell>,
    /// `hatf encode --encoding auto` output size; `None` when the format has no `auto` encoding,
    /// `Some(Err)` when it failed.
    pub auto: Option<Result<u64, String>>,
    /// `hatf encode` and `hatf decode` times of the `auto` encoding (zero when it failed).
    pub auto_times: Times,
    /// Peers on the original text.
    pub text: TextPeers,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Comparison {
    /// One row per trace, in input order.
    pub rows: Vec<TraceRow>,
}

/// Measures one encoding of `events`, checking that it decodes back to the same events.
pub fn measure(encoding: Encoding, events: &[AllocEvent]) -> Result<Sizes, String> {
    measure_timed(encoding, events).map(|(sizes, _)| sizes)
}

/// [`measure`], with the times of every variant.
pub fn measure_timed(
    encoding: Encoding,
    events: &[AllocEvent],
) -> Result<(Sizes, EncodingTimes), String> {
    let started = Instant::now();
    let streams = paper::encode(encoding, events)?;
    let encode = started.elapsed();
    let started = Instant::now();
    let back = paper::decode(encoding, &streams)?;
    let own = Times {
        encode,
        decode: started.elapsed(),
    };
    if back != events {
        return Err(format!(
            "{} did not decode back to the same events",
            encoding.name()
        ));
    }
    let mut sizes = Sizes {
        raw: 0,
        gzip: 0,
        zstd: 0,
    };
    let mut times = EncodingTimes {
        raw: own,
        gzip: own,
        zstd: own,
    };
    for s in &streams {
        sizes.raw += s.bytes.len() as u64;
        let gzip = peers::gzip9(&s.bytes)?;
        sizes.gzip += gzip.bytes;
        times.gzip = times.gzip + peer_times(&gzip);
        let zstd = peers::zstd19(&s.bytes)?;
        sizes.zstd += zstd.bytes;
        times.zstd = times.zstd + peer_times(&zstd);
    }
    Ok((sizes, times))
}

fn peer_times(run: &peers::Run) -> Times {
    Times {
        encode: run.compress,
        decode: run.decompress,
    }
}

/// The size of the format's own `auto` encoding of `text`, when it has one.
pub fn auto_size(format: &dyn TraceFormat, text: &[u8], name: &str) -> Option<Result<u64, String>> {
    auto_timed(format, text, name).map(|r| r.map(|(bytes, _)| bytes))
}

/// [`auto_size`], with the encode and decode times; fails when the file does not decode back
/// to `text` byte for byte.
pub fn auto_timed(
    format: &dyn TraceFormat,
    text: &[u8],
    name: &str,
) -> Option<Result<(u64, Times), String>> {
    if !format.encodings().contains(&"auto") {
        return None;
    }
    let options = EncodeOptions {
        input_name: name.to_string(),
        ..EncodeOptions::default()
    };
    let run = || -> Result<(u64, Times), String> {
        let mut binary = Vec::new();
        let mut input: &[u8] = text;
        let started = Instant::now();
        format
            .encode(&mut input, &mut binary, &options)
            .map_err(|e| e.to_string())?;
        let encode = started.elapsed();
        let decode_options = DecodeOptions {
            input_name: name.to_string(),
            ..DecodeOptions::default()
        };
        let mut back = Vec::with_capacity(text.len());
        let started = Instant::now();
        format
            .decode(&mut binary.as_slice(), &mut back, &decode_options)
            .map_err(|e| e.to_string())?;
        let decode = started.elapsed();
        if back != text {
            return Err("the file did not decode back to the same bytes".to_string());
        }
        Ok((binary.len() as u64, Times { encode, decode }))
    };
    Some(run())
}

/// Measures everything on one trace given as text (already unpacked).
pub fn compare_text(name: &str, text: &[u8]) -> Result<TraceRow, FormatError> {
    let format = input::detect(text, name)?;
    compare_with(name, format, text, text)
}

/// Measures a trace read from disk: a format that recognises the unpacked text reads the text;
/// otherwise a format that reads the packed file itself (malloc-bench's `.trace.gz`) reads the
/// original bytes. The peers always compress the unpacked bytes.
pub fn compare_loaded(name: &str, loaded: &input::Loaded) -> Result<TraceRow, FormatError> {
    match input::detect(&loaded.text, name) {
        Ok(format) => compare_with(name, format, &loaded.text, &loaded.text),
        Err(e) => match input::detect(&loaded.original, name) {
            Ok(format) => compare_with(name, format, &loaded.original, &loaded.text),
            Err(_) => Err(e),
        },
    }
}

/// Measures one trace: `source` is what `format` reads, `text` what the peers compress.
fn compare_with(
    name: &str,
    format: &'static dyn TraceFormat,
    source: &[u8],
    text: &[u8],
) -> Result<TraceRow, FormatError> {
    let events = input::events(format, source, name)?;
    let to_err = |m: String| FormatError {
        file: name.to_string(),
        position: String::new(),
        message: m,
    };
    let cells = Encoding::ALL
        .into_iter()
        .map(|e| match measure_timed(e, &events) {
            Ok((sizes, times)) => Cell {
                encoding: e.name(),
                sizes: Ok(sizes),
                times,
            },
            Err(why) => Cell {
                encoding: e.name(),
                sizes: Err(why),
                times: EncodingTimes::default(),
            },
        })
        .collect();
    let gzip9 = peers::gzip9(text).map_err(to_err)?;
    let zstd19_long27 = peers::zstd19_long27(text).map_err(to_err)?;
    let xz9 = peers::xz9(text).map_err(to_err)?;
    let textpeers = TextPeers {
        raw: text.len() as u64,
        gzip9: gzip9.bytes,
        zstd19_long27: zstd19_long27.bytes,
        xz9: xz9.bytes,
        times: PeerTimes {
            gzip9: peer_times(&gzip9),
            zstd19_long27: peer_times(&zstd19_long27),
            xz9: peer_times(&xz9),
        },
    };
    let auto = auto_timed(format, source, name);
    let auto_times = match &auto {
        Some(Ok((_, times))) => *times,
        _ => Times::default(),
    };
    Ok(TraceRow {
        trace: name.to_string(),
        format: format.name().to_string(),
        records: events.len() as u64,
        cells,
        auto: auto.map(|r| r.map(|(bytes, _)| bytes)),
        auto_times,
        text: textpeers,
    })
}

/// A time in milliseconds, for tables, CSV and JSON.
pub fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Bytes per record, `NaN`-free: 0 records give 0.
pub fn per_record(bytes: u64, records: u64) -> f64 {
    if records == 0 {
        0.0
    } else {
        bytes as f64 / records as f64
    }
}

/// The trace `hatf compare` uses when given no input: its name and text.
pub fn sample() -> (&'static str, &'static [u8]) {
    (SAMPLE_NAME, SAMPLE_TEXT)
}

const SAMPLE_NAME: &str = "sample.mtrace";
/// `samples/sample.mtrace` (see `samples/README.md`), built into the library.
const SAMPLE_TEXT: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../samples/sample.mtrace"
));
