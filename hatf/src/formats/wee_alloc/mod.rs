//! wee_alloc's benchmark traces: `Alloc(size),` and `Free(index),` lines, where `index` counts
//! earlier `Alloc` lines from 0. Lossless front and back end and the `auto` encoding.
//!
//! The encoding (layout [`LAYOUT`]) turns each line into one record byte in most cases
//! ([`records`]: a size as its move-to-front position, a free as the rank of the live
//! allocation it releases) and compresses each block's record stream with the context mixer
//! ([`crate::shared::coding::context_mix::v2`]), or short blocks with a structured bit coding
//! ([`structured`]).

mod check;
mod decode;
mod encode;
mod line;
pub mod model;
mod records;
pub mod structured;

pub use check::{for_each_placed_event, read_events};
pub use line::{parse, WeeLine};

use crate::format::{DecodeFn, DecodeRecordsFn, EncodeFn};
use crate::shared::allocation::check::BlockNames;
use crate::shared::allocation::placed::ForEachPlacedEvent;
use crate::shared::format_parts::FormatParts;

/// Format id stored in the container header.
pub const FORMAT: &str = "wee-alloc";
/// The DTD embedded in every `wee-alloc` container.
pub const DTD: &str = include_str!("../../../../dtds/wee-alloc.dtd");
const BLOCK_RECORDS: u64 = 1 << 20;
/// Value of the `layout` property of this encoding; every block starts a fresh model and holds
/// either its record stream through version 2 of the context mixer ([`context_mix::v2`],
/// section [`MIXED`]) or the structured bit coding of its records ([`structured`], section
/// [`STRUCTURED`]), whichever is smaller.
pub const LAYOUT: &str = "wee-alloc-cm-4";
/// Largest context-mixer table (log2 slots per context) of the [`MIXED`] section: ten tables of
/// 2^19 four-byte slots take 20 MiB, where 2^21 would take 80 MiB and, beside a block's record
/// stream, more than the 100 MB an encoder may hold; the smaller tables cost little size.
const TABLE_BITS: u32 = crate::shared::coding::context_mix::v2::BOUNDED_STREAM_TABLE_BITS;
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
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(records::decode_records);
}
