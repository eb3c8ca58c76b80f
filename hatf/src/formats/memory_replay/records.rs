//! The records of a `memory-replay` container as the model decodes them, typed, for
//! [`crate::records`]: what the decoder would print, handed over without being printed and
//! parsed back.

use std::ops::Range;

use super::decode::{next_thread, SIDE_STREAMS};
use super::line::{Action, ReplayLine};
use super::model::{self, ReplayKinds};
use super::FORMAT;
use crate::format::FormatError;
use crate::seek::{Note, ReadSeek};
use crate::shared::allocation_model::ModelRecord;
use crate::shared::container::block_cursors::{BlockCursors, SideStreams};
use crate::shared::container::entries::{self, EntryReader, EntrySink};

/// One record of a dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry<'a> {
    /// A line of an action, as it would be parsed.
    Line(ReplayLine),
    /// A line the encoder kept as text (without its `\n`); `newline` is false for a last line
    /// that has none.
    Text { line: &'a [u8], newline: bool },
}

/// Decodes records `range` of the `memory-replay` container `input` (only the blocks that hold
/// them) into `sink`; returns how many were handed over.
pub(crate) fn visit_records(
    input: &mut dyn ReadSeek,
    file: &str,
    range: Range<u64>,
    note: Note<'_>,
    sink: &mut dyn for<'e> EntrySink<Entry<'e>>,
) -> Result<u64, FormatError> {
    let reader = Reader { tids: Vec::new() };
    entries::visit_records(input, FORMAT, file, range, note, &ReplayKinds, reader, sink)
}

/// The line a record of `action` was made from (see the encoder: malloc keeps its size,
/// calloc and memalign their extra value and size, realloc its old pointer and size).
fn line_of(tid: u64, action: Action, r: &ModelRecord) -> ReplayLine {
    let (a, b) = match action {
        Action::Malloc => (r.size, 0),
        Action::Calloc | Action::Memalign => (r.extra, r.size),
        Action::Realloc => (r.old, r.size),
        Action::Free | Action::ThreadDone => (0, 0),
    };
    ReplayLine {
        tid,
        action,
        ptr: r.addr,
        a,
        b,
    }
}

/// The model's records turned into [`Entry`]s, with the decoder's own thread table.
struct Reader {
    /// Thread id by site id.
    tids: Vec<u64>,
}

impl EntryReader for Reader {
    type Entry<'e> = Entry<'e>;

    const SIDE_STREAMS: SideStreams = SIDE_STREAMS;

    fn block_start(&mut self) {
        self.tids.clear();
    }

    fn entry<'e, 'b: 'e>(
        &'e mut self,
        cursors: &mut BlockCursors<'b, '_>,
        k: u64,
        r: &ModelRecord,
    ) -> Result<Entry<'e>, FormatError> {
        if let Some(action) = model::action(r.kind) {
            let site = r.site as usize;
            if site == self.tids.len() {
                self.tids.push(next_thread(cursors, k)?);
            }
            let Some(&tid) = self.tids.get(site) else {
                return Err(cursors.at(k, format!("unknown thread {site}")));
            };
            Ok(Entry::Line(line_of(tid, action, r)))
        } else if r.kind == model::VERBATIM || r.kind == model::VERBATIM_UNTERMINATED {
            Ok(Entry::Text {
                line: cursors.verbatim_line(k)?,
                newline: r.kind == model::VERBATIM,
            })
        } else {
            Err(cursors.at(k, format!("unknown record kind {}", r.kind)))
        }
    }
}
