//! Value sections of one block for the typed codec. The layout is the universal codec's (the
//! same elements in the same order, serialised at the same narrowest width, see
//! [`crate::universal::values`]); what differs is the lookup: sections are indexed by number
//! instead of through a map, a `sectionOffset` dictionary hashes with one multiplication, and a
//! block's sections are decoded to integers once when it is loaded.

use std::collections::hash_map::Entry;

use crate::container::ByteOrder;
use crate::field::bits::read_uint;
use crate::field::{ValueSink, ValueSource};
use crate::hash::FastMap;
use crate::universal::values::serialise_section;

type FirstIndex = FastMap<u64, u64>;

#[derive(Default)]
struct Chunk {
    elements: Vec<u64>,
    /// First index of each value among `elements[..indexed]`, for `sectionOffset` dictionary
    /// coding. Kept up lazily: a section only `sectionStride` fields fill is never hashed.
    first: FirstIndex,
    indexed: usize,
}

impl Chunk {
    /// Indexes the elements appended since the last lookup.
    #[inline]
    fn catch_up(&mut self) {
        for (i, &v) in self.elements.iter().enumerate().skip(self.indexed) {
            self.first.entry(v).or_insert(i as u64);
        }
        self.indexed = self.elements.len();
    }
}

/// The value sections of a block being written, by section number.
pub(crate) struct WriteValues {
    chunks: Vec<Chunk>,
    /// Numbers of the sections holding elements, in no order.
    used: Vec<u8>,
    /// (section, length before a put), newest last.
    journal: Vec<(u8, usize)>,
}

impl Default for WriteValues {
    fn default() -> Self {
        WriteValues {
            chunks: (0..256).map(|_| Chunk::default()).collect(),
            used: Vec::new(),
            journal: Vec::new(),
        }
    }
}

impl WriteValues {
    #[inline]
    pub(crate) fn checkpoint(&self) -> usize {
        self.journal.len()
    }

    /// Undoes every `put` since `checkpoint`.
    pub(crate) fn rollback(&mut self, checkpoint: usize) {
        while self.journal.len() > checkpoint {
            let Some((section, len)) = self.journal.pop() else {
                break;
            };
            let c = &mut self.chunks[usize::from(section)];
            let indexed = c.indexed;
            for v in c.elements.drain(len..).take(indexed.saturating_sub(len)) {
                if c.first.get(&v).is_some_and(|&i| i as usize >= len) {
                    c.first.remove(&v);
                }
            }
            c.indexed = indexed.min(len);
        }
    }

    /// Forgets the journal (the record was written).
    #[inline]
    pub(crate) fn commit(&mut self) {
        self.journal.clear();
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.used
            .iter()
            .all(|&n| self.chunks[usize::from(n)].elements.is_empty())
    }

    /// Serialises each non-empty section, by increasing number, with the narrowest element
    /// width that holds all its elements, and empties the sections for the next block.
    pub(crate) fn take_sections(&mut self, order: ByteOrder) -> Vec<(u8, u8, Vec<u8>)> {
        self.journal.clear();
        let mut used = std::mem::take(&mut self.used);
        used.sort_unstable();
        let mut out = Vec::with_capacity(used.len());
        for n in used {
            let c = &mut self.chunks[usize::from(n)];
            if c.elements.is_empty() {
                continue;
            }
            let (width, bytes) = serialise_section(&c.elements, order);
            // Keep the allocations for the next block.
            c.elements.clear();
            c.first.clear();
            c.indexed = 0;
            out.push((n, width, bytes));
        }
        out
    }
}

impl WriteValues {
    /// The index of `value`'s first element in section `section`, appending it if absent
    /// (as `find`, then `put` at the end, do).
    #[inline]
    pub(crate) fn intern(&mut self, section: u8, value: u64) -> u64 {
        let c = &mut self.chunks[usize::from(section)];
        c.catch_up();
        let len = c.elements.len();
        match c.first.entry(value) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                e.insert(len as u64);
                if len == 0 && !self.used.contains(&section) {
                    self.used.push(section);
                }
                self.journal.push((section, len));
                c.elements.push(value);
                c.indexed = len + 1;
                len as u64
            }
        }
    }
}

impl ValueSink for WriteValues {
    #[inline]
    fn len(&self, section: u8) -> u64 {
        self.chunks[usize::from(section)].elements.len() as u64
    }

    #[inline]
    fn get(&self, section: u8, index: u64) -> Option<u64> {
        self.chunks[usize::from(section)]
            .elements
            .get(usize::try_from(index).ok()?)
            .copied()
    }

    #[inline]
    fn find(&self, section: u8, value: u64) -> Option<u64> {
        let c = &self.chunks[usize::from(section)];
        c.first.get(&value).copied().or_else(|| {
            let tail = c.elements.get(c.indexed..)?;
            let at = tail.iter().position(|&v| v == value)?;
            Some((c.indexed + at) as u64)
        })
    }

    fn put(&mut self, section: u8, index: u64, value: u64) {
        let c = &mut self.chunks[usize::from(section)];
        if c.elements.is_empty() && !self.used.contains(&section) {
            self.used.push(section);
        }
        self.journal.push((section, c.elements.len()));
        // Gaps hold zeros; the dictionary indexes them when a lookup next needs it.
        while (c.elements.len() as u64) < index {
            c.elements.push(0);
        }
        c.elements.push(value);
    }
}

/// The value sections of a block being read, decoded to integers, by section number.
pub(crate) struct ReadValues {
    /// Per section number, its elements (`None`: absent from the block).
    sections: Vec<Option<Vec<u64>>>,
    /// Numbers of the sections present, to clear them at the next block.
    present: Vec<u8>,
    pub(crate) order: ByteOrder,
}

impl ReadValues {
    pub(crate) fn new(order: ByteOrder) -> Self {
        ReadValues {
            sections: vec![None; 256],
            present: Vec::new(),
            order,
        }
    }

    /// Forgets the sections of the previous block.
    pub(crate) fn clear(&mut self) {
        for n in self.present.drain(..) {
            self.sections[usize::from(n)] = None;
        }
    }

    /// Adds a section of the block: `bytes` holds elements of `width` bytes (1-8), a partial
    /// last element ignored, as the universal reader counts them.
    pub(crate) fn insert(&mut self, number: u8, width: u8, bytes: &[u8]) {
        let w = usize::from(width.max(1));
        let elements = bytes
            .chunks_exact(w)
            .map(|e| read_uint(e, width, self.order))
            .collect();
        if self.sections[usize::from(number)].is_none() {
            self.present.push(number);
        }
        self.sections[usize::from(number)] = Some(elements);
    }
}

impl ValueSource for ReadValues {
    #[inline]
    fn element(&self, section: u8, index: u64) -> Result<u64, String> {
        let Some(elements) = &self.sections[usize::from(section)] else {
            return Err(format!("value section {section} is absent from this block"));
        };
        match usize::try_from(index).ok().and_then(|i| elements.get(i)) {
            Some(&v) => Ok(v),
            None => Err(format!(
                "element {index} of value section {section} does not exist (the block holds {})",
                elements.len()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ReadValues, WriteValues};
    use crate::container::ByteOrder;
    use crate::field::{ValueSink, ValueSource};
    use crate::universal::values::{BlockValues, ValueBuilder};

    /// The same puts and rollbacks give the universal builder's bytes, and read back the same.
    #[test]
    fn layout_and_lookups_match_the_universal_value_sections() {
        let mut ours = WriteValues::default();
        let mut theirs = ValueBuilder::default();
        let steps: Vec<(u8, u64, u64)> = (0..500u64)
            .map(|i| ((i % 3) as u8 * 7 + 1, i * 13 % 40, i * 2654435761 % 100_000))
            .collect();
        for (k, &(s, gap, v)) in steps.iter().enumerate() {
            let a = ours.checkpoint();
            let b = theirs.checkpoint();
            let index = ours.len(s) + gap % 3;
            assert_eq!(ours.find(s, v), theirs.find(s, v));
            if k % 7 == 3 {
                // Interning is `find`, else `put` at the end.
                let at = theirs.find(s, v).unwrap_or(theirs.len(s));
                if at == theirs.len(s) {
                    theirs.put(s, at, v);
                }
                assert_eq!(ours.intern(s, v), at);
                ours.commit();
                theirs.commit();
                continue;
            }
            ours.put(s, index, v);
            theirs.put(s, index, v);
            if k % 5 == 0 {
                ours.rollback(a);
                theirs.rollback(b);
            } else {
                ours.commit();
                theirs.commit();
            }
            assert_eq!(ours.len(s), theirs.len(s));
            assert_eq!(ours.get(s, index), theirs.get(s, index));
        }
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut o = WriteValues::default();
            let mut t = ValueBuilder::default();
            for &(s, _, v) in &steps {
                o.put(s, o.len(s), v);
                t.put(s, t.len(s), v);
            }
            let sections = o.take_sections(order);
            assert_eq!(sections, t.take_sections(order));
            assert!(o.is_empty(), "taking empties the sections");
            let mut read = ReadValues::new(order);
            let mut block = BlockValues {
                sections: Default::default(),
                order,
            };
            for (n, w, bytes) in &sections {
                read.insert(*n, *w, bytes);
                block.sections.insert(*n, (*w, bytes.clone()));
            }
            for s in [1u8, 8, 15, 30] {
                for i in [0u64, 1, 100, 166, 167, 10_000] {
                    assert_eq!(read.element(s, i), block.element(s, i), "{s} {i}");
                }
            }
            read.clear();
            assert!(read.element(1, 0).is_err(), "cleared");
        }
    }
}
