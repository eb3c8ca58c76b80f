//! What the allocation trace formats (mtrace, memory_replay, wee_alloc, malloc-bench) have in
//! common as [`TraceFormat`]s: each reads its trace as allocation events, so the event
//! encodings (`hatf10-dtd`), `stats` and `validate` are written once, here, over the format's
//! event readers; a format gives only what is its own.

use std::io::{Read, Write};
use std::ops::Range;

use crate::format::{
    DecodeFn, DecodeOptions, DecodeRecordsFn, EncodeFn, EncodeOptions, EncodeReport, FormatError,
    ProblemSink, StatsReport, ThreadLister, ThreadListerFn, TraceFormat,
};
use crate::formats::hatf10_dtd;
use crate::shared::allocation::check::BlockNames;
use crate::shared::allocation::placed::ForEachPlacedEvent;

/// An allocation trace format: its own lossless encoding and decoding, and its trace read as
/// allocation events. Every such format is a [`TraceFormat`] through it.
pub trait AllocationFormat: Sync {
    /// [`TraceFormat::name`].
    const NAME: &'static str;
    /// [`TraceFormat::description`].
    const DESCRIPTION: &'static str;
    /// How `validate` names an allocated block in its messages.
    const BLOCK_NAMES: BlockNames;
    /// [`TraceFormat::detect`].
    const DETECT: fn(&[u8]) -> bool;
    /// Calls a sink with every event of the trace and where it stands (line or record).
    const PLACED_EVENTS: ForEachPlacedEvent;
    /// The format's own lossless encoding (`auto`).
    const ENCODE: EncodeFn;
    /// [`TraceFormat::decode`].
    const DECODE: DecodeFn;
    /// [`TraceFormat::decode_records`], which every allocation format has.
    const DECODE_RECORDS: DecodeRecordsFn;
    /// [`TraceFormat::thread_lister`]; none unless the format lists threads.
    const THREAD_LISTER: Option<ThreadListerFn> = None;
}

impl<T: AllocationFormat> TraceFormat for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }

    fn event_encodings(&self) -> &'static [&'static str] {
        hatf10_dtd::EVENT_ENCODINGS
    }

    fn detect(&self, head: &[u8]) -> bool {
        (T::DETECT)(head)
    }

    fn encode(
        &self,
        input: &mut (dyn Read + Send),
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError> {
        if options.encoding == hatf10_dtd::NAME {
            hatf10_dtd::encode_text(T::NAME, T::PLACED_EVENTS, input, output, options)
        } else {
            (T::ENCODE)(input, output, options)
        }
    }

    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError> {
        (T::DECODE)(input, output, options)
    }

    fn decode_records(
        &self,
        input: &mut dyn crate::seek::ReadSeek,
        output: &mut dyn Write,
        options: &DecodeOptions,
        range: Range<u64>,
        note: crate::seek::Note<'_>,
    ) -> Option<Result<u64, FormatError>> {
        Some((T::DECODE_RECORDS)(input, output, options, range, note))
    }

    fn thread_lister(
        &self,
        header: &metatf::container::ContainerHeader,
        file: &str,
    ) -> Option<ThreadLister> {
        (T::THREAD_LISTER?)(header, file)
    }

    fn stats(
        &self,
        input: &mut dyn Read,
        input_name: &str,
    ) -> Option<Result<StatsReport, FormatError>> {
        Some(crate::shared::allocation::stats::of_events(
            T::NAME,
            T::PLACED_EVENTS,
            input,
            input_name,
        ))
    }

    fn validate(
        &self,
        input: &mut dyn Read,
        input_name: &str,
        report: ProblemSink<'_>,
    ) -> Option<Result<(), FormatError>> {
        Some(crate::shared::allocation::check::validate(
            T::PLACED_EVENTS,
            T::BLOCK_NAMES,
            input,
            input_name,
            report,
        ))
    }
}
