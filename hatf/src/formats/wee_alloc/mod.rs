//! wee_alloc's benchmark traces: `Alloc(size),` and `Free(index),` lines, where `index` counts
//! earlier `Alloc` lines from 0. Lossless front and back end and the `auto` encoding.
//!
//! The encoding (layout [`LAYOUT`]) turns each line into one record byte in most cases
//! ([`records`]: a size as its move-to-front position, a free as the rank of the live
//! allocation it releases) and compresses each block's record stream with the context mixer
//! ([`crate::shared::coding::context_mix::v2`]), or short blocks with a structured bit coding
//! ([`structured`]).

mod decode;
mod encode;
pub mod records;
pub mod structured;

use std::io::{BufReader, Read, Write};

use crate::format::{DecodeFn, DecodeRecordsFn, EncodeFn, FormatError};
use crate::shared::allocation::check::BlockNames;
use crate::shared::allocation::event::{AllocEvent, AllocKind};
use crate::shared::allocation::placed::{collect_events, ForEachPlacedEvent};
use crate::shared::format_parts::FormatParts;
use crate::shared::text::lines::{echo, is_line_too_long, line_too_long, read_line_bounded};

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
/// The sink hears each event's line.
pub fn for_each_placed_event(
    input: &mut dyn Read,
    name: &str,
    sink: crate::shared::allocation::placed::PlacedSink<'_>,
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
        let place = crate::shared::allocation::placed::Place {
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

/// Every event of a wee_alloc trace (see [`for_each_placed_event`]).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    collect_events(for_each_placed_event, input, name)
}

/// The `wee-alloc` format.
pub struct WeeAlloc;

impl FormatParts for WeeAlloc {
    const NAME: &'static str = FORMAT;
    const DESCRIPTION: &'static str =
        "wee_alloc benchmark trace: `Alloc(size),` / `Free(index),` lines";
    const BLOCK_NAMES: BlockNames = BlockNames::Index;
    const DETECT: fn(&[u8]) -> bool =
        |head| head.starts_with(b"Alloc(") || head.starts_with(b"Free(");
    const PLACED_EVENTS: Option<ForEachPlacedEvent> = Some(for_each_placed_event);
    const ENCODE: EncodeFn = encode::encode;
    const DECODE: DecodeFn = decode::decode;
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(decode::decode_records);
}
