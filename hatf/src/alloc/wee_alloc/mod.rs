//! wee_alloc's benchmark traces: `Alloc(size),` and `Free(index),` lines, where `index` counts
//! earlier `Alloc` lines from 0. Lossless front and back end and the `auto` encoding.
//!
//! The encoding (layout [`LAYOUT`]) turns each line into one record byte in most cases
//! ([`records`]: a size as its move-to-front position, a free as the rank of the live
//! allocation it releases) and compresses each block's record stream with the context mixer
//! ([`crate::alloc::context_mix::v2`]), or short blocks with a structured bit coding
//! ([`structured`]).

mod decode;
pub mod records;
pub mod structured;

use std::io::{BufReader, Read, Write};

use metatf::container::{ContainerHeader, PROPERTY_LAYOUT};

use crate::alloc::bit_coder::BitEncoder;
use crate::alloc::blocks::BlockWriter;
use crate::alloc::context_mix;
use crate::alloc::event::{AllocEvent, AllocKind};
use crate::alloc::text_lines::{echo, is_line_too_long, line_too_long, read_line_bounded};
use crate::format::{
    Compression, DecodeOptions, EncodeOptions, EncodeReport, FormatError, TraceFormat,
};
use records::{Record, RecordModel};
use structured::Structured;

/// Format id stored in the container header.
pub const FORMAT: &str = "wee-alloc";
/// The DTD embedded in every `wee-alloc` container.
pub const DTD: &str = include_str!("../../../../dtds/wee-alloc.dtd");
const BLOCK_RECORDS: u64 = 1 << 20;
/// Value of the `layout` property of this encoding; every block starts a fresh model and holds
/// either its record stream through version 2 of the context mixer ([`context_mix::v2`],
/// section [`MIXED`]) or the structured bit coding of its records ([`structured`], section
/// [`STRUCTURED`]), whichever is smaller.
pub const LAYOUT: &str = "wee-alloc-cm-3";
/// Section: the structured bit coding of the block's records (codec none).
/// Number 0, so that a one-block file of it has the compact container's shortest form.
const STRUCTURED: u8 = 0;
/// Section: the block's record stream through the context mixer (codec none).
const MIXED: u8 = 2;
/// Blocks whose record stream is longer than this are not tried with the structured coding:
/// it pays off on short traces only, and trying costs time.
const STRUCTURED_MAX_STREAM: usize = 64 << 10;
/// Section: the block's record stream, compressed by the container's codec.
const PLAIN: u8 = 1;

/// A parsed line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeeLine {
    /// `Alloc(size),`
    Alloc(u64),
    /// `Free(index),`
    Free(u64),
}

/// Parses a line without its `\n`; on failure, the 1-based column and message.
pub fn parse(text: &[u8]) -> Result<WeeLine, (usize, String)> {
    let (ctor, rest): (fn(u64) -> WeeLine, &[u8]) = if let Some(r) = text.strip_prefix(b"Alloc(") {
        (WeeLine::Alloc, r)
    } else if let Some(r) = text.strip_prefix(b"Free(") {
        (WeeLine::Free, r)
    } else {
        return Err((1, "expected `Alloc(` or `Free(`".to_string()));
    };
    let at = text.len() - rest.len() + 1;
    let digits = rest
        .strip_suffix(b"),")
        .ok_or_else(|| (at, "expected a number and `),`".to_string()))?;
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return Err((at, "expected a decimal number".to_string()));
    }
    let n = std::str::from_utf8(digits)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| (at, "number too large".to_string()))?;
    Ok(ctor(n))
}

fn render(l: WeeLine, out: &mut Vec<u8>) {
    let _ = match l {
        WeeLine::Alloc(n) => writeln!(out, "Alloc({n}),"),
        WeeLine::Free(n) => writeln!(out, "Free({n}),"),
    };
}

/// Calls `sink` with each event: allocation n has address n + 1 (its `Free(n)` frees it).
pub fn for_each_event(
    input: &mut dyn Read,
    name: &str,
    sink: &mut dyn FnMut(AllocEvent),
) -> Result<(), FormatError> {
    for_each_placed_event(input, name, &mut |_, e| sink(e))
}

/// [`for_each_event`], with each event's line.
pub fn for_each_placed_event(
    input: &mut dyn Read,
    name: &str,
    sink: crate::alloc::placed::PlacedSink<'_>,
) -> Result<(), FormatError> {
    let mut r = BufReader::new(input);
    let mut buf = Vec::new();
    let (mut line_no, mut allocs) = (0u64, 0u64);
    loop {
        buf.clear();
        let n = read_line_bounded(&mut r, &mut buf).map_err(|e| {
            if is_line_too_long(&e) {
                return line_too_long(name, line_no + 1);
            }
            FormatError {
                file: name.to_string(),
                position: format!("{}:1", line_no + 1),
                message: format!("cannot read the input: {e}"),
            }
        })?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let place = crate::alloc::placed::Place {
            at: crate::format::At::Line(line_no),
            site: None,
        };
        match parse(text) {
            Ok(WeeLine::Alloc(size)) => {
                allocs += 1;
                sink(
                    place,
                    AllocEvent {
                        size,
                        address: allocs,
                        ..AllocEvent::new(AllocKind::Malloc)
                    },
                );
            }
            Ok(WeeLine::Free(i)) => sink(
                place,
                AllocEvent {
                    address: i.wrapping_add(1),
                    ..AllocEvent::new(AllocKind::Free)
                },
            ),
            Err((col, m)) => {
                return Err(FormatError {
                    file: name.to_string(),
                    position: format!("{line_no}:{col}"),
                    message: format!("{m}: `{}`", echo(text)),
                })
            }
        }
    }
}

/// Every event of a wee_alloc trace (see [`for_each_event`]).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    let mut v = Vec::new();
    for_each_event(input, name, &mut |e| v.push(e))?;
    Ok(v)
}

/// The `wee-alloc` format.
pub struct WeeAlloc;

impl TraceFormat for WeeAlloc {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn description(&self) -> &'static str {
        "wee_alloc benchmark trace: `Alloc(size),` / `Free(index),` lines"
    }

    fn detect(&self, head: &[u8]) -> bool {
        head.starts_with(b"Alloc(") || head.starts_with(b"Free(")
    }

    fn event_encodings(&self) -> &'static [&'static str] {
        crate::alloc::hatf10_dtd::EVENT_ENCODINGS
    }

    fn encode(
        &self,
        input: &mut (dyn Read + Send),
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        if options.encoding == crate::alloc::hatf10_dtd::NAME {
            return crate::alloc::hatf10_dtd::encode_text(
                FORMAT,
                for_each_event,
                input,
                output,
                options,
            );
        }
        let file = options.input_name.as_str();
        let header = ContainerHeader {
            dtd: DTD.to_string(),
            format: FORMAT.to_string(),
            properties: vec![
                ("encoding".to_string(), "auto".to_string()),
                (PROPERTY_LAYOUT.to_string(), LAYOUT.to_string()),
            ],
        };
        // With the default compression the stream goes through the context mixer and is
        // stored as is; with another choice the container's codec compresses it.
        let mixed = options.compression == Compression::Zstd;
        let block_options = EncodeOptions {
            compression: if mixed {
                Compression::None
            } else {
                options.compression
            },
            ..options.clone()
        };
        let mut out = BlockWriter::new(output, &header, &block_options)?;
        if mixed {
            // A short trace is one block of one stored section: the compact container form
            // saves the index, trailer and section checksums (docs/FORMAT.md §5).
            out.prefer_compact();
        }
        let mut model = RecordModel::new();
        let mut stream = Vec::new();
        let mut structured = mixed.then(Trial::default);
        let mut records = 0u64;
        let mut report = EncodeReport::default();
        let mut r = BufReader::with_capacity(1 << 20, input);
        let (mut buf, mut scratch) = (Vec::new(), Vec::new());
        loop {
            buf.clear();
            let n = read_line_bounded(&mut r, &mut buf).map_err(|e| {
                if is_line_too_long(&e) {
                    return line_too_long(file, report.records + 1);
                }
                FormatError {
                    file: file.to_string(),
                    position: format!("{}:1", report.records + 1),
                    message: format!("cannot read the input: {e}"),
                }
            })?;
            if n == 0 {
                break;
            }
            report.records += 1;
            report.input_bytes += n as u64;
            let terminated = buf.last() == Some(&b'\n');
            let text = if terminated { &buf[..n - 1] } else { &buf[..] };
            // A `\r` is not part of the format: parse without it, the re-rendering check keeps it.
            let core = text.strip_suffix(b"\r").unwrap_or(text);
            // The last line, which may lack its `\n`, is parsed too: strict mode refuses it
            // when it does not parse, though a line without `\n` is only ever kept verbatim.
            let rec = match parse(core) {
                Ok(_) if !terminated => None,
                Ok(l) => {
                    scratch.clear();
                    render(l, &mut scratch);
                    (scratch == buf).then_some(match l {
                        WeeLine::Alloc(size) => Record::Alloc(size),
                        WeeLine::Free(i) => Record::Free(i),
                    })
                }
                Err((col, m)) => {
                    if !options.keep_bad_lines {
                        return Err(FormatError {
                            file: file.to_string(),
                            position: format!("{}:{col}", report.records),
                            message: format!(
                                "{m}: `{}` (use --keep-bad-lines to store such lines verbatim)",
                                echo(text)
                            ),
                        });
                    }
                    report.bad_lines += 1;
                    None
                }
            };
            let rec = rec.unwrap_or(Record::Verbatim(text, terminated));
            model.encode(rec, &mut stream);
            if let Some(t) = structured.as_mut() {
                t.add(rec, stream.len());
            }
            records += 1;
            if records >= BLOCK_RECORDS {
                flush(
                    &mut out,
                    &mut stream,
                    &mut records,
                    mixed,
                    structured.take(),
                )?;
                // Each block starts a fresh model: any block decodes on its own.
                model = RecordModel::new();
                structured = mixed.then(Trial::default);
            }
        }
        flush(&mut out, &mut stream, &mut records, mixed, structured)?;
        out.finish()?;
        Ok(report)
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        decode::decode(input, output, options)
    }

    fn decode_records(
        &self,
        input: &mut dyn crate::seek::ReadSeek,
        output: &mut dyn Write,
        options: &DecodeOptions,
        range: std::ops::Range<u64>,
        note: crate::seek::Note<'_>,
    ) -> Option<Result<u64, FormatError>> {
        Some(decode::decode_records(input, output, options, range, note))
    }

    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<crate::format::StatsReport, FormatError>> {
        Some(crate::alloc::stats::of_events(
            FORMAT,
            for_each_placed_event,
            input,
            input_name,
        ))
    }

    fn validate(
        &self,
        input: &mut dyn Read,
        input_name: &str,
        report: crate::format::ProblemSink<'_>,
    ) -> Option<Result<(), FormatError>> {
        Some(crate::alloc::check::validate(
            for_each_placed_event,
            crate::alloc::check::BlockNames::Index,
            input,
            input_name,
            report,
        ))
    }
}

/// The structured coding of a block, tried beside the record stream while the stream is short.
struct Trial {
    model: Structured,
    coder: BitEncoder,
    /// False once the block is too long for the structured coding to be tried.
    open: bool,
}

impl Default for Trial {
    fn default() -> Self {
        Trial {
            model: Structured::default(),
            coder: BitEncoder::default(),
            open: true,
        }
    }
}

impl Trial {
    fn add(&mut self, r: Record<'_>, stream_len: usize) {
        if self.open {
            self.open =
                stream_len <= STRUCTURED_MAX_STREAM && self.model.encode(r, &mut self.coder);
        }
    }

    /// The coded block, when every record was coded.
    fn finish(self) -> Option<Vec<u8>> {
        self.open.then(|| self.coder.finish())
    }
}

fn flush<W: Write>(
    out: &mut BlockWriter<W>,
    stream: &mut Vec<u8>,
    records: &mut u64,
    mixed: bool,
    structured: Option<Trial>,
) -> Result<(), FormatError> {
    if *records == 0 {
        return Ok(());
    }
    if mixed {
        let packed = context_mix::v2::compress(stream);
        match structured.and_then(Trial::finish) {
            Some(bits) if bits.len() <= packed.len() => {
                out.block(*records, &[(STRUCTURED, &bits)])?
            }
            _ => out.block(*records, &[(MIXED, &packed)])?,
        }
    } else {
        out.block(*records, &[(PLAIN, stream)])?;
    }
    stream.clear();
    *records = 0;
    Ok(())
}
