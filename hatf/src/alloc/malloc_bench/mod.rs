//! malloc-bench traces: a gzip file holding one `Tracefile` protobuf message.
//!
//! The corpus files were written by GNU gzip (default level), whose deflate stream zlib does not
//! reproduce. The encoding takes the file apart with preflate ([`gzip_split`]): gzip header and
//! trailer as they are, preflate's reconstruction data, and the protobuf through the model
//! ([`model`]). Encoding rebuilds the file from the parts and compares; when that fails (or the
//! input is not gzip) the bytes are stored as they are (property `deflate = original-bytes`).
//! Events and statistics decode the protobuf ([`proto`]).

#[cfg(unix)]
pub mod analysis_process;
#[cfg(unix)]
pub mod bounded_child;
pub mod gzip_split;
pub mod mixed_parts;
pub mod model;
pub mod piece_stream;
pub mod preflate_guard;
pub mod proto;
#[cfg(unix)]
pub mod rebuild_process;
pub mod records;
pub mod split_store;

use std::io::{Read, Write};

use crate::alloc::event::AllocEvent;
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError, TraceFormat};

/// Format id stored in the container header.
pub const FORMAT: &str = "malloc-bench";
/// The DTD embedded in every `malloc-bench` container.
pub const DTD: &str = include_str!("../../../../dtds/malloc-bench.dtd");

/// Calls `sink` with every event of a malloc-bench `.trace.gz` (ids become addresses id + 1).
pub fn for_each_event(
    input: &mut dyn Read,
    name: &str,
    sink: &mut dyn FnMut(AllocEvent),
) -> Result<(), FormatError> {
    for_each_placed_event(input, name, &mut |_, e| sink(e))
}

/// [`for_each_event`], with each event's record number (from 1).
pub fn for_each_placed_event(
    input: &mut dyn Read,
    name: &str,
    sink: crate::alloc::placed::PlacedSink<'_>,
) -> Result<(), FormatError> {
    let mut gz = flate2::read::GzDecoder::new(std::io::BufReader::new(input));
    let mut r = std::io::BufReader::with_capacity(1 << 20, &mut gz);
    let mut record = 0u64;
    proto::for_each_line(&mut r, &mut |l| {
        record += 1;
        let place = crate::alloc::placed::Place {
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

/// Every event of a malloc-bench `.trace.gz` (see [`for_each_event`]).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    let mut v = Vec::new();
    for_each_event(input, name, &mut |e| v.push(e))?;
    Ok(v)
}

/// The `malloc-bench` format.
pub struct MallocBench;

impl TraceFormat for MallocBench {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn description(&self) -> &'static str {
        "malloc-bench .trace.gz (gzip of a Tracefile protobuf; deflate rebuilt exactly with preflate)"
    }

    fn detect(&self, head: &[u8]) -> bool {
        // gzip magic, deflate, and an uncompressed start that is field 1 (a TraceLine).
        if !head.starts_with(&[0x1f, 0x8b, 8]) {
            return false;
        }
        let mut first = [0u8; 1];
        let mut gz = flate2::read::GzDecoder::new(head);
        matches!(gz.read(&mut first), Ok(1) if first[0] == 0x0a)
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
        split_store::encode(FORMAT, DTD, input, output, options)
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        split_store::decode(FORMAT, input, output, options)
    }

    fn decode_records(
        &self,
        input: &mut dyn crate::seek::ReadSeek,
        output: &mut dyn Write,
        options: &DecodeOptions,
        range: std::ops::Range<u64>,
        _note: crate::seek::Note<'_>,
    ) -> Option<Result<u64, FormatError>> {
        Some(records::decode_records(
            FORMAT,
            input,
            output,
            options,
            range.start,
            range.end,
        ))
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
            crate::alloc::check::BlockNames::Id,
            input,
            input_name,
            report,
        ))
    }
}
