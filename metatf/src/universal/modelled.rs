//! The model engine's blocks as every writer and reader meets them: a writer collects a
//! block's records as flat columns ([`FlatBlock`]: tags and scalars as words in walk order,
//! byte strings back to back), then [`ModelColumns::write_block`] chooses the predictors and
//! codes the block; a reader decodes a block's one section back into columns with
//! [`decode_columns`]. The universal writer fills the columns from dynamic records, the typed
//! writer from generated code, and both end in the same call, so the same records give the
//! same bytes.

use std::io::Write;

use metatf_dtd::Schema;

use super::plan::Catalog;
use super::RECORD_SECTION;
use crate::container::{Block, Codec, ContainerWriter, SectionData};
use crate::error::Error;
use crate::model::flat::FlatBlock;
use crate::model::{
    decode_block, encode_block_best, fixed_choices, Carried, Choice, Stage, Streams,
};

/// The records of the block being written, and what the engine needs to code them.
pub(crate) struct ModelColumns {
    pub(crate) streams: Streams,
    /// Per stream: the predictors the DTD fixes (`field.model = ...;`), else `None`.
    fixed: Vec<Option<Choice>>,
    /// The block's records so far.
    pub(crate) flat: FlatBlock,
    /// The section in force at the block's first record.
    section: Option<u8>,
    /// The object lists the previous block hands on (docs/FORMAT.md §7).
    carried: Carried,
    /// How the blocks' symbols are stored.
    stage: Stage,
}

impl ModelColumns {
    /// Empty columns for the records of `schema` (whose plans `catalog` holds), for a file
    /// whose header is `header` (its property [`crate::model::PROPERTY_STAGE`] picks the stage).
    pub(crate) fn new(
        schema: &Schema,
        catalog: &Catalog,
        header: &crate::container::ContainerHeader,
    ) -> Result<ModelColumns, Error> {
        let streams = Streams::new(catalog);
        Ok(ModelColumns {
            fixed: fixed_choices(schema, catalog, &streams)?,
            streams,
            flat: FlatBlock::default(),
            section: None,
            carried: Carried::default(),
            stage: Stage::of_property(header.property(crate::model::PROPERTY_STAGE)),
        })
    }

    /// Chooses the block's predictors, codes its records into one container block of
    /// `records` records (none when the block is empty) and empties the columns for the next
    /// block, which starts in section `section_now`. `first_record` numbers the block's first
    /// record in the trace, for errors.
    pub(crate) fn write_block<W: Write>(
        &mut self,
        schema: &Schema,
        catalog: &Catalog,
        container: &mut ContainerWriter<W>,
        records: u64,
        first_record: u64,
        section_now: Option<u8>,
    ) -> Result<(), Error> {
        let declared = |n: u8| schema.section(n).is_some();
        let at = |(r, message): (u64, String)| Error::record(None, first_record + r, "", message);
        let (streams, flat, section) = (&self.streams, &self.flat, self.section);
        let fixed = &self.fixed;
        let carried = &mut self.carried;
        let bytes = encode_block_best(
            catalog, streams, flat, section, &declared, fixed, carried, self.stage,
        )
        .map_err(at)?;
        let sections = [SectionData {
            number: RECORD_SECTION,
            element_width: 0,
            codec: Codec::None,
            level: 0,
            bytes: &bytes,
        }];
        let n = if flat.records == 0 { 0 } else { 1 };
        container.write_block(records, &sections[..n])?;
        self.flat.clear();
        self.section = section_now;
        Ok(())
    }
}

/// Decodes a modelled block that starts in section `section` into `flat` (its previous
/// content dropped): every record, or an error naming the block and record. The block's
/// lists start from `carried`, which then holds the lists for the next block.
pub(crate) fn decode_columns(
    schema: &Schema,
    catalog: &Catalog,
    streams: &Streams,
    block: Block,
    section: Option<u8>,
    flat: &mut FlatBlock,
    carried: &mut Carried,
) -> Result<(), Error> {
    let mut coded = Vec::new();
    for s in block.sections {
        if s.number != RECORD_SECTION {
            return Err(Error::Corrupt {
                offset: block.offset,
                message: format!("modelled block has a section {}", s.number),
            });
        }
        coded = s.bytes;
    }
    let declared = |n: u8| schema.section(n).is_some();
    let (offset, first) = (block.offset, block.first_record);
    // The previous block's records are all handed out: free them before this block's are
    // decoded, so that two decoded blocks never count against the reader's memory together.
    *flat = FlatBlock::default();
    let (decoded, _) = decode_block(
        catalog,
        streams,
        &coded,
        block.record_count,
        section,
        &declared,
        carried,
    )
    .map_err(|(r, message)| Error::record(Some(offset), first + r, "", message))?;
    *flat = decoded;
    Ok(())
}
