//! The universal reader: decodes any container's records using its schema.

use std::fmt;
use std::io::Read;
use std::sync::Arc;

use metatf_dtd::Schema;

use super::modelled::decode_columns;
use super::plan::{Builtin, Catalog, Leaf, RecordPlan};
use super::record::{DynRecord, Event, Step, Value};
use super::values::{split_block, BlockValues};
use super::{FIELDS_PER_BYTE, MAX_LEAVES_PER_RECORD};
use crate::container::{Block, ByteOrder, ContainerHeader, ContainerReader};
use crate::error::Error;
use crate::field::bits::read_uint;
use crate::field::Change;
use crate::field::FieldState;
use crate::model::flat::{FlatBlock, FlatCursor};
use crate::model::{Carried, Streams, ENGINE_MODEL, PROPERTY_ENGINE};

/// Reads the records of a container one at a time, holding one block in memory.
pub struct UniversalReader<R: Read> {
    container: ContainerReader<R>,
    schema: Schema,
    catalog: Arc<Catalog>,
    order: ByteOrder,
    /// Field states by slot (see [`Catalog::initial_states`]).
    states: Vec<FieldState>,
    section: Option<u8>,
    /// The record stream of the current block and how far it has been read.
    stream: Vec<u8>,
    at: usize,
    values: BlockValues,
    block_offset: u64,
    block_left: u64,
    record: u64,
    done: bool,
    /// (position, value) of the scalars of the record being read, reused between records.
    scalars: Vec<(u16, u64)>,
    /// Fields the current block may still produce.
    block_budget: usize,
    /// Set when the header names the model engine: each block is decoded whole, then read out.
    model: Option<ModelBlock>,
}

/// The decoded records of the current modelled block.
struct ModelBlock {
    streams: Streams,
    flat: FlatBlock,
    cursor: FlatCursor,
    /// The object lists the previous block hands on.
    carried: Carried,
}

impl<R: Read> UniversalReader<R> {
    /// Opens a container and decodes with the DTD embedded in its header.
    pub fn new(r: R) -> Result<Self, Error> {
        let container = ContainerReader::new(r)?;
        let schema =
            metatf_dtd::parse_schema(&container.header().dtd, "<embedded DTD>").map_err(|d| {
                Error::Schema {
                    message: d.to_string(),
                }
            })?;
        Self::from_container(container, schema)
    }

    /// Opens a container and decodes with `schema` instead of the embedded DTD.
    pub fn with_schema(r: R, schema: Schema) -> Result<Self, Error> {
        Self::from_container(ContainerReader::new(r)?, schema)
    }

    fn from_container(container: ContainerReader<R>, schema: Schema) -> Result<Self, Error> {
        // A format-specific model stores streams the DTD does not describe field by field;
        // reading them as records would print wrong data, so it is refused.
        if let Some(model) = container.header().model_layout() {
            return Err(Error::InvalidArgument {
                message: format!(
                    "the sections of this `{}` trace use the format-specific layout `{model}`, not the universal record layout; `hatf decode` turns it back into text",
                    container.header().format
                ),
            });
        }
        let order = container
            .header()
            .byte_order()
            .map_err(|e| Error::Corrupt {
                offset: 12,
                message: e.to_string(),
            })?;
        let catalog = Arc::new(Catalog::new(&schema)?);
        let states = catalog.initial_states();
        let model =
            (container.header().property(PROPERTY_ENGINE) == Some(ENGINE_MODEL)).then(|| {
                ModelBlock {
                    streams: Streams::new(&catalog),
                    flat: FlatBlock::default(),
                    cursor: FlatCursor::default(),
                    carried: Carried::default(),
                }
            });
        Ok(UniversalReader {
            model,
            container,
            catalog,
            schema,
            order,
            states,
            section: None,
            stream: Vec::new(),
            at: 0,
            values: BlockValues {
                order,
                ..BlockValues::default()
            },
            block_offset: 0,
            block_left: 0,
            record: 0,
            done: false,
            scalars: Vec::new(),
            block_budget: 0,
        })
    }

    /// The container header.
    pub fn header(&self) -> &ContainerHeader {
        self.container.header()
    }

    /// The record plans, for the text form.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.catalog)
    }

    /// The schema used for decoding.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The next record, skipping block boundaries; `Ok(None)` at the end.
    pub fn next_record(&mut self) -> Result<Option<DynRecord>, Error> {
        let mut r = DynRecord::default();
        Ok(self.read_record(&mut r)?.then_some(r))
    }

    /// Reads the next record into `rec`, skipping block boundaries; `Ok(false)` at the end
    /// (`rec` then unchanged). The same records as [`Self::next_record`], but a modelled block's
    /// records reuse `rec`'s name, field vector and byte strings instead of allocating new ones
    /// each: what a reader printing every record of a long trace spends much of its time on.
    pub fn read_record(&mut self, rec: &mut DynRecord) -> Result<bool, Error> {
        loop {
            match self.read_event(rec)? {
                None => return Ok(false),
                Some(Step::Record) => return Ok(true),
                Some(Step::Block { .. }) => {}
            }
        }
    }

    /// The next block start, or the next record read into `rec`; `Ok(None)` at the end. The
    /// same events as [`Self::next_event`], with a modelled block's records reusing `rec` as
    /// [`Self::read_record`] does: for a reader that also wants to see where blocks begin.
    pub fn read_event(&mut self, rec: &mut DynRecord) -> Result<Option<Step>, Error> {
        if self.block_left > 0 && self.model.is_some() && !self.done {
            self.next_modelled_into(rec)?;
            self.block_left -= 1;
            self.record += 1;
            return Ok(Some(Step::Record));
        }
        Ok(match self.next_event()? {
            None => None,
            Some(Event::Record(r)) => {
                *rec = r;
                Some(Step::Record)
            }
            Some(Event::Block {
                index,
                record_count,
            }) => Some(Step::Block {
                index,
                record_count,
            }),
        })
    }

    /// The next block start or record; `Ok(None)` at the end.
    pub fn next_event(&mut self) -> Result<Option<Event>, Error> {
        if self.done {
            return Ok(None);
        }
        if self.block_left == 0 {
            if self.at != self.stream.len() {
                return Err(Error::Corrupt {
                    offset: self.block_offset,
                    message: format!(
                        "the block's record stream has {} bytes after its last record",
                        self.stream.len() - self.at
                    ),
                });
            }
            return match self.container.next_block()? {
                None => {
                    self.done = true;
                    Ok(None)
                }
                Some(block) => {
                    let event = Event::Block {
                        index: block.index,
                        record_count: block.record_count,
                    };
                    self.load(block)?;
                    Ok(Some(event))
                }
            };
        }
        let r = self.decode_record()?;
        self.block_left -= 1;
        self.record += 1;
        Ok(Some(Event::Record(r)))
    }

    fn load(&mut self, block: Block) -> Result<(), Error> {
        self.block_offset = block.offset;
        self.block_left = block.record_count;
        self.stream.clear();
        self.at = 0;
        if self.model.is_some() {
            return self.load_modelled(block);
        }
        self.values.sections.clear();
        self.states.iter_mut().for_each(FieldState::start_block);
        let sections = &mut self.values.sections;
        self.stream = split_block(block, |number, width, bytes| {
            sections.insert(number, (width, bytes));
        })?;
        // Every record holds at least its tag byte (tag.width is 1-8), so a larger count is
        // damage — and would otherwise loop over records made of nothing.
        if self.block_left > self.stream.len() as u64 {
            return Err(Error::Corrupt {
                offset: self.block_offset + 20,
                message: format!(
                    "the block claims {} records but its record stream has only {} bytes",
                    self.block_left,
                    self.stream.len()
                ),
            });
        }
        // Zero-width fields produce values from no bytes; bound how many a block may produce
        // so that a small damaged block cannot keep the reader busy for hours.
        let bytes: usize = self.values.sections.values().map(|(_, b)| b.len()).sum();
        self.block_budget = FIELDS_PER_BYTE
            .saturating_mul(self.stream.len() + bytes)
            .saturating_add(MAX_LEAVES_PER_RECORD);
        Ok(())
    }

    fn fail(&self, path: impl fmt::Display, message: impl Into<String>) -> Error {
        Error::record(
            Some(self.block_offset),
            self.record,
            path.to_string(),
            message,
        )
    }

    fn take(&mut self, n: usize, path: impl fmt::Display) -> Result<&[u8], Error> {
        if self.stream.len() - self.at < n {
            return Err(self.fail(
                path,
                format!(
                    "record stream ends: {n} bytes needed at stream byte {}, {} left",
                    self.at,
                    self.stream.len() - self.at
                ),
            ));
        }
        let s = &self.stream[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn uint(&mut self, width: u8, path: impl fmt::Display) -> Result<u64, Error> {
        let order = self.order;
        let b = self.take(usize::from(width), path)?;
        Ok(read_uint(b, width, order))
    }

    /// Decodes a whole modelled block into flat records.
    fn load_modelled(&mut self, block: Block) -> Result<(), Error> {
        let Some(m) = self.model.as_mut() else {
            return Ok(());
        };
        decode_columns(
            &self.schema,
            &self.catalog,
            &m.streams,
            block,
            self.section,
            &mut m.flat,
            &mut m.carried,
        )?;
        m.cursor = FlatCursor::default();
        Ok(())
    }

    /// The next record of a modelled block.
    fn next_modelled(&mut self) -> Result<DynRecord, Error> {
        let mut r = DynRecord::default();
        self.next_modelled_into(&mut r)?;
        Ok(r)
    }

    /// Reads the next record of a modelled block into `r`.
    fn next_modelled_into(&mut self, r: &mut DynRecord) -> Result<(), Error> {
        let builtin = self.model.as_mut().and_then(|m| {
            m.cursor
                .next_into(&m.flat, &self.catalog, self.section, r)?;
            Some(self.catalog.by_tag(self.section, r.tag)?.builtin)
        });
        let Some(builtin) = builtin else {
            return Err(self.fail("", "modelled block ends early"));
        };
        if builtin == Builtin::Section {
            // The block decoder checked that the section is declared.
            if let Some(Value::Uint(n)) = r.fields.first() {
                self.section = u8::try_from(*n).ok();
            }
        }
        Ok(())
    }

    fn decode_record(&mut self) -> Result<DynRecord, Error> {
        if self.model.is_some() {
            return self.next_modelled();
        }
        let tag = self.uint(self.schema.tag_width, "tag")?;
        let section = self.section;
        let catalog = Arc::clone(&self.catalog);
        match catalog.by_tag(section, tag) {
            None => Err(self.fail(
                "tag",
                format!("tag {tag} names no record in {}", section_name(section)),
            )),
            Some(plan) => self.decode_planned(&catalog, plan, tag),
        }
    }

    fn decode_planned(
        &mut self,
        catalog: &Catalog,
        plan: &RecordPlan,
        tag: u64,
    ) -> Result<DynRecord, Error> {
        let section = self.section;
        let mut fields = Vec::with_capacity(plan.leaves.len());
        if plan.builtin == Builtin::Metadata {
            self.decode_metadata(catalog, &mut fields)?;
        } else {
            let mut scalars = std::mem::take(&mut self.scalars);
            scalars.clear();
            let start = MAX_LEAVES_PER_RECORD.min(self.block_budget);
            let mut budget = start;
            let leaves = &plan.leaves;
            let r = self.decode_leaves(plan, leaves, &mut fields, &mut scalars, &mut budget);
            self.block_budget -= start - budget;
            self.scalars = scalars;
            r?;
        }
        if plan.builtin == Builtin::Section {
            let number = match fields.first() {
                Some(Value::Uint(n)) => *n,
                _ => return Err(self.fail("section", "section record has no number")),
            };
            match u8::try_from(number)
                .ok()
                .filter(|&n| self.schema.section(n).is_some())
            {
                Some(n) => self.section = Some(n),
                None => {
                    return Err(self.fail(
                        "section.number",
                        format!("section {number} is not declared in the DTD"),
                    ))
                }
            }
        }
        Ok(DynRecord {
            section,
            name: plan.name.clone(),
            tag,
            fields,
        })
    }

    fn decode_metadata(&mut self, catalog: &Catalog, fields: &mut Vec<Value>) -> Result<(), Error> {
        let target = self.uint(self.schema.tag_width, "metadata.record")?;
        let position = self.uint(1, "metadata.field")?;
        let property = self.uint(1, "metadata.property")? as u8;
        let count = Change::value_count(property).ok_or_else(|| {
            self.fail(
                "metadata.property",
                format!("unknown metadata property code {property}"),
            )
        })?;
        let mut values = Vec::with_capacity(count);
        for _ in 0..count {
            values.push(self.uint(8, "metadata.value")?);
        }
        let change =
            Change::from_parts(property, &values).map_err(|m| self.fail("metadata.value", m))?;
        let slot = metadata_target(catalog, self.section, target, position as u16)
            .map_err(|m| self.fail("metadata", m))?;
        self.states[slot].apply(change);
        fields.extend([target, position, u64::from(property)].map(Value::Uint));
        fields.extend(values.into_iter().map(Value::Uint));
        Ok(())
    }

    fn decode_leaves(
        &mut self,
        plan: &RecordPlan,
        leaves: &[Leaf],
        out: &mut Vec<Value>,
        scalars: &mut Vec<(u16, u64)>,
        budget: &mut usize,
    ) -> Result<(), Error> {
        for leaf in leaves {
            if *budget == 0 {
                return Err(self.fail(
                    &plan.name,
                    format!(
                        "too many fields: at most {MAX_LEAVES_PER_RECORD} per record and \
                         {FIELDS_PER_BYTE} per byte of the block are decoded"
                    ),
                ));
            }
            *budget -= 1;
            // Formatted only if an error needs it: this loop runs for every field of every record.
            let path = FieldPath(&plan.name, leaf.name());
            match leaf {
                Leaf::Scalar { position, slot, .. } => {
                    let w = self.states[*slot].width();
                    let stored = self.uint(w, path)?;
                    let value = self.states[*slot]
                        .decode(stored, &self.values)
                        .map_err(|m| {
                            Error::record(Some(self.block_offset), self.record, path.to_string(), m)
                        })?;
                    scalars.push((*position, value));
                    out.push(Value::Uint(value));
                }
                Leaf::Bytes {
                    length_position, ..
                } => {
                    let len = lookup(scalars, *length_position)
                        .ok_or_else(|| self.fail(path, "length field has no value"))?;
                    let left = (self.stream.len() - self.at) as u64;
                    if len > left {
                        return Err(self.fail(
                            path,
                            format!("byte string of {len} bytes, but only {left} bytes remain"),
                        ));
                    }
                    let b = self.take(len as usize, path)?.to_vec();
                    out.push(Value::Bytes(b));
                }
                Leaf::Repeated {
                    count_position,
                    element,
                    ..
                } => {
                    let count = lookup(scalars, *count_position)
                        .ok_or_else(|| self.fail(path, "count field has no value"))?;
                    if count > *budget as u64 {
                        return Err(self.fail(path, format!("repeat count {count} is too large")));
                    }
                    let mut items = Vec::new();
                    for _ in 0..count {
                        let mut item = Vec::with_capacity(element.len());
                        self.decode_leaves(plan, element, &mut item, scalars, budget)?;
                        items.push(item);
                    }
                    out.push(Value::List(items));
                }
            }
        }
        Ok(())
    }
}

/// Most recent value of the scalar at `position` in the record being coded.
pub(crate) fn lookup(scalars: &[(u16, u64)], position: u16) -> Option<u64> {
    scalars
        .iter()
        .rev()
        .find(|(p, _)| *p == position)
        .map(|(_, v)| *v)
}

/// Resolves a metadata record's (record tag, field position) in `section` to a state slot.
pub(crate) fn metadata_target(
    catalog: &Catalog,
    section: Option<u8>,
    tag: u64,
    position: u16,
) -> Result<usize, String> {
    let plan = catalog.by_tag(section, tag).ok_or_else(|| {
        format!(
            "names record tag {tag}, unknown in {}",
            section_name(section)
        )
    })?;
    match plan.scalar(position) {
        Some(Leaf::Scalar { slot, .. }) => Ok(*slot),
        _ => Err(format!(
            "record {} has no scalar field at position {position}",
            plan.name
        )),
    }
}

pub(crate) fn section_name(section: Option<u8>) -> String {
    match section {
        None => "the global section".to_string(),
        Some(n) => format!("section {n}"),
    }
}

/// `record.field`, for error messages.
#[derive(Clone, Copy)]
struct FieldPath<'a>(&'a str, &'a str);

impl fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}
