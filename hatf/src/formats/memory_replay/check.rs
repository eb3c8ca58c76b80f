//! Checks and statistics of a `memory_replay` dump: the dump as allocation events, which
//! [`crate::shared::allocation`]'s checks and counts read (and the paper's encodings too).

use std::io::Read;

use super::line::{self, Action};
use crate::format::{At, FormatError};
use crate::shared::allocation::event::{AllocEvent, AllocKind};
use crate::shared::allocation::placed::{collect_events, Place, PlacedSink};
use crate::shared::text::line_reader::for_each_line;
use crate::shared::text::lines::bad_line;

/// Calls `sink` with the event of every line, in order. Each thread id's first line gives no
/// `CreateThread` (the dump has none); `thread_done` gives `DestroyThread`.
/// The sink hears each event's line.
pub fn for_each_placed_event(
    input: &mut dyn Read,
    name: &str,
    sink: PlacedSink<'_>,
) -> Result<(), FormatError> {
    for_each_line(input, name, |line_no, text| {
        let l =
            line::parse(text).map_err(|e| bad_line(name, line_no, e.column, &e.message, text))?;
        let kind = match l.action {
            Action::Malloc => AllocKind::Malloc,
            Action::Calloc => AllocKind::Calloc,
            Action::Memalign => AllocKind::Memalign,
            Action::Realloc => AllocKind::Realloc,
            Action::Free => AllocKind::Free,
            Action::ThreadDone => AllocKind::DestroyThread,
        };
        let mut e = AllocEvent::new(kind);
        e.thread = l.tid;
        e.address = l.ptr;
        match l.action {
            Action::Malloc => e.size = l.a,
            Action::Calloc => {
                e.extra = l.a;
                e.size = l.a.saturating_mul(l.b);
            }
            Action::Memalign => {
                e.extra = l.a;
                e.size = l.b;
            }
            Action::Realloc => {
                e.old_address = l.a;
                e.size = l.b;
            }
            Action::Free | Action::ThreadDone => {}
        }
        let place = Place {
            at: At::Line(line_no),
            site: None,
        };
        sink(place, e);
        Ok(())
    })
}

/// Every allocation event of a `memory_replay` dump (see [`for_each_placed_event`]).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    collect_events(for_each_placed_event, input, name)
}
