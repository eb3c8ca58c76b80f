//! malloc-bench traces: a gzip file holding one `Tracefile` protobuf message.
//!
//! The corpus files were written by GNU gzip (default level), whose deflate stream zlib does not
//! reproduce. The encoding takes the file apart with preflate ([`gzip_split`](crate::shared::archive::deflate::gzip_split)): gzip header and
//! trailer as they are, preflate's reconstruction data, and the protobuf through the model
//! ([`model`]). Encoding rebuilds the file from the parts and compares; when that fails (or the
//! input is not gzip) the bytes are stored as they are (property `deflate = original-bytes`).
//! Events and statistics decode the protobuf ([`proto`]).

#[cfg(unix)]
#[cfg(unix)]
pub mod mixed_parts;
pub mod model;
pub mod proto;
#[cfg(unix)]
pub mod records;
pub mod split_store;

use std::io::Read;

use crate::format::{DecodeFn, DecodeRecordsFn, EncodeFn, FormatError};
use crate::shared::allocation::check::BlockNames;
use crate::shared::allocation::event::AllocEvent;
use crate::shared::allocation::placed::{collect_events, ForEachPlacedEvent};
use crate::shared::format_parts::FormatParts;

/// Format id stored in the container header.
pub const FORMAT: &str = "malloc-bench";
/// The DTD embedded in every `malloc-bench` container.
pub const DTD: &str = include_str!("../../../../dtds/malloc-bench.dtd");

/// Calls `sink` with every event of a malloc-bench `.trace.gz` (ids become addresses id + 1).
/// The sink hears each event's record number (from 1).
pub fn for_each_placed_event(
    input: &mut dyn Read,
    name: &str,
    sink: crate::shared::allocation::placed::PlacedSink<'_>,
) -> Result<(), FormatError> {
    let mut gz = flate2::read::GzDecoder::new(std::io::BufReader::new(input));
    let mut r = std::io::BufReader::with_capacity(1 << 20, &mut gz);
    let mut record = 0u64;
    proto::for_each_line(&mut r, &mut |l| {
        record += 1;
        let place = crate::shared::allocation::placed::Place {
            at: crate::format::At::Record(record),
            site: None,
        };
        sink(place, l.event())
    })
    .map_err(|m| FormatError {
        file: name.to_string(),
        position: String::new(),
        message: format!("in the uncompressed protobuf: {m}"),
    })
}

/// Every event of a malloc-bench `.trace.gz` (see [`for_each_placed_event`]).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    collect_events(for_each_placed_event, input, name)
}

/// The `malloc-bench` format.
pub struct MallocBench;

impl FormatParts for MallocBench {
    const NAME: &'static str = FORMAT;
    const DESCRIPTION: &'static str =
        "malloc-bench .trace.gz (gzip of a Tracefile protobuf; deflate rebuilt exactly with preflate)";
    const BLOCK_NAMES: BlockNames = BlockNames::Id;
    const DETECT: fn(&[u8]) -> bool = detect;
    const PLACED_EVENTS: Option<ForEachPlacedEvent> = Some(for_each_placed_event);
    const ENCODE: EncodeFn =
        |input, output, options| split_store::encode(FORMAT, DTD, input, output, options);
    const DECODE: DecodeFn =
        |input, output, options| split_store::decode(FORMAT, input, output, options);
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(|input, output, options, range, _note| {
        records::decode_records(FORMAT, input, output, options, range.start, range.end)
    });
}

/// True when `head` is gzip (deflate) whose uncompressed start is field 1 of the protobuf (a
/// `TraceLine`).
fn detect(head: &[u8]) -> bool {
    if !head.starts_with(&[0x1f, 0x8b, 8]) {
        return false;
    }
    let mut first = [0u8; 1];
    let mut gz = flate2::read::GzDecoder::new(head);
    matches!(gz.read(&mut first), Ok(1) if first[0] == 0x0a)
}
