//! malloc-bench traces: a gzip file holding one `Tracefile` protobuf message.
//!
//! The corpus files were written by GNU gzip (default level), whose deflate stream zlib does not
//! reproduce. The encoding takes the file apart with preflate ([`gzip_split`](crate::shared::archive::deflate::gzip_split)): gzip header and
//! trailer as they are, preflate's reconstruction data, and the protobuf through the model
//! ([`model`]). Encoding rebuilds the file from the parts and compares; when that fails (or the
//! input is not gzip) the bytes are stored as they are (property `deflate = original-bytes`).
//! Events and statistics decode the protobuf ([`proto`]).

mod check;
mod decode;
mod encode;
#[cfg(unix)]
pub mod mixed_parts;
pub mod model;
pub mod proto;
#[cfg(unix)]
pub mod records;

pub use check::{for_each_placed_event, read_events};

use std::io::Read;

use crate::format::{DecodeFn, DecodeRecordsFn, EncodeFn};
use crate::shared::allocation::check::BlockNames;
use crate::shared::allocation::placed::ForEachPlacedEvent;
use crate::shared::format_parts::FormatParts;

/// Format id stored in the container header.
pub const FORMAT: &str = "malloc-bench";
/// The DTD embedded in every `malloc-bench` container.
pub const DTD: &str = include_str!("../../../../dtds/malloc-bench.dtd");
/// Value of the `layout` property: section 1 lists the deflate stream's pieces
/// ([`gzip_split::encode_pieces`](crate::shared::archive::deflate::gzip_split::encode_pieces); one piece for the whole stream when preflate cannot take it
/// in pieces), so analysing and rebuilding the stream piece by piece bounds preflate's memory
/// by a piece; the model stream has run records ([`model::encode_runs`]) and is packed by
/// version 2 of the context mixer with tables of at most 2^19 slots (section
/// [`MODEL_CM2_BOUNDED`]), in parts that code and decode on separate threads when it is
/// [`mixed_parts::PARTS_FROM`] bytes or more (section [`MODEL_CM2_PARTS`]), by LZMA with a
/// dictionary of at most 4 MiB (section [`MODEL_LZMA`]) or by zstd: encoding and decoding a
/// malloc-bench trace then stay well under 100 MB (docs/FORMAT.md §6.1).
pub const LAYOUT: &str = "malloc-bench-preflate-5";
/// Sections [`HEAD`] (the gzip header bytes), [`CORRECTIONS`] (preflate's reconstruction
/// data) and [`TAIL`] (the bytes after the deflate stream: CRC-32, size, anything after) are
/// those of every taken-apart archive.
pub use crate::shared::archive::rebuilt_check::{CORRECTIONS, HEAD, TAIL};
/// Section: the model stream, compressed by the container's codec.
pub const MODEL: u8 = 3;
/// Section: the model stream as an LZMA "alone" stream (container codec none).
pub const MODEL_LZMA: u8 = 4;
/// Section: the model stream through [`context_mix::v2::compress_with_tables`](crate::shared::coding::context_mix::v2::compress_with_tables) with
/// [`context_mix::v2::BOUNDED_STREAM_TABLE_BITS`](crate::shared::coding::context_mix::v2::BOUNDED_STREAM_TABLE_BITS) (container codec none).
pub const MODEL_CM2_BOUNDED: u8 = 7;
/// Section: the model stream in parts, each through [`context_mix::v2::compress_with_tables`](crate::shared::coding::context_mix::v2::compress_with_tables)
/// with [`context_mix::v2::BOUNDED_STREAM_TABLE_BITS`](crate::shared::coding::context_mix::v2::BOUNDED_STREAM_TABLE_BITS) ([`mixed_parts`]; container codec none).
pub const MODEL_CM2_PARTS: u8 = 8;

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
        |input, output, options| encode::encode(FORMAT, DTD, input, output, options);
    const DECODE: DecodeFn =
        |input, output, options| decode::decode(FORMAT, input, output, options);
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
