//! The records of a `memory-replay` container as the model decodes them, typed, for
//! [`crate::records`]: what the decoder would print, handed over without being printed and
//! parsed back.

use std::ops::Range;

use metatf::container::Block;

use super::decode::{Cursors, StreamsAt};
use super::kinds::{self, ReplayKinds};
use super::line::{Action, ReplayLine};
use super::FORMAT;
use crate::alloc::entries::{self, EntryReader, EntrySink};
use crate::alloc::model::ModelRecord;
use crate::format::FormatError;
use crate::seek::{Note, ReadSeek};

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
    let reader = Reader {
        file,
        tids: Vec::new(),
        streams_at: StreamsAt::default(),
    };
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

/// The model's records turned into [`Entry`]s, with the decoder's own thread table and
/// stream cursors.
struct Reader<'f> {
    file: &'f str,
    /// Thread id by site id.
    tids: Vec<u64>,
    streams_at: StreamsAt,
}

impl EntryReader for Reader<'_> {
    type Entry<'e> = Entry<'e>;

    fn block_start(&mut self) {
        self.tids.clear();
        self.streams_at = StreamsAt::default();
    }

    fn records<H>(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
        hand: &mut H,
    ) -> Result<(), FormatError>
    where
        H: for<'e> FnMut(u64, Entry<'e>) -> Result<(), FormatError>,
    {
        let mut cursors = Cursors::new(block, self.file, self.streams_at);
        for (k, r) in (first..).zip(records) {
            let entry = if let Some(action) = kinds::action(r.kind) {
                let site = r.site as usize;
                if site == self.tids.len() {
                    self.tids.push(cursors.thread(k)?);
                }
                let Some(&tid) = self.tids.get(site) else {
                    return Err(cursors.at(k, format!("unknown thread {site}")));
                };
                Entry::Line(line_of(tid, action, r))
            } else if r.kind == kinds::VERBATIM || r.kind == kinds::VERBATIM_UNTERMINATED {
                Entry::Text {
                    line: cursors.verbatim_line(k)?,
                    newline: r.kind == kinds::VERBATIM,
                }
            } else {
                return Err(cursors.at(k, format!("unknown record kind {}", r.kind)));
            };
            hand(k, entry)?;
        }
        self.streams_at = cursors.streams_at();
        Ok(())
    }
}
