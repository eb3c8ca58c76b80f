//! Allocation events with where they stand in their trace: what `validate` needs to name the
//! line of a problem, and what `stats` needs to count call sites.

use std::io::Read;

use crate::format::{At, FormatError};
use crate::shared::allocation::event::AllocEvent;

/// Where one event stands in its trace.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The line (or, for a binary trace, the record) the event is read from.
    pub at: At,
    /// The call site the trace names for the event, in the trace's own spelling; `None` when
    /// the format records no call sites.
    pub site: Option<&'a [u8]>,
}

/// Hears each event with its place.
pub type PlacedSink<'s> = &'s mut dyn FnMut(Place<'_>, AllocEvent);

/// Reads the events of a trace with their places (each allocation format has one).
pub type ForEachPlacedEvent = fn(&mut dyn Read, &str, PlacedSink<'_>) -> Result<(), FormatError>;

/// Every event `read` gives for `input`, in order, without their places.
pub fn collect_events(
    read: ForEachPlacedEvent,
    input: &mut dyn Read,
    name: &str,
) -> Result<Vec<AllocEvent>, FormatError> {
    let mut events = Vec::new();
    read(input, name, &mut |_, e| events.push(e))?;
    Ok(events)
}
