//! `hatf compare`: the paper's Table 4 on real traces, next to general-purpose compressors
//! and the generic engine.
//!
//! For each trace: bytes per record of every paper encoding uncompressed, with gzip -9 and with
//! zstd -19 (each stream of an encoding compressed on its own and the sizes added; allocation
//! traces only, a record being one allocation event), the size of the format-specific layout
//! (`hatf encode`, default settings), the generic engine on the format's records with its
//! record DTD (`dtds/records/`, plain and `--model auto`, see [`generic`]), and gzip -9,
//! zstd -19 --long=27 and xz -9 run on the original text.
//!
//! Every variant is also timed both ways (wall clock, one thread): writing it (the encoding, then
//! its compressor) and reading it back (the decompressor, then the decoding). Each is checked to
//! give back what it was given. Printing the results (table, CSV, JSON, chart) is the command
//! line's.

pub mod generic;
pub mod input;
pub mod peers;
pub mod record_dtds;
pub mod record_text;

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

impl TextPeers {
    /// The smallest of gzip -9, zstd -19 --long=27 and xz -9.
    pub fn best(&self) -> u64 {
        self.gzip9.min(self.zstd19_long27).min(self.xz9)
    }
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
    /// Allocation events (the "records" of bytes per record) for an allocation trace; the
    /// records of the record text form for any other.
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
    /// The generic engine on the trace's records; `None` when it was not asked for.
    pub generic: Option<generic::Generic>,
}

/// What `hatf compare` measures besides the fixed columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Run the generic engine (its `auto` model is the slowest column by far).
    pub generic: bool,
    /// Give the generic engine (and the format-specific size it is set against) only the
    /// trace's first this many lines; `None` for all of them. A format that reads a packed
    /// file (malloc-bench) is always measured whole.
    pub generic_lines: Option<u64>,
    /// Keep lines that do not parse verbatim (`hatf encode --keep-bad-lines`) in the
    /// format-specific layout, and so in the records the generic engine gets.
    pub keep_bad_lines: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            generic: true,
            generic_lines: Some(DEFAULT_GENERIC_LINES),
            keep_bad_lines: true,
        }
    }
}

/// Lines of a trace the generic engine gets by default: its `auto` model writes about
/// 50,000 records a second on one core, so this keeps a trace's row within about half a
/// minute, and its record text within tens of megabytes.
pub const DEFAULT_GENERIC_LINES: u64 = 1_000_000;

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

/// The file of the format's own `auto` encoding of `text` (`hatf encode`, default settings,
/// lines that do not parse kept verbatim when `keep_bad_lines`), with its encode and decode
/// times; fails when the file does not decode back to `text` byte for byte.
pub fn auto_file(
    format: &dyn TraceFormat,
    text: &[u8],
    name: &str,
    keep_bad_lines: bool,
) -> Option<Result<(Vec<u8>, Times), String>> {
    if !format.encodings().contains(&"auto") {
        return None;
    }
    let options = EncodeOptions {
        input_name: name.to_string(),
        keep_bad_lines,
        ..EncodeOptions::default()
    };
    let run = || -> Result<(Vec<u8>, Times), String> {
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
        Ok((binary, Times { encode, decode }))
    };
    Some(run())
}

/// Measures everything on one trace given as text (already unpacked).
pub fn compare_text(name: &str, text: &[u8]) -> Result<TraceRow, FormatError> {
    compare_text_with(name, text, Options::default())
}

/// [`compare_text`] with the generic engine's options.
pub fn compare_text_with(
    name: &str,
    text: &[u8],
    options: Options,
) -> Result<TraceRow, FormatError> {
    let format = input::detect(text, name)?;
    compare_with(name, format, text, text, options)
}

/// Measures a trace read from disk: a format that recognises the unpacked text reads the text;
/// otherwise a format that reads the packed file itself (malloc-bench's `.trace.gz`) reads the
/// original bytes. The peers always compress the unpacked bytes.
pub fn compare_loaded(name: &str, loaded: &input::Loaded) -> Result<TraceRow, FormatError> {
    compare_loaded_with(name, loaded, None, Options::default())
}

/// [`compare_loaded`] with the format named (`--from`) rather than detected, and the generic
/// engine's options.
pub fn compare_loaded_with(
    name: &str,
    loaded: &input::Loaded,
    from: Option<&'static dyn TraceFormat>,
    options: Options,
) -> Result<TraceRow, FormatError> {
    if let Some(format) = from {
        // A format named for a packed original (malloc-bench) reads the file as it is.
        let source = if format.detect(&loaded.text[..loaded.text.len().min(64 * 1024)]) {
            &loaded.text
        } else {
            &loaded.original
        };
        return compare_with(name, format, source, &loaded.text, options);
    }
    match input::detect(&loaded.text, name) {
        Ok(format) => compare_with(name, format, &loaded.text, &loaded.text, options),
        Err(e) => match input::detect(&loaded.original, name) {
            Ok(format) => compare_with(name, format, &loaded.original, &loaded.text, options),
            Err(_) => Err(e),
        },
    }
}

/// Measures a trace that has no built-in format, through a DTD alone: `text` is the record
/// text form (`hatf dump`'s output) or, when the DTD's records do not read it and the DTD has
/// line patterns, the trace's own lines. No paper encoding or format-specific layout applies.
pub fn compare_dtd(
    name: &str,
    text: &[u8],
    dtd: &str,
    dtd_name: &str,
) -> Result<TraceRow, FormatError> {
    let (mut plain, mut auto, mut records) = generic::of_record_text(dtd, dtd_name, text);
    if plain.is_err()
        && metatf_dtd::parse_schema_with_lines(dtd, dtd_name)
            .is_ok_and(|(_, lines)| !lines.records.is_empty())
    {
        (plain, auto, records) = generic::of_lines(dtd, dtd_name, text);
    }
    if let Err(why) = &plain {
        return Err(FormatError {
            file: name.to_string(),
            position: String::new(),
            message: why.clone(),
        });
    }
    let why = format!(
        "the paper's encodings hold allocation events; a trace read through {dtd_name} has none"
    );
    let cells = Encoding::ALL
        .into_iter()
        .map(|e| Cell {
            encoding: e.name(),
            sizes: Err(why.clone()),
            times: EncodingTimes::default(),
        })
        .collect();
    Ok(TraceRow {
        trace: name.to_string(),
        format: "dtd".to_string(),
        records,
        cells,
        auto: None,
        auto_times: Times::default(),
        text: text_peers(name, text)?,
        generic: Some(generic::Generic {
            dtd: dtd_name.to_string(),
            lines: None,
            records,
            specific: None,
            plain,
            auto,
        }),
    })
}

/// gzip -9, zstd -19 --long=27 and xz -9 on `text`.
fn text_peers(name: &str, text: &[u8]) -> Result<TextPeers, FormatError> {
    let to_err = |m: String| FormatError {
        file: name.to_string(),
        position: String::new(),
        message: m,
    };
    let gzip9 = peers::gzip9(text).map_err(to_err)?;
    let zstd19_long27 = peers::zstd19_long27(text).map_err(to_err)?;
    let xz9 = peers::xz9(text).map_err(to_err)?;
    Ok(TextPeers {
        raw: text.len() as u64,
        gzip9: gzip9.bytes,
        zstd19_long27: zstd19_long27.bytes,
        xz9: xz9.bytes,
        times: PeerTimes {
            gzip9: peer_times(&gzip9),
            zstd19_long27: peer_times(&zstd19_long27),
            xz9: peer_times(&xz9),
        },
    })
}

/// Measures one trace: `source` is what `format` reads, `text` what the peers compress.
fn compare_with(
    name: &str,
    format: &'static dyn TraceFormat,
    source: &[u8],
    text: &[u8],
    options: Options,
) -> Result<TraceRow, FormatError> {
    let events = input::events(format, source, name)?;
    let cells = Encoding::ALL
        .into_iter()
        .map(|e| match &events {
            None => Cell {
                encoding: e.name(),
                sizes: Err(format!(
                    "the paper's encodings hold allocation events; {} has none",
                    format.name()
                )),
                times: EncodingTimes::default(),
            },
            Some(events) => match measure_timed(e, events) {
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
            },
        })
        .collect();
    let textpeers = text_peers(name, text)?;
    let auto = auto_file(format, source, name, options.keep_bad_lines);
    let auto_times = match &auto {
        Some(Ok((_, times))) => *times,
        _ => Times::default(),
    };
    let generic = options
        .generic
        .then(|| generic_of(format, source, text, name, options, &auto));
    let records = match (&events, &generic) {
        (Some(events), _) => events.len() as u64,
        (None, Some(g)) if g.lines.is_none() => g.records,
        // The records of the whole trace, without the generic engine's prefix.
        _ => match &auto {
            Some(Ok((file, _))) => record_text::count(file, name)?,
            _ => 0,
        },
    };
    Ok(TraceRow {
        trace: name.to_string(),
        format: format.name().to_string(),
        records,
        cells,
        auto: auto.map(|r| r.map(|(file, _)| file.len() as u64)),
        auto_times,
        text: textpeers,
        generic,
    })
}

/// The generic engine on the records of `source` (its first `options.generic_lines` lines
/// when `source` is the text and has more), set against the format-specific file of the same
/// input; `whole` is that file for the whole of `source`.
fn generic_of(
    format: &'static dyn TraceFormat,
    source: &[u8],
    text: &[u8],
    name: &str,
    options: Options,
    whole: &Option<Result<(Vec<u8>, Times), String>>,
) -> generic::Generic {
    let (dtd_name, dtd) = record_dtds::of_format(format.name()).unwrap_or(("", ""));
    let failed = |why: String| generic::Generic {
        dtd: dtd_name.to_string(),
        lines: None,
        records: 0,
        specific: Some(Err(why.clone())),
        plain: Err(why.clone()),
        auto: Err(why),
    };
    if dtd.is_empty() {
        return failed(format!("no record DTD for the {} format", format.name()));
    }
    let cut = match options.generic_lines {
        Some(n) if std::ptr::eq(source, text) => prefix_lines(source, n),
        _ => None,
    };
    let prefix;
    let specific = match cut {
        Some(end) => {
            prefix = auto_file(format, &source[..end], name, options.keep_bad_lines);
            &prefix
        }
        None => whole,
    };
    let file = match specific {
        Some(Ok((file, _))) => file,
        Some(Err(why)) => return failed(why.clone()),
        None => return failed(format!("the {} format has no auto encoding", format.name())),
    };
    let records_text = match record_text::of_file(file, name) {
        Ok((t, _)) => t,
        Err(e) => return failed(e.to_string()),
    };
    let (plain, auto, records) = generic::of_record_text(dtd, dtd_name, &records_text);
    generic::Generic {
        dtd: dtd_name.to_string(),
        lines: cut.map(|end| count_lines(&source[..end])),
        records,
        specific: Some(Ok(file.len() as u64)),
        plain,
        auto,
    }
}

/// The end of the first `n` lines of `text`, when it has more than `n`.
fn prefix_lines(text: &[u8], n: u64) -> Option<usize> {
    let n = usize::try_from(n).ok()?;
    let end = memchr::memchr_iter(b'\n', text).nth(n.checked_sub(1)?)? + 1;
    (end < text.len()).then_some(end)
}

fn count_lines(text: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', text).count() as u64
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
