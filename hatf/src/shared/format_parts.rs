//! The one implementation of [`TraceFormat`]: a format says what it has, as the functions that
//! do each job ([`FormatParts`]), and the trait's methods are written once over them.
//!
//! A format whose trace reads as allocation events gives its event reader
//! ([`FormatParts::PLACED_EVENTS`]) and gets from it the event encodings (`hatf10-dtd`),
//! `stats` and `validate`; another format gives its own `stats` and `validate`, or none.

use std::io::{Read, Write};
use std::ops::Range;

use crate::format::{
    DecodeFn, DecodeOptions, DecodeRecordsFn, EncodeFn, EncodeOptions, EncodeReport, FormatError,
    ProblemSink, StatsReport, ThreadLister, ThreadListerFn, TraceFormat,
};
use crate::formats::hatf10_dtd;
use crate::shared::allocation::check::BlockNames;
use crate::shared::allocation::placed::ForEachPlacedEvent;

/// Computes the statistics of a text trace, naming what the top tables count through the
/// name files (file name, bytes) where the format has such files (see
/// [`TraceFormat::stats_named`]).
pub type StatsFn =
    fn(&mut dyn Read, &str, &[(String, Vec<u8>)]) -> Result<StatsReport, FormatError>;
/// Checks a text trace, handing each problem found to the sink (see [`TraceFormat::validate`]).
pub type ValidateFn = fn(&mut dyn Read, &str, ProblemSink<'_>) -> Result<(), FormatError>;
/// The name files a binary file stores in its first block (see [`TraceFormat::stored_names`]).
pub type StoredNamesFn = fn(&metatf::container::Block) -> Result<Vec<(String, Vec<u8>)>, String>;

/// A trace format as the jobs it does. Every format is a [`TraceFormat`] through it.
pub trait FormatParts: Sync {
    /// [`TraceFormat::name`].
    const NAME: &'static str;
    /// [`TraceFormat::description`].
    const DESCRIPTION: &'static str;
    /// [`TraceFormat::detect`].
    const DETECT: fn(&[u8]) -> bool;
    /// The format's own lossless encoding (`auto`).
    const ENCODE: EncodeFn;
    /// [`TraceFormat::decode`].
    const DECODE: DecodeFn;
    /// [`TraceFormat::decode_records`]; none unless the format decodes record ranges.
    const DECODE_RECORDS: Option<DecodeRecordsFn> = None;
    /// [`TraceFormat::thread_lister`]; none unless the format lists threads.
    const THREAD_LISTER: Option<ThreadListerFn> = None;
    /// For a trace of allocation events: calls a sink with every event and where it stands
    /// (line or record), which gives the format the event encodings, `stats` and `validate`.
    const PLACED_EVENTS: Option<ForEachPlacedEvent> = None;
    /// How `validate` names an allocated block in its messages (with [`Self::PLACED_EVENTS`]).
    const BLOCK_NAMES: BlockNames = BlockNames::Address;
    /// The format's own statistics, where it does not read as allocation events.
    const STATS: Option<StatsFn> = None;
    /// The format's own checks, where it does not read as allocation events.
    const VALIDATE: Option<ValidateFn> = None;
    /// [`TraceFormat::stored_names`]; none for a format that stores no name files.
    const STORED_NAMES: Option<StoredNamesFn> = None;
}

impl<T: FormatParts> TraceFormat for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }

    fn event_encodings(&self) -> &'static [&'static str] {
        match T::PLACED_EVENTS {
            Some(_) => hatf10_dtd::EVENT_ENCODINGS,
            None => &[],
        }
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
        match T::PLACED_EVENTS {
            Some(events) if options.encoding == hatf10_dtd::NAME => {
                hatf10_dtd::encode_text(T::NAME, events, input, output, options)
            }
            _ => (T::ENCODE)(input, output, options),
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
        Some((T::DECODE_RECORDS?)(input, output, options, range, note))
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
        self.stats_named(input, input_name, &[])
    }

    fn stats_named(
        &self,
        input: &mut dyn Read,
        input_name: &str,
        name_files: &[(String, Vec<u8>)],
    ) -> Option<Result<StatsReport, FormatError>> {
        if let Some(stats) = T::STATS {
            return Some(stats(input, input_name, name_files));
        }
        Some(crate::shared::allocation::stats::of_events(
            T::NAME,
            T::PLACED_EVENTS?,
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
        if let Some(validate) = T::VALIDATE {
            return Some(validate(input, input_name, report));
        }
        Some(crate::shared::allocation::check::validate(
            T::PLACED_EVENTS?,
            T::BLOCK_NAMES,
            input,
            input_name,
            report,
        ))
    }

    fn stored_names(
        &self,
        first_block: &metatf::container::Block,
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        T::STORED_NAMES.map_or(Ok(Vec::new()), |stored| stored(first_block))
    }
}
