//! wee_alloc's benchmark traces: `Alloc(size),` and `Free(index),` lines, where `index` counts
//! earlier `Alloc` lines from 0. Lossless front and back end and the `auto` encoding.
//!
//! The model sees allocation number n as address n + 1 (0 stays "null"); with a size class of
//! one byte per block the "next in class" guess predicts every address, so only sizes and which
//! live block each `Free` releases cost anything.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};

use metatf::container::ContainerHeader;

use crate::alloc::blocks::{self, container_error, write_error, BlockWriter};
use crate::alloc::event::{AllocEvent, AllocKind};
use crate::alloc::model::addr::Class;
use crate::alloc::model::{
    stream, Cursors, KindTable, ModelRecord, Shape, State, Streams, FIRST_FORMAT_STREAM,
};
use crate::alloc::varint::{put_u64, Cursor};
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError, TraceFormat};

/// Format id stored in the container header.
pub const FORMAT: &str = "wee-alloc";
/// The DTD embedded in every `wee-alloc` container.
pub const DTD: &str = include_str!("../../../../../dtds/wee-alloc.dtd");
const VERBATIM: u8 = FIRST_FORMAT_STREAM + 1;
const BLOCK_RECORDS: u64 = 1 << 20;

const K_VERBATIM: u8 = 2;
const K_VERBATIM_UNTERMINATED: u8 = 3;
const K_ALLOC: u8 = 4;
const K_FREE: u8 = 5;

struct Kinds;

impl KindTable for Kinds {
    fn shape(&self, kind: u8) -> Shape {
        match kind {
            K_ALLOC => Shape::Alloc,
            K_FREE => Shape::Free,
            _ => Shape::Bare,
        }
    }
    fn has_extra(&self, _kind: u8) -> bool {
        false
    }
    fn size_class(&self, _size: u64, _site: u32) -> Class {
        Class { key: 0, step: 1 }
    }
}

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
    let mut r = BufReader::new(input);
    let mut buf = Vec::new();
    let (mut line_no, mut allocs) = (0u64, 0u64);
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf).map_err(|e| FormatError {
            file: name.to_string(),
            position: format!("{}:1", line_no + 1),
            message: format!("cannot read the input: {e}"),
        })?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        match parse(text) {
            Ok(WeeLine::Alloc(size)) => {
                allocs += 1;
                sink(AllocEvent {
                    size,
                    address: allocs,
                    ..AllocEvent::new(AllocKind::Malloc)
                });
            }
            Ok(WeeLine::Free(i)) => sink(AllocEvent {
                address: i.wrapping_add(1),
                ..AllocEvent::new(AllocKind::Free)
            }),
            Err((col, m)) => {
                return Err(FormatError {
                    file: name.to_string(),
                    position: format!("{line_no}:{col}"),
                    message: format!("{m}: `{}`", String::from_utf8_lossy(text)),
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

    fn encode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        let file = options.input_name.as_str();
        let header = ContainerHeader {
            dtd: DTD.to_string(),
            format: FORMAT.to_string(),
            properties: vec![
                ("encoding".to_string(), "auto".to_string()),
                (
                    metatf::container::PROPERTY_LAYOUT.to_string(),
                    "alloc-model-1".to_string(),
                ),
            ],
        };
        let mut out = BlockWriter::new(output, &header, options)?;
        let mut state = State::new();
        let mut streams = Streams::default();
        let mut verbatim = Vec::new();
        let mut records = 0u64;
        let mut report = EncodeReport::default();
        let mut r = BufReader::with_capacity(1 << 20, input);
        let (mut buf, mut scratch) = (Vec::new(), Vec::new());
        let mut allocs = 0u64;
        loop {
            buf.clear();
            let n = r.read_until(b'\n', &mut buf).map_err(|e| FormatError {
                file: file.to_string(),
                position: format!("{}:1", report.records + 1),
                message: format!("cannot read the input: {e}"),
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
            let parsed = if terminated { Some(parse(core)) } else { None };
            let rec = match parsed {
                Some(Ok(l)) => {
                    scratch.clear();
                    render(l, &mut scratch);
                    (scratch == buf).then(|| match l {
                        WeeLine::Alloc(size) => {
                            allocs += 1;
                            ModelRecord {
                                kind: K_ALLOC,
                                size,
                                addr: allocs,
                                ..ModelRecord::default()
                            }
                        }
                        WeeLine::Free(i) => ModelRecord {
                            kind: K_FREE,
                            addr: i.wrapping_add(1),
                            ..ModelRecord::default()
                        },
                    })
                }
                Some(Err((col, m))) => {
                    if !options.keep_bad_lines {
                        return Err(FormatError {
                            file: file.to_string(),
                            position: format!("{}:{col}", report.records),
                            message: format!(
                                "{m}: `{}` (use --keep-bad-lines to store such lines verbatim)",
                                String::from_utf8_lossy(text)
                            ),
                        });
                    }
                    report.bad_lines += 1;
                    None
                }
                None => None,
            };
            let rec = rec.unwrap_or_else(|| {
                put_u64(&mut verbatim, text.len() as u64);
                verbatim.extend_from_slice(text);
                ModelRecord {
                    kind: if terminated {
                        K_VERBATIM
                    } else {
                        K_VERBATIM_UNTERMINATED
                    },
                    ..ModelRecord::default()
                }
            });
            state.encode(&Kinds, &rec, &mut streams);
            records += 1;
            if records >= BLOCK_RECORDS {
                flush(&mut out, &mut streams, &mut verbatim, &mut records)?;
            }
        }
        flush(&mut out, &mut streams, &mut verbatim, &mut records)?;
        out.finish()?;
        Ok(report)
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        let file = options.input_name.as_str();
        let mut reader = blocks::open(input, FORMAT, file)?;
        let mut out = BufWriter::new(output);
        let mut state = State::new();
        let mut text = Vec::new();
        let mut lines = 0u64;
        while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
            let at = |rec: u64, msg: String| FormatError {
                file: file.to_string(),
                position: format!("block {} record {rec}", block.index),
                message: msg,
            };
            let model: [&[u8]; stream::COUNT] =
                std::array::from_fn(|i| blocks::section(&block, i as u8));
            let mut c = Cursors::new(model);
            let mut verbatim = Cursor::new(blocks::section(&block, VERBATIM), "verbatim");
            while let Some(kind) = c.next_kind() {
                let kind = kind.map_err(|m| at(lines, m))?;
                let r = state
                    .decode(&Kinds, kind, &mut c)
                    .map_err(|m| at(lines, m))?;
                match kind {
                    K_ALLOC => render(WeeLine::Alloc(r.size), &mut text),
                    K_FREE => render(WeeLine::Free(r.addr.wrapping_sub(1)), &mut text),
                    K_VERBATIM | K_VERBATIM_UNTERMINATED => {
                        let n = verbatim.u64().map_err(|m| at(lines, m))?;
                        let n = usize::try_from(n)
                            .map_err(|_| at(lines, "verbatim line too long".into()))?;
                        text.extend_from_slice(verbatim.take(n).map_err(|m| at(lines, m))?);
                        if kind == K_VERBATIM {
                            text.push(b'\n');
                        }
                    }
                    k => return Err(at(lines, format!("unknown record kind {k}"))),
                }
                lines += 1;
                if text.len() >= 1 << 20 {
                    out.write_all(&text).map_err(|e| write_error(file, e))?;
                    text.clear();
                }
            }
        }
        out.write_all(&text).map_err(|e| write_error(file, e))?;
        out.flush().map_err(|e| write_error(file, e))?;
        Ok(lines)
    }

    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<crate::format::StatsReport, FormatError>> {
        let mut s = crate::alloc::stats::AllocStats::default();
        Some(for_each_event(input, input_name, &mut |e| s.add(&e)).map(|()| s.report(FORMAT)))
    }
}

fn flush<W: Write>(
    out: &mut BlockWriter<W>,
    streams: &mut Streams,
    verbatim: &mut Vec<u8>,
    records: &mut u64,
) -> Result<(), FormatError> {
    if *records == 0 {
        return Ok(());
    }
    let mut s: Vec<(u8, &[u8])> = streams
        .bytes
        .iter()
        .enumerate()
        .map(|(i, b)| (i as u8, b.as_slice()))
        .collect();
    s.push((VERBATIM, verbatim));
    out.block(*records, &s)?;
    streams.clear();
    verbatim.clear();
    *records = 0;
    Ok(())
}
