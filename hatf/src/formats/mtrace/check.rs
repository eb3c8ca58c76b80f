//! Checks and statistics of an `mtrace` log: the log as allocation events, which
//! [`crate::shared::allocation`]'s checks and counts read (and the paper's encodings too).

use std::io::Read;

use super::line::{self, Line, Op};
use crate::format::{At, FormatError};
use crate::shared::allocation::event::{AllocEvent, AllocKind};
use crate::shared::allocation::placed::{collect_events, Place, PlacedSink};
use crate::shared::text::line_reader::for_each_line;
use crate::shared::text::lines::bad_line;

/// Calls `sink` with every allocation event of an `mtrace` log, in order. A `<` line followed
/// by its `>` line is one `Realloc`; a lone `<` is a `Free` and a lone `>` a `Malloc`. Marker
/// lines (`= Start`) give no event; lines that do not parse are an error.
/// The sink hears each event's line (a realloc's is its `<` line) and caller.
pub fn for_each_placed_event(
    input: &mut dyn Read,
    name: &str,
    sink: PlacedSink<'_>,
) -> Result<(), FormatError> {
    // The old address and line of a `<` line waiting for its `>`.
    let mut pending_old: Option<(u64, u64)> = None;
    for_each_line(input, name, |line_no, text| {
        let parsed =
            line::parse(text).map_err(|e| bad_line(name, line_no, e.column, &e.message, text))?;
        let Line::Op(op) = parsed else { return Ok(()) };
        let here = Place {
            at: At::Line(line_no),
            site: op.caller,
        };
        if let Some((old, old_line)) = pending_old.take() {
            let mut e = AllocEvent::new(AllocKind::Realloc);
            e.old_address = old;
            let at = At::Line(old_line);
            if op.op == Op::ReallocNew {
                e.address = op.addr;
                e.size = op.size;
                sink(Place { at, ..here }, e);
                return Ok(());
            }
            e.kind = AllocKind::Free;
            e.address = old;
            e.old_address = 0;
            sink(Place { at, site: None }, e);
        }
        match op.op {
            Op::ReallocOld => pending_old = Some((op.addr, line_no)),
            Op::Free => {
                let mut e = AllocEvent::new(AllocKind::Free);
                e.address = op.addr;
                sink(here, e);
            }
            Op::Malloc | Op::ReallocNew => {
                let mut e = AllocEvent::new(AllocKind::Malloc);
                e.address = op.addr;
                e.size = op.size;
                sink(here, e);
            }
        }
        Ok(())
    })?;
    if let Some((old, old_line)) = pending_old {
        let mut e = AllocEvent::new(AllocKind::Free);
        e.address = old;
        sink(
            Place {
                at: At::Line(old_line),
                site: None,
            },
            e,
        );
    }
    Ok(())
}

/// Every allocation event of an `mtrace` log (see [`for_each_placed_event`] for the mapping).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    collect_events(for_each_placed_event, input, name)
}
