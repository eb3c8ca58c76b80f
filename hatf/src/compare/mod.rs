//! `hatf compare`: the paper's Table 4 on real traces, next to general-purpose compressors.
//!
//! For each trace: bytes per record of every paper encoding uncompressed, with gzip -9 and with
//! zstd -19 (each stream of an encoding compressed on its own and the sizes added), the size of
//! `hatf encode` with encoding `auto` where the trace's format offers it, and gzip -9,
//! zstd -19 --long=27 and xz -9 run on the original text. A record is one allocation event.

pub mod input;
pub mod peers;
pub mod render;

use crate::alloc::event::AllocEvent;
use crate::alloc::paper::{self, Encoding};
use crate::format::{EncodeOptions, FormatError, TraceFormat};

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

/// One encoding's result: sizes, or why the encoding cannot hold this trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// The encoding's name (see [`Encoding::name`]).
    pub encoding: &'static str,
    /// Sizes, or the reason there are none.
    pub sizes: Result<Sizes, String>,
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
    let streams = paper::encode(encoding, events)?;
    let back = paper::decode(encoding, &streams)?;
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
    for s in &streams {
        sizes.raw += s.bytes.len() as u64;
        sizes.gzip += peers::gzip9(&s.bytes)?;
        sizes.zstd += peers::zstd19(&s.bytes)?;
    }
    Ok(sizes)
}

/// The size of the format's own `auto` encoding of `text`, when it has one.
pub fn auto_size(format: &dyn TraceFormat, text: &[u8], name: &str) -> Option<Result<u64, String>> {
    if !format.encodings().contains(&"auto") {
        return None;
    }
    let options = EncodeOptions {
        input_name: name.to_string(),
        ..EncodeOptions::default()
    };
    let mut sink = peers::CountingSink::default();
    let mut input: &[u8] = text;
    Some(
        format
            .encode(&mut input, &mut sink, &options)
            .map(|_| sink.0)
            .map_err(|e| e.to_string()),
    )
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
        .map(|e| Cell {
            encoding: e.name(),
            sizes: measure(e, &events),
        })
        .collect();
    let textpeers = TextPeers {
        raw: text.len() as u64,
        gzip9: peers::gzip9(text).map_err(to_err)?,
        zstd19_long27: peers::zstd19_long27(text).map_err(to_err)?,
        xz9: peers::xz9(text).map_err(to_err)?,
    };
    Ok(TraceRow {
        trace: name.to_string(),
        format: format.name().to_string(),
        records: events.len() as u64,
        cells,
        auto: auto_size(format, source, name),
        text: textpeers,
    })
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
