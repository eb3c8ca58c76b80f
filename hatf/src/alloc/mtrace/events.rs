//! `mtrace` log → allocation events, for the paper's encodings and for statistics.

use std::io::Read;

use super::line::{self, Line, Op};
use crate::alloc::event::{AllocEvent, AllocKind};
use crate::alloc::text_lines::{bad_line, for_each_line};
use crate::format::FormatError;

/// Calls `sink` with every allocation event of an `mtrace` log, in order. A `<` line followed
/// by its `>` line is one `Realloc`; a lone `<` is a `Free` and a lone `>` a `Malloc`. Marker
/// lines (`= Start`) give no event; lines that do not parse are an error.
pub fn for_each_event(
    input: &mut dyn Read,
    name: &str,
    sink: &mut dyn FnMut(AllocEvent),
) -> Result<(), FormatError> {
    let mut pending_old: Option<u64> = None;
    for_each_line(input, name, |line_no, text| {
        let parsed =
            line::parse(text).map_err(|e| bad_line(name, line_no, e.column, &e.message, text))?;
        let Line::Op(op) = parsed else { return Ok(()) };
        if let Some(old) = pending_old.take() {
            if op.op == Op::ReallocNew {
                let mut e = AllocEvent::new(AllocKind::Realloc);
                e.old_address = old;
                e.address = op.addr;
                e.size = op.size;
                sink(e);
                return Ok(());
            }
            let mut e = AllocEvent::new(AllocKind::Free);
            e.address = old;
            sink(e);
        }
        match op.op {
            Op::ReallocOld => pending_old = Some(op.addr),
            Op::Free => {
                let mut e = AllocEvent::new(AllocKind::Free);
                e.address = op.addr;
                sink(e);
            }
            Op::Malloc | Op::ReallocNew => {
                let mut e = AllocEvent::new(AllocKind::Malloc);
                e.address = op.addr;
                e.size = op.size;
                sink(e);
            }
        }
        Ok(())
    })?;
    if let Some(old) = pending_old {
        let mut e = AllocEvent::new(AllocKind::Free);
        e.address = old;
        sink(e);
    }
    Ok(())
}

/// Every allocation event of an `mtrace` log (see [`for_each_event`] for the mapping).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    let mut v = Vec::new();
    for_each_event(input, name, &mut |e| v.push(e))?;
    Ok(v)
}
