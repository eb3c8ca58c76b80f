//! The records of an `mtrace` container as the model decodes them, typed, for
//! [`crate::records`]: what the decoder would print, handed over without being printed (a
//! printed line parsed back was half the time of an export).

use std::ops::Range;

use metatf::container::Block;

use super::decode::{line_kinds, Callers, Cursors, LineKind, What};
use super::kinds::{self, MtraceKinds};
use super::line::{Op, OpLine};
use super::{FORMAT, STRINGS, VERBATIM};
use crate::alloc::blocks;
use crate::alloc::model::pipeline::{BlockModel, RecordSink};
use crate::alloc::model::ModelRecord;
use crate::alloc::text_out::Filled;
use crate::format::FormatError;
use crate::seek::{self, Note, ReadSeek};
use metatf::varint::Cursor;

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

/// What [`visit_records`] hands the records to.
pub(crate) trait EntrySink {
    /// A block begins; its wanted records follow.
    fn block(&mut self, block: &Block) -> Result<(), FormatError>;
    /// Record `index` (counted in the file) is `entry`.
    fn entry(&mut self, index: u64, entry: Entry<'_>) -> Result<(), FormatError>;
}

/// Decodes records `range` of the `mtrace` container `input` (only the blocks that hold them,
/// found through the index as [`seek::decode_records`] finds them) into `sink`; returns how
/// many were handed over.
pub(crate) fn visit_records(
    input: &mut dyn ReadSeek,
    file: &str,
    range: Range<u64>,
    note: Note<'_>,
    sink: &mut dyn EntrySink,
) -> Result<u64, FormatError> {
    let mut typed = Typed {
        file,
        sink,
        callers: Callers::default(),
        strings_at: 0,
        verbatim_at: 0,
        keep: 0..0,
        kinds: line_kinds(),
    };
    let mut model: Option<BlockModel> = None;
    seek::decode_records(
        input,
        &[FORMAT],
        file,
        range.start,
        range.end,
        note,
        &mut |header| blocks::check_layout(header, file),
        &mut |_, block, keep| {
            let model = model.get_or_insert_with(BlockModel::new);
            typed.keep = keep;
            model.block(&MtraceKinds, block, file, &mut typed)
        },
    )
}

/// The operation of an operation's kind code.
fn op_of(kind: u8) -> Op {
    match kind {
        kinds::MALLOC => Op::Malloc,
        kinds::FREE => Op::Free,
        kinds::REALLOC_OLD => Op::ReallocOld,
        _ => Op::ReallocNew,
    }
}

/// The model's records turned into [`Entry`]s: the decoder's own call-site table and stream
/// cursors, as the printing sink keeps them.
struct Typed<'f, 's> {
    file: &'f str,
    sink: &'s mut dyn EntrySink,
    callers: Callers,
    strings_at: usize,
    verbatim_at: usize,
    /// The records of the block (counted from its first) handed over.
    keep: Range<u64>,
    kinds: [LineKind; 256],
}

impl RecordSink for Typed<'_, '_> {
    fn block_start(&mut self, block: &Block) -> Result<(), FormatError> {
        self.callers.clear();
        self.strings_at = 0;
        self.verbatim_at = 0;
        if self.keep.start < self.keep.end {
            self.sink.block(block)?;
        }
        Ok(())
    }

    fn records(
        &mut self,
        block: &Block,
        first: u64,
        records: &[ModelRecord],
        _print: bool,
    ) -> Result<(), FormatError> {
        let mut cursors = Cursors {
            strings: Cursor::starting_at(
                blocks::section(block, STRINGS),
                self.strings_at,
                "strings",
            ),
            verbatim: Cursor::starting_at(
                blocks::section(block, VERBATIM),
                self.verbatim_at,
                "verbatim",
            ),
            file: self.file,
            block,
        };
        for (k, r) in (first..).zip(records) {
            let keep = self.keep.contains(&k);
            let what = self.kinds[usize::from(r.kind)].what;
            let entry = match what {
                What::Op | What::SizedOp => {
                    let site = r.site as usize;
                    if site >= self.callers.len() {
                        cursors.new_site(k, &mut self.callers, site)?;
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
                    let (line, newline) = cursors.other_line(k, what, r.kind)?;
                    Entry::Text { line, newline }
                }
            };
            if keep {
                self.sink.entry(block.first_record + k, entry)?;
            }
        }
        self.strings_at = cursors.strings.position();
        self.verbatim_at = cursors.verbatim.position();
        Ok(())
    }

    // One thread decodes and hands over every record: nothing is printed elsewhere.
    fn take_printed(&mut self, _text: Filled) {}

    fn flush(&mut self) -> Result<(), FormatError> {
        Ok(())
    }

    fn block_end(&mut self, _block: &Block) -> Result<(), FormatError> {
        Ok(())
    }
}
