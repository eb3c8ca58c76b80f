//! Cursors on the two side streams a model decoder reads besides the model's own: one of the
//! format's (mtrace's call-site strings, memory_replay's thread ids) and its verbatim lines.
//! Records that need them are rare, so reading them is kept out of the loop over records,
//! and a batch hands where it stopped ([`StreamsAt`]) to the next batch of the same block.

use metatf::container::Block;
use metatf::varint::Cursor;

use super::blocks;
use crate::format::FormatError;

/// Where a batch reads a block's side streams, and what names its errors.
pub struct BlockCursors<'a, 'f> {
    /// The format's own side stream (call-site strings, thread ids).
    pub own: Cursor<'a>,
    verbatim: Cursor<'a>,
    file: &'f str,
    block: &'a Block,
}

/// Where the reading of a block's side streams stopped at the end of a batch, for the next
/// batch to go on from (a block's first starts at 0).
#[derive(Debug, Default, Clone, Copy)]
pub struct StreamsAt {
    own: usize,
    verbatim: usize,
}

/// Which sections of a block the two side streams are, and the own stream's name for errors.
#[derive(Debug, Clone, Copy)]
pub struct SideStreams {
    /// Section number of the format's own side stream.
    pub own: u8,
    /// Its name, for errors.
    pub own_name: &'static str,
    /// Section number of the verbatim lines.
    pub verbatim: u8,
}

impl<'a, 'f> BlockCursors<'a, 'f> {
    /// Cursors on the side streams `streams` of `block` (of file `file`) at `at`.
    pub fn new(block: &'a Block, file: &'f str, streams: SideStreams, at: StreamsAt) -> Self {
        BlockCursors {
            own: Cursor::starting_at(
                blocks::section(block, streams.own),
                at.own,
                streams.own_name,
            ),
            verbatim: Cursor::starting_at(
                blocks::section(block, streams.verbatim),
                at.verbatim,
                "verbatim",
            ),
            file,
            block,
        }
    }

    /// Where the cursors are, for the next batch.
    pub fn streams_at(&self) -> StreamsAt {
        StreamsAt {
            own: self.own.position(),
            verbatim: self.verbatim.position(),
        }
    }

    /// The error `msg` at record `k` of the block.
    #[cold]
    pub fn at(&self, k: u64, msg: String) -> FormatError {
        FormatError {
            file: self.file.to_string(),
            position: format!(
                "block {} record {}",
                self.block.index,
                self.block.first_record + k
            ),
            message: msg,
        }
    }

    /// The text of record `k`, a verbatim line (without its line end).
    #[cold]
    #[inline(never)]
    pub fn verbatim_line(&mut self, k: u64) -> Result<&'a [u8], FormatError> {
        let n = self.verbatim.u64().map_err(|m| self.at(k, m))?;
        let n = usize::try_from(n).map_err(|_| self.at(k, "verbatim line too long".into()))?;
        self.verbatim.take(n).map_err(|m| self.at(k, m))
    }
}
