//! `mtrace` log → allocation events, for the paper's encodings and for statistics.

use std::io::{BufRead, BufReader, Read};

use super::line::{self, Line, Op};
use crate::alloc::event::{AllocEvent, AllocKind};
use crate::format::FormatError;

/// Calls `sink` with every allocation event of an `mtrace` log, in order. A `<` line followed
/// by its `>` line is one `Realloc`; a lone `<` is a `Free` and a lone `>` a `Malloc`. Marker
/// lines (`= Start`) give no event; lines that do not parse are an error.
pub fn for_each_event(
    input: &mut dyn Read,
    name: &str,
    sink: &mut dyn FnMut(AllocEvent),
) -> Result<(), FormatError> {
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    let mut pending_old: Option<u64> = None;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| FormatError {
                file: name.to_string(),
                position: format!("{}:1", line_no + 1),
                message: format!("cannot read the input: {e}"),
            })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let mut text = &buf[..];
        if let Some(t) = text.strip_suffix(b"\n") {
            text = t;
        }
        if let Some(t) = text.strip_suffix(b"\r") {
            text = t;
        }
        let parsed = line::parse(text).map_err(|e| FormatError {
            file: name.to_string(),
            position: format!("{line_no}:{}", e.column),
            message: format!("{}: `{}`", e.message, String::from_utf8_lossy(text)),
        })?;
        let Line::Op(op) = parsed else { continue };
        if let Some(old) = pending_old.take() {
            if op.op == Op::ReallocNew {
                let mut e = AllocEvent::new(AllocKind::Realloc);
                e.old_address = old;
                e.address = op.addr;
                e.size = op.size;
                sink(e);
                continue;
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
    }
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
