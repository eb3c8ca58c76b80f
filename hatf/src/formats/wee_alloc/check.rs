//! Checks and statistics of a wee_alloc trace: the trace as allocation events, which
//! [`crate::shared::allocation`]'s checks and counts read (and the paper's encodings too).

use std::io::Read;

use super::line::{parse, WeeLine};
use crate::format::FormatError;
use crate::shared::allocation::event::{AllocEvent, AllocKind};
use crate::shared::allocation::placed::collect_events;
use crate::shared::text::line_reader::for_each_line;
use crate::shared::text::lines::bad_line;

/// Calls `sink` with each event: allocation n has address n + 1 (its `Free(n)` frees it).
/// The sink hears each event's line.
pub fn for_each_placed_event(
    input: &mut dyn Read,
    name: &str,
    sink: crate::shared::allocation::placed::PlacedSink<'_>,
) -> Result<(), FormatError> {
    let mut allocs = 0u64;
    for_each_line(input, name, |line_no, text| {
        let place = crate::shared::allocation::placed::Place {
            at: crate::format::At::Line(line_no),
            site: None,
        };
        match parse(text) {
            Ok(WeeLine::Alloc(size)) => {
                allocs += 1;
                sink(
                    place,
                    AllocEvent {
                        size,
                        address: allocs,
                        ..AllocEvent::new(AllocKind::Malloc)
                    },
                );
            }
            Ok(WeeLine::Free(i)) => sink(
                place,
                AllocEvent {
                    address: i.wrapping_add(1),
                    ..AllocEvent::new(AllocKind::Free)
                },
            ),
            Err((col, m)) => return Err(bad_line(name, line_no, col, &m, text)),
        }
        Ok(())
    })
}

/// Every event of a wee_alloc trace (see [`for_each_placed_event`]).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    collect_events(for_each_placed_event, input, name)
}
