//! glibc `mtrace` logs (`MALLOC_TRACE`): lossless front and back end and the `auto` encoding.

mod decode;
mod encode;
mod events;
pub mod kinds;
pub mod line;

use std::io::{Read, Write};

pub use events::read_events;

use crate::alloc::model::FIRST_FORMAT_STREAM;
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError, TraceFormat};

/// Format id stored in the container header.
pub const FORMAT: &str = "mtrace";
/// The DTD embedded in every `mtrace` container.
pub const DTD: &str = include_str!("../../../../../dtds/mtrace.dtd");
/// Stream of call-site strings, in order of first use.
pub const STRINGS: u8 = FIRST_FORMAT_STREAM;
/// Stream of lines stored verbatim.
pub const VERBATIM: u8 = FIRST_FORMAT_STREAM + 1;

/// The `mtrace` format.
pub struct Mtrace;

impl TraceFormat for Mtrace {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn description(&self) -> &'static str {
        "glibc mtrace log (MALLOC_TRACE): `@ caller + addr size`, `- addr`, `<`/`>` realloc"
    }

    fn detect(&self, head: &[u8]) -> bool {
        if head.starts_with(b"= Start\n") {
            return true;
        }
        // Without the marker, accept when the first few lines all parse.
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

    fn event_encodings(&self) -> &'static [&'static str] {
        crate::alloc::hatf10_dtd::EVENT_ENCODINGS
    }

    fn encode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        if options.encoding == crate::alloc::hatf10_dtd::NAME {
            return crate::alloc::hatf10_dtd::encode_text(
                FORMAT,
                events::for_each_event,
                input,
                output,
                options,
            );
        }
        encode::encode(input, output, options)
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
        Some(decode::decode_records(
            input,
            output,
            options,
            range.start,
            range.end,
            note,
        ))
    }
    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<crate::format::StatsReport, FormatError>> {
        let mut s = crate::alloc::stats::AllocStats::default();
        Some(
            events::for_each_event(input, input_name, &mut |e| s.add(&e))
                .map(|()| s.report(self.name())),
        )
    }
}
