//! `hatf decode --records A..B` and the typed records of a range for Elephant Tracks: only the
//! blocks holding the records are read (through the container's index, [`crate::seek`]).

use std::io::Write;
use std::ops::Range;

use metatf::container::Block;

use super::decode::{block_error, block_text, Scratch, CHECK_LINES, FORMATS};
use super::model::RecordSink;
use super::sections::streams::id;
use super::text::print::TextBuf;
use crate::format::{DecodeOptions, FormatError};
use crate::seek::{self, Note, ReadSeek};

/// Decodes only records (lines) `first..end` (counted from 0, `end` exclusive and clipped to
/// the trace), reading only the blocks that hold them: the index says where they are, and
/// when it is missing, damaged or inconsistent it is rebuilt by reading the block headers and
/// `note` is told why. Returns the number of lines written. Name files are not written.
pub fn decode_records(
    input: &mut dyn ReadSeek,
    output: &mut dyn Write,
    options: &DecodeOptions,
    first: u64,
    end: u64,
    note: Note<'_>,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut out = TextBuf::default();
    let written = seek::decode_records(
        input,
        &FORMATS,
        file,
        first,
        end,
        note,
        &mut |_| Ok(()),
        &mut |_, block, keep| {
            let fail = |m: String| block_error(file, block.offset, block, m);
            out.clear();
            block_text(block, &mut out).map_err(fail)?;
            // Record i of the block is its line i; the last line may lack its newline.
            let out = out.as_slice();
            let mut starts =
                std::iter::once(0).chain(memchr::memchr_iter(b'\n', out).map(|p| p + 1));
            let from = starts
                .by_ref()
                .nth(keep.start as usize)
                .unwrap_or(out.len());
            let take = keep.end - keep.start;
            let to = if take == 0 {
                from
            } else {
                starts.nth(take as usize - 1).unwrap_or(out.len())
            };
            output
                .write_all(&out[from..to])
                .map_err(|e| fail(format!("cannot write the text trace: {e}")))
        },
    )?;
    output.flush().map_err(|e| FormatError {
        file: file.to_string(),
        position: String::new(),
        message: format!("cannot write the text trace: {e}"),
    })?;
    Ok(written)
}

/// What [`visit_records`] hands each block's records to, as the model decodes them.
pub(crate) trait BlockVisitor: RecordSink {
    /// A block begins, of which records `keep` (counted within it) are wanted; its records
    /// follow, all of them, the unwanted ones included.
    fn begin(&mut self, block: &Block, keep: Range<u64>) -> Result<(), FormatError>;
    /// The block's records were all handed over; an error (the visitor's) stops the reading.
    fn end(&mut self) -> Result<(), FormatError>;
}

/// Decodes records `first..end` like [`decode_records`], but hands each record to `visitor`
/// as the model decodes it — a typed record, or a line the encoder stored as text — instead
/// of printing it: what [`crate::records`] reads, with no text to parse back. A batch's
/// records are handed over before its streams are checked; a damaged block then ends the
/// reading with the error [`decode_records`] gives. Returns the number of records wanted.
pub(crate) fn visit_records(
    input: &mut dyn ReadSeek,
    file: &str,
    first: u64,
    end: u64,
    note: Note<'_>,
    visitor: &mut impl BlockVisitor,
) -> Result<u64, FormatError> {
    let mut scratch = Scratch::default();
    seek::decode_records(
        input,
        &FORMATS,
        file,
        first,
        end,
        note,
        &mut |_| Ok(()),
        &mut |_, block, keep| {
            let fail = |m: String| block_error(file, block.offset, block, m);
            visitor.begin(block, keep)?;
            if let Err(e) = block_records(block, &mut scratch, visitor) {
                // The text decoder names the line where the block went wrong.
                let line = block_text(block, &mut TextBuf::default()).err();
                return Err(fail(line.unwrap_or(e)));
            }
            visitor.end()
        },
    )
}

/// [`lines_to`]'s decode, handing the records to `sink` instead of a printer.
fn block_records(
    block: &Block,
    scratch: &mut Scratch,
    sink: &mut impl RecordSink,
) -> Result<(), String> {
    let (streams, model) = scratch.start(block)?;
    let mut k = 0u64;
    while k < block.record_count {
        let end = block.record_count.min(k.saturating_add(CHECK_LINES));
        while k < end {
            let c = streams.byte(id::KIND);
            model.decode(c, streams, sink);
            k += 1;
        }
        if let Some(e) = streams.take_failure() {
            return Err(e.message());
        }
    }
    let left = streams.leftovers();
    if !left.is_empty() {
        return Err(format!("bytes left over in streams {}", left.join(", ")));
    }
    Ok(())
}
