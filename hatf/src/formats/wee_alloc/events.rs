//! wee_alloc trace → allocation events, for the paper's encodings and for statistics.

use std::io::{BufReader, Read};

use super::line::{parse, WeeLine};
use crate::format::FormatError;
use crate::shared::allocation::event::{AllocEvent, AllocKind};
use crate::shared::allocation::placed::collect_events;
use crate::shared::text::lines::{echo, is_line_too_long, line_too_long, read_line_bounded};

/// Calls `sink` with each event: allocation n has address n + 1 (its `Free(n)` frees it).
/// The sink hears each event's line.
pub fn for_each_placed_event(
    input: &mut dyn Read,
    name: &str,
    sink: crate::shared::allocation::placed::PlacedSink<'_>,
) -> Result<(), FormatError> {
    let mut r = BufReader::new(input);
    let mut buf = Vec::new();
    let (mut line_no, mut allocs) = (0u64, 0u64);
    loop {
        buf.clear();
        let n = read_line_bounded(&mut r, &mut buf).map_err(|e| {
            if is_line_too_long(&e) {
                return line_too_long(name, line_no + 1);
            }
            FormatError {
                file: name.to_string(),
                position: format!("{}:1", line_no + 1),
                message: format!("cannot read the input: {e}"),
            }
        })?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
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
            Err((col, m)) => {
                return Err(FormatError {
                    file: name.to_string(),
                    position: format!("{line_no}:{col}"),
                    message: format!("{m}: `{}`", echo(text)),
                })
            }
        }
    }
}

/// Every event of a wee_alloc trace (see [`for_each_placed_event`]).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    collect_events(for_each_placed_event, input, name)
}
