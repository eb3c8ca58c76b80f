//! glibc `mtrace` logs (`MALLOC_TRACE`): lossless front and back end and the `auto` encoding.

mod check;
mod decode;
mod encode;
pub mod line;
pub mod model;
pub(crate) mod records;

pub use check::read_events;

use crate::format::{DecodeFn, DecodeRecordsFn, EncodeFn};
use crate::shared::allocation::check::BlockNames;
use crate::shared::allocation::placed::ForEachPlacedEvent;
use crate::shared::allocation_model::FIRST_FORMAT_STREAM;
use crate::shared::format_parts::FormatParts;
use crate::shared::text::sink;

/// Format id stored in the container header.
pub const FORMAT: &str = "mtrace";
/// The DTD embedded in every `mtrace` container.
pub const DTD: &str = include_str!("../../../../dtds/mtrace.dtd");
/// Stream of call-site strings, in order of first use.
pub const STRINGS: u8 = FIRST_FORMAT_STREAM;
/// Stream of lines stored verbatim.
pub const VERBATIM: u8 = FIRST_FORMAT_STREAM + 1;

/// The `mtrace` format.
pub struct Mtrace;

impl FormatParts for Mtrace {
    const NAME: &'static str = FORMAT;
    const DESCRIPTION: &'static str =
        "glibc mtrace log (MALLOC_TRACE): `@ caller + addr size`, `- addr`, `<`/`>` realloc";
    const BLOCK_NAMES: BlockNames = BlockNames::Address;
    const DETECT: fn(&[u8]) -> bool = detect;
    const PLACED_EVENTS: Option<ForEachPlacedEvent> = Some(check::for_each_placed_event);
    const ENCODE: EncodeFn = encode::encode;
    const DECODE: DecodeFn = sink::decode::<decode::Printer>;
    const DECODE_RECORDS: Option<DecodeRecordsFn> = Some(sink::decode_range::<decode::Printer>);
}

/// True when `head` starts with `= Start` or its first few lines all parse.
fn detect(head: &[u8]) -> bool {
    if head.starts_with(b"= Start\n") {
        return true;
    }
    let mut n = 0;
    for l in head.split(|&b| b == b'\n').take(8) {
        if l.is_empty() {
            continue;
        }
        match line::parse(l) {
            Ok(line::Line::Op(_)) => n += 1,
            _ => return false,
        }
    }
    n >= 2
}
