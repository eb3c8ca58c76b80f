//! A block of records in flat form: every record's tag and scalar values in one array of
//! words, in the order the record's fields are walked, and its byte strings in one byte array.
//! The writer collects a block this way before modelling it; the reader decodes into it and
//! hands out [`DynRecord`]s one at a time.

use crate::universal::plan::{Builtin, Catalog, Leaf, RecordPlan};
use crate::universal::{DynRecord, Value};

/// Bytes of buffered values (8 per scalar, 1 per string byte) that end a modelled block.
pub(crate) const MODEL_BLOCK_BYTES: usize = 24 << 20;

/// Records of one block in flat form.
#[derive(Default)]
pub(crate) struct FlatBlock {
    pub(crate) words: Vec<u64>,
    pub(crate) bytes: Vec<u8>,
    pub(crate) records: u64,
}

impl FlatBlock {
    /// Whether the block holds [`MODEL_BLOCK_BYTES`] of values or more: a modelled block ends
    /// there even before [`super::MODEL_BLOCK_RECORDS`] records, so that the memory of the
    /// writer and the reader is bounded whatever the records hold.
    pub(crate) fn is_full(&self) -> bool {
        self.words.len() * 8 + self.bytes.len() >= MODEL_BLOCK_BYTES
    }

    pub(crate) fn clear(&mut self) {
        self.words.clear();
        self.bytes.clear();
        self.records = 0;
    }

    /// Appends a record; on a shape error nothing is appended.
    pub(crate) fn push(&mut self, plan: &RecordPlan, fields: &[Value]) -> Result<(), String> {
        let (words, bytes) = (self.words.len(), self.bytes.len());
        self.words.push(plan.tag);
        let r = if plan.builtin == Builtin::Metadata {
            self.words.push(fields.len() as u64);
            fields.iter().try_for_each(|f| match f {
                Value::Uint(v) => {
                    self.words.push(*v);
                    Ok(())
                }
                _ => Err("metadata fields must all be integers".to_string()),
            })
        } else {
            let mut scalars = Vec::new();
            self.push_leaves(&plan.leaves, fields, &mut scalars)
        };
        match r {
            Ok(()) => {
                self.records += 1;
                Ok(())
            }
            Err(e) => {
                self.words.truncate(words);
                self.bytes.truncate(bytes);
                Err(format!("{}: {e}", plan.name))
            }
        }
    }

    fn push_leaves(
        &mut self,
        leaves: &[Leaf],
        values: &[Value],
        scalars: &mut Vec<(u16, u64)>,
    ) -> Result<(), String> {
        if leaves.len() != values.len() {
            return Err(format!(
                "{} fields given, {} expected",
                values.len(),
                leaves.len()
            ));
        }
        for (leaf, value) in leaves.iter().zip(values) {
            match (leaf, value) {
                (Leaf::Scalar { position, .. }, Value::Uint(v)) => {
                    self.words.push(*v);
                    scalars.push((*position, *v));
                }
                (
                    Leaf::Bytes {
                        length_position,
                        name,
                    },
                    Value::Bytes(b),
                ) => {
                    let len = lookup(scalars, *length_position);
                    if len != Some(b.len() as u64) {
                        return Err(format!(
                            "{name}: {} bytes given but the length field says {len:?}",
                            b.len()
                        ));
                    }
                    self.bytes.extend_from_slice(b);
                }
                (
                    Leaf::Repeated {
                        count_position,
                        element,
                        name,
                    },
                    Value::List(items),
                ) => {
                    let count = lookup(scalars, *count_position);
                    if count != Some(items.len() as u64) {
                        return Err(format!(
                            "{name}: {} repetitions given but the count field says {count:?}",
                            items.len()
                        ));
                    }
                    for item in items {
                        self.push_leaves(element, item, scalars)?;
                    }
                }
                _ => {
                    return Err(format!(
                        "{}: value {value:?} has the wrong shape for this field",
                        leaf.name()
                    ))
                }
            }
        }
        Ok(())
    }
}

/// Most recent value of the scalar at `position` in the record being walked.
pub(crate) fn lookup(scalars: &[(u16, u64)], position: u16) -> Option<u64> {
    scalars
        .iter()
        .rev()
        .find(|(p, _)| *p == position)
        .map(|(_, v)| *v)
}

/// Reads the records of a decoded [`FlatBlock`] back; the block was checked when it was
/// decoded, so a record that does not fit is reported as `None`.
#[derive(Default)]
pub(crate) struct FlatCursor {
    word: usize,
    byte: usize,
    scalars: Vec<(u16, u64)>,
}

impl FlatCursor {
    /// Reads the next record into `r`, reusing its name, field vector and byte strings: a
    /// reader printing millions of small records otherwise spends much of its time
    /// allocating and freeing them.
    pub(crate) fn next_into(
        &mut self,
        block: &FlatBlock,
        catalog: &Catalog,
        section: Option<u8>,
        r: &mut DynRecord,
    ) -> Option<()> {
        let tag = *block.words.get(self.word)?;
        self.word += 1;
        let plan = catalog.by_tag(section, tag)?;
        // Most records repeat the name the record before had: compared inline (names are
        // short, and a call to the library's comparison cost more than the copy it saves).
        let same = r.name.len() == plan.name.len()
            && r.name.bytes().zip(plan.name.bytes()).all(|(a, b)| a == b);
        if !same {
            r.name.clear();
            r.name.push_str(&plan.name);
        }
        r.section = section;
        r.tag = tag;
        if plan.builtin == Builtin::Metadata {
            let n = *block.words.get(self.word)? as usize;
            self.word += 1;
            let values = block.words.get(self.word..self.word.checked_add(n)?)?;
            self.word += n;
            r.fields.clear();
            r.fields.extend(values.iter().map(|&v| Value::Uint(v)));
        } else {
            self.scalars.clear();
            self.read_leaves(block, &plan.leaves, &mut r.fields)?;
        }
        Some(())
    }

    /// Reads `leaves` into `out` in place, reusing the values it holds where they have the
    /// same shape.
    fn read_leaves(
        &mut self,
        block: &FlatBlock,
        leaves: &[Leaf],
        out: &mut Vec<Value>,
    ) -> Option<()> {
        out.truncate(leaves.len());
        for (n, leaf) in leaves.iter().enumerate() {
            if out.len() == n {
                out.push(Value::Uint(0));
            }
            let slot = &mut out[n];
            match leaf {
                Leaf::Scalar { position, .. } => {
                    let v = *block.words.get(self.word)?;
                    self.word += 1;
                    self.scalars.push((*position, v));
                    *slot = Value::Uint(v);
                }
                Leaf::Bytes {
                    length_position, ..
                } => {
                    let len = usize::try_from(lookup(&self.scalars, *length_position)?).ok()?;
                    let b = block.bytes.get(self.byte..self.byte.checked_add(len)?)?;
                    self.byte += len;
                    match slot {
                        Value::Bytes(held) => {
                            held.clear();
                            held.extend_from_slice(b);
                        }
                        _ => *slot = Value::Bytes(b.to_vec()),
                    }
                }
                Leaf::Repeated {
                    count_position,
                    element,
                    ..
                } => {
                    let count = usize::try_from(lookup(&self.scalars, *count_position)?).ok()?;
                    if !matches!(slot, Value::List(_)) {
                        *slot = Value::List(Vec::new());
                    }
                    let Value::List(items) = slot else {
                        return None;
                    };
                    items.truncate(count);
                    for i in 0..count {
                        if items.len() == i {
                            items.push(Vec::with_capacity(element.len()));
                        }
                        self.read_leaves(block, element, &mut items[i])?;
                    }
                }
            }
        }
        Some(())
    }
}
