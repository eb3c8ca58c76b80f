//! Value sections of one block, shared by the universal and the typed codecs so that both lay
//! them out identically: read side (raw element bytes) and write side (elements being collected,
//! with an undo journal so a record that needs metadata first can be retried).

use std::collections::{BTreeMap, HashMap};

use super::RECORD_SECTION;
use crate::container::{Block, ByteOrder, Codec, SectionData};
use crate::error::Error;
use crate::field::bits::{read_uint, unsigned_width, write_uint};
use crate::field::{ValueSink, ValueSource, MAX_WIDTH};

/// The sections of a block as both codecs write it: the record stream (section
/// [`RECORD_SECTION`], when it holds anything), then each value section of `values` as
/// [`ValueBuilder::take_sections`] gives them, all with one codec and level.
pub(crate) fn block_sections<'a>(
    stream: &'a [u8],
    values: &'a [(u8, u8, Vec<u8>)],
    codec: Codec,
    level: i32,
) -> Vec<SectionData<'a>> {
    let record_stream = (!stream.is_empty()).then_some((RECORD_SECTION, 0, stream));
    let value_sections = values.iter().map(|(n, w, b)| (*n, *w, b.as_slice()));
    record_stream
        .into_iter()
        .chain(value_sections)
        .map(|(number, element_width, bytes)| SectionData {
            number,
            element_width,
            codec,
            level,
            bytes,
        })
        .collect()
}

/// Takes apart a block both codecs wrote: returns its record stream and hands each value
/// section (number, element width, bytes) to `value`. A value section whose width is not 1–8
/// is an error at the block's offset, as no element could be read from it.
pub(crate) fn split_block(
    block: Block,
    mut value: impl FnMut(u8, u8, Vec<u8>),
) -> Result<Vec<u8>, Error> {
    let mut stream = Vec::new();
    for s in block.sections {
        if s.number == RECORD_SECTION {
            stream = s.bytes;
        } else if s.element_width == 0 || s.element_width > MAX_WIDTH {
            return Err(Error::Corrupt {
                offset: block.offset,
                message: format!(
                    "value section {} has element width {}; 1-8 is required",
                    s.number, s.element_width
                ),
            });
        } else {
            value(s.number, s.element_width, s.bytes);
        }
    }
    Ok(stream)
}

/// One value section's elements at the narrowest width that holds them all (at least 1):
/// the width and the serialised bytes, as both codecs store a section.
pub(crate) fn serialise_section(elements: &[u64], order: ByteOrder) -> (u8, Vec<u8>) {
    let max = elements.iter().copied().max().unwrap_or(0);
    let width = unsigned_width(max).max(1);
    let mut bytes = Vec::with_capacity(elements.len() * usize::from(width));
    for &v in elements {
        write_uint(&mut bytes, v, width, order);
    }
    (width, bytes)
}

/// The value sections of a block being read: element width and bytes per section number.
#[derive(Default)]
pub(crate) struct BlockValues {
    pub(crate) sections: BTreeMap<u8, (u8, Vec<u8>)>,
    pub(crate) order: ByteOrder,
}

impl ValueSource for BlockValues {
    fn element(&self, section: u8, index: u64) -> Result<u64, String> {
        let (width, bytes) = self
            .sections
            .get(&section)
            .ok_or_else(|| format!("value section {section} is absent from this block"))?;
        let w = u64::from(*width);
        let count = bytes.len() as u64 / w;
        if index >= count {
            return Err(format!(
                "element {index} of value section {section} does not exist (the block holds {count})"
            ));
        }
        let at = (index * w) as usize;
        Ok(read_uint(&bytes[at..], *width, self.order))
    }
}

#[derive(Default)]
struct Chunk {
    elements: Vec<u64>,
    /// First index of each value, for `sectionOffset` dictionary coding.
    first: HashMap<u64, u64>,
}

/// The value sections of a block being written.
#[derive(Default)]
pub(crate) struct ValueBuilder {
    chunks: BTreeMap<u8, Chunk>,
    /// (section, length before a put), newest last.
    journal: Vec<(u8, usize)>,
}

impl ValueBuilder {
    pub(crate) fn checkpoint(&self) -> usize {
        self.journal.len()
    }

    /// Undoes every `put` since `checkpoint`.
    pub(crate) fn rollback(&mut self, checkpoint: usize) {
        while self.journal.len() > checkpoint {
            let Some((section, len)) = self.journal.pop() else {
                break;
            };
            if let Some(c) = self.chunks.get_mut(&section) {
                for v in c.elements.drain(len..) {
                    if c.first.get(&v).is_some_and(|&i| i as usize >= len) {
                        c.first.remove(&v);
                    }
                }
            }
        }
    }

    /// Forgets the journal (the record was written).
    pub(crate) fn commit(&mut self) {
        self.journal.clear();
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.chunks.values().all(|c| c.elements.is_empty())
    }

    /// Serialises each non-empty section with the narrowest element width that holds all its
    /// elements, and empties the builder for the next block.
    pub(crate) fn take_sections(&mut self, order: ByteOrder) -> Vec<(u8, u8, Vec<u8>)> {
        let chunks = std::mem::take(&mut self.chunks);
        self.journal.clear();
        chunks
            .into_iter()
            .filter(|(_, c)| !c.elements.is_empty())
            .map(|(n, c)| {
                let (width, bytes) = serialise_section(&c.elements, order);
                (n, width, bytes)
            })
            .collect()
    }
}

impl ValueSink for ValueBuilder {
    fn len(&self, section: u8) -> u64 {
        self.chunks
            .get(&section)
            .map_or(0, |c| c.elements.len() as u64)
    }

    fn get(&self, section: u8, index: u64) -> Option<u64> {
        self.chunks
            .get(&section)?
            .elements
            .get(usize::try_from(index).ok()?)
            .copied()
    }

    fn find(&self, section: u8, value: u64) -> Option<u64> {
        self.chunks.get(&section)?.first.get(&value).copied()
    }

    fn put(&mut self, section: u8, index: u64, value: u64) {
        let c = self.chunks.entry(section).or_default();
        self.journal.push((section, c.elements.len()));
        while (c.elements.len() as u64) < index {
            let i = c.elements.len() as u64;
            c.first.entry(0).or_insert(i);
            c.elements.push(0);
        }
        c.first.entry(value).or_insert(index);
        c.elements.push(value);
    }
}
