//! Records `A..B` of a container the block model wrote: only the blocks that hold them are
//! read (found through the index as [`seek::decode_records`] finds them), each decoded by the
//! model into a sink told which of the block's records to keep.

use std::ops::Range;

use crate::format::FormatError;
use crate::seek::{self, Note, ReadSeek};
use crate::shared::allocation_model::threads::decode_pipeline::{BlockModel, RecordSink};
use crate::shared::allocation_model::KindTable;
use crate::shared::container::blocks;

/// A [`RecordSink`] that hands on only some records of each block: the model decodes every
/// record of a block (each depends on those before it), the sink keeps the wanted ones.
pub(crate) trait KeepingSink: RecordSink {
    /// The records of the next block to keep, counted from its first record.
    fn keep(&mut self, keep: Range<u64>);
}

/// Decodes records `range` of the container `input` of format `format`, whose kind codes are
/// `kinds`, into `sink`; returns how many were kept.
pub(crate) fn decode_kept<K: KindTable, S: KeepingSink>(
    input: &mut dyn ReadSeek,
    format: &str,
    file: &str,
    range: Range<u64>,
    note: Note<'_>,
    kinds: &K,
    sink: &mut S,
) -> Result<u64, FormatError> {
    // Made when the first block is read: a range past the end reads none.
    let mut model: Option<BlockModel> = None;
    seek::decode_records(
        input,
        &[format],
        file,
        range.start,
        range.end,
        note,
        &mut |header| blocks::check_layout(header, file),
        &mut |_, block, keep| {
            let model = model.get_or_insert_with(BlockModel::new);
            sink.keep(keep);
            model.block(kinds, block, file, sink)
        },
    )
}
