//! `memory_replay` dump → allocation events.

use std::io::{BufRead, BufReader, Read};

use super::line::{self, Action};
use crate::alloc::event::{AllocEvent, AllocKind};
use crate::format::FormatError;

/// Calls `sink` with the event of every line, in order. Each thread id's first line gives no
/// `CreateThread` (the dump has none); `thread_done` gives `DestroyThread`.
pub fn for_each_event(
    input: &mut dyn Read,
    name: &str,
    sink: &mut dyn FnMut(AllocEvent),
) -> Result<(), FormatError> {
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut buf = Vec::new();
    let mut line_no = 0u64;
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
        let l = line::parse(text).map_err(|e| FormatError {
            file: name.to_string(),
            position: format!("{line_no}:{}", e.column),
            message: format!("{}: `{}`", e.message, String::from_utf8_lossy(text)),
        })?;
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
        sink(e);
    }
    Ok(())
}

/// Every allocation event of a `memory_replay` dump (see [`for_each_event`]).
pub fn read_events(input: &mut dyn Read, name: &str) -> Result<Vec<AllocEvent>, FormatError> {
    let mut v = Vec::new();
    for_each_event(input, name, &mut |e| v.push(e))?;
    Ok(v)
}
