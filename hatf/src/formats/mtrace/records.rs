//! The records of an `mtrace` container as the model decodes them, typed, for
//! [`crate::records`]: what the decoder would print, handed over without being printed (a
//! printed line parsed back was half the time of an export).

use std::ops::Range;

use super::decode::{line_kinds, new_site, other_line, Callers, LineKind, What, SIDE_STREAMS};
use super::line::{Op, OpLine};
use super::model::{self, MtraceKinds};
use super::FORMAT;
use crate::format::FormatError;
use crate::seek::{Note, ReadSeek};
use crate::shared::allocation_model::ModelRecord;
use crate::shared::container::block_cursors::{BlockCursors, SideStreams};
use crate::shared::container::entries::{self, EntryReader, EntrySink};

/// One record of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry<'a> {
    /// `= Start`.
    Start,
    /// `= End`.
    End,
    /// An operation, as its line would be parsed.
    Op(OpLine<'a>),
    /// A line the encoder kept as text (without its `\n`); `newline` is false for a last line
    /// that has none.
    Text { line: &'a [u8], newline: bool },
}

/// Decodes records `range` of the `mtrace` container `input` (only the blocks that hold them)
/// into `sink`; returns how many were handed over.
pub(crate) fn visit_records(
    input: &mut dyn ReadSeek,
    file: &str,
    range: Range<u64>,
    note: Note<'_>,
    sink: &mut dyn for<'e> EntrySink<Entry<'e>>,
) -> Result<u64, FormatError> {
    let reader = Reader {
        callers: Callers::default(),
        kinds: line_kinds(),
    };
    entries::visit_records(input, FORMAT, file, range, note, &MtraceKinds, reader, sink)
}

/// The operation of an operation's kind code.
fn op_of(kind: u8) -> Op {
    match kind {
        model::MALLOC => Op::Malloc,
        model::FREE => Op::Free,
        model::REALLOC_OLD => Op::ReallocOld,
        _ => Op::ReallocNew,
    }
}

/// The model's records turned into [`Entry`]s: the decoder's own call-site table, as the
/// printing sink keeps it.
struct Reader {
    callers: Callers,
    kinds: [LineKind; 256],
}

impl EntryReader for Reader {
    type Entry<'e> = Entry<'e>;

    const SIDE_STREAMS: SideStreams = SIDE_STREAMS;

    fn block_start(&mut self) {
        self.callers.clear();
    }

    fn entry<'e, 'b: 'e>(
        &'e mut self,
        cursors: &mut BlockCursors<'b, '_>,
        k: u64,
        r: &ModelRecord,
    ) -> Result<Entry<'e>, FormatError> {
        let what = self.kinds[usize::from(r.kind)].what;
        Ok(match what {
            What::Op | What::SizedOp => {
                let site = r.site as usize;
                if site >= self.callers.len() {
                    new_site(cursors, k, &mut self.callers, site)?;
                }
                let caller = self.callers.caller(site).flatten();
                Entry::Op(OpLine {
                    caller,
                    op: op_of(r.kind),
                    addr: r.addr,
                    size: if what == What::SizedOp { r.size } else { 0 },
                })
            }
            What::Start => Entry::Start,
            What::End => Entry::End,
            _ => {
                let (line, newline) = other_line(cursors, k, what, r.kind)?;
                Entry::Text { line, newline }
            }
        })
    }
}
