//! glibc `mtrace` logs (`MALLOC_TRACE`): lossless front and back end and the `auto` encoding.

mod decode;
mod encode;
pub(crate) mod entries;
mod events;
pub mod kinds;
pub mod line;

pub use events::read_events;

use crate::alloc::model::FIRST_FORMAT_STREAM;
use crate::format::{FormatFunctions, Forwarding};

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

impl Forwarding for Mtrace {
    const FUNCTIONS: FormatFunctions = FormatFunctions {
        event_encodings: crate::alloc::hatf10_dtd::EVENT_ENCODINGS,
        decode_records: Some(|input, output, options, range, note| {
            decode::decode_records(input, output, options, range.start, range.end, note)
        }),
        stats: Some(|input, input_name| {
            crate::alloc::stats::of_events(FORMAT, events::for_each_placed_event, input, input_name)
        }),
        validate: Some(|input, input_name, report| {
            crate::alloc::check::validate(
                events::for_each_placed_event,
                crate::alloc::check::BlockNames::Address,
                input,
                input_name,
                report,
            )
        }),
        ..FormatFunctions::new(
            FORMAT,
            "glibc mtrace log (MALLOC_TRACE): `@ caller + addr size`, `- addr`, `<`/`>` realloc",
            detect,
            |input, output, options| {
                crate::alloc::hatf10_dtd::encode_text_or(
                    FORMAT,
                    events::for_each_event,
                    encode::encode,
                    input,
                    output,
                    options,
                )
            },
            decode::decode,
        )
    };
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
