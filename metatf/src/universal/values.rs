//! Value sections of one block, shared by the universal and the typed codecs so that both lay
//! them out identically: read side (raw element bytes) and write side (elements being collected,
//! with an undo journal so a record that needs metadata first can be retried).

use std::collections::{BTreeMap, HashMap};

use crate::container::ByteOrder;
use crate::field::bits::{read_uint, unsigned_width, write_uint};
use crate::field::{ValueSink, ValueSource};

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
                let max = c.elements.iter().copied().max().unwrap_or(0);
                let width = unsigned_width(max).max(1);
                let mut bytes = Vec::with_capacity(c.elements.len() * usize::from(width));
                for v in c.elements {
                    write_uint(&mut bytes, v, width, order);
                }
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
