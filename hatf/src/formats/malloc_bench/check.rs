//! Checks and statistics of a malloc-bench `.trace.gz`: the trace as allocation events, which
//! [`crate::shared::allocation`]'s checks and counts read (and the paper's encodings too).

use std::io::Read;

use super::proto;
use crate::format::FormatError;
use crate::shared::allocation::event::AllocEvent;
use crate::shared::allocation::placed::collect_events;

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
