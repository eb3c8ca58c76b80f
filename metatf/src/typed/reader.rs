//! The typed reader: decodes a container's records into a format's Rust types.

use std::io::Read;
use std::marker::PhantomData;

use super::codec::{window_value, Decoder};
use super::compat;
use super::plan::{FormatPlan, Kind, Scope, ScopeStates, COMMENT, METADATA, SECTION};
use super::values::ReadValues;
use super::{Format, TypedEvent};
use crate::container::{Block, ByteOrder, ContainerHeader, ContainerReader};
use crate::error::Error;
use crate::field::bits::read_uint;
use crate::field::Change;
use crate::model::flat::FlatBlock;
use crate::model::{Carried, Streams, ENGINE_MODEL, PROPERTY_ENGINE};
use crate::universal::modelled::decode_columns;
use crate::universal::plan::Catalog;
use crate::universal::values::split_block;

/// Reads the records of a container as values of format `T`, one block in memory at a time.
///
/// As an iterator it yields the format's records and applies the built-in records (comments are
/// skipped); [`Self::next_event`] returns the built-ins too.
///
/// It reads traces in the paper's record layout and traces coded by the model engine (the
/// header property `engine = model`), whichever writer wrote them.
pub struct TypedReader<T: Format, R: Read> {
    plan: &'static FormatPlan,
    container: ContainerReader<R>,
    /// Field states of the other scopes (index into `plan.scopes`), created on first use;
    /// the current scope's are in `current`.
    states: Vec<Option<ScopeStates>>,
    current: ScopeStates,
    scope: usize,
    scope_ref: &'static Scope,
    /// The current section (`None` before any section record).
    section: Option<u8>,
    /// Sections the trace's DTD declares and the format's does not: their states follow the
    /// plan's scopes in `states`, in this order.
    foreign: Vec<u8>,
    /// Per slot: (index of its first state, its name), looked up once per record.
    heads: Vec<(usize, &'static str)>,
    stream: Vec<u8>,
    at: usize,
    values: ReadValues,
    block_offset: u64,
    block_left: u64,
    record: u64,
    done: bool,
    /// Set when the header names the model engine: each block is decoded whole into columns,
    /// which records are then read from (`at` counts words, `byte` bytes).
    model: Option<ModelReader>,
    byte: usize,
    _format: PhantomData<fn() -> T>,
}

/// What a typed reader needs to decode the model engine's blocks: the universal plans of the
/// trace's own DTD (the one its blocks were coded with) and the decoded block's columns.
struct ModelReader {
    schema: metatf_dtd::Schema,
    catalog: Catalog,
    streams: Streams,
    flat: FlatBlock,
    /// The object lists the previous block hands on.
    carried: Carried,
}

impl<T: Format, R: Read> TypedReader<T, R> {
    /// Opens a container whose embedded DTD codes the format's records as `T`'s DTD does: the
    /// records `T` reads (and the built-ins) must have the same tags, sections and field layouts;
    /// names may differ, and the DTD may hold more sections and records. Otherwise the error
    /// names the first record or field that differs. Records of sections or types `T` does not
    /// know are an error when met.
    pub fn new(r: R) -> Result<Self, Error> {
        let plan = T::plan()?;
        let container = ContainerReader::new(r)?;
        let embedded = metatf_dtd::parse_schema(&container.header().dtd, "<embedded DTD>")
            .map_err(|d| Error::Schema {
                message: d.to_string(),
            })?;
        compat::check(plan, &embedded).map_err(|difference| Error::Schema {
            message: format!(
                "the trace's DTD does not describe the records of format {} as its own DTD \
                 does: {difference}",
                plan.format()
            ),
        })?;
        let foreign: Vec<u8> = embedded
            .sections
            .iter()
            .map(|s| s.number)
            .filter(|&n| plan.scope_index(Some(n)).is_none())
            .collect();
        let order = container
            .header()
            .byte_order()
            .map_err(|e| Error::Corrupt {
                offset: 12,
                message: e.to_string(),
            })?;
        let scope_ref = plan
            .scopes
            .first()
            .ok_or_else(|| Error::invalid("the format has no section scope"))?;
        let model = if container.header().property(PROPERTY_ENGINE) == Some(ENGINE_MODEL) {
            let catalog = Catalog::new(&embedded)?;
            Some(ModelReader {
                streams: Streams::new(&catalog),
                catalog,
                schema: embedded,
                flat: FlatBlock::default(),
                carried: Carried::default(),
            })
        } else {
            None
        };
        Ok(TypedReader {
            plan,
            container,
            states: vec![None; plan.scopes.len() + foreign.len()],
            current: fresh_states(plan, order),
            heads: plan
                .slots
                .iter()
                .map(|s| (s.offset, s.name.as_str()))
                .collect(),
            scope: 0,
            scope_ref,
            section: None,
            foreign,
            stream: Vec::new(),
            at: 0,
            values: ReadValues::new(order),
            block_offset: 0,
            block_left: 0,
            record: 0,
            done: false,
            model,
            byte: 0,
            _format: PhantomData,
        })
    }

    /// The container header.
    pub fn header(&self) -> &ContainerHeader {
        self.container.header()
    }

    /// The next record of the format, applying section and metadata records and skipping
    /// comments; `Ok(None)` at the end.
    #[inline(always)]
    pub fn next_record(&mut self) -> Result<Option<T>, Error> {
        loop {
            if self.block_left == 0 {
                if !self.next_block()? {
                    return Ok(None);
                }
                continue;
            }
            // A record of the format is decoded here directly; anything else goes through
            // `next_event` from the same position.
            let start = self.at;
            let tag = self.uint(self.plan.schema.tag_width, "tag")?;
            if let Some(Kind::Variant(i)) = self.scope_ref.kind(tag) {
                let r = self.decode_with(i, |d| T::decode(i, d))?;
                self.block_left -= 1;
                self.record += 1;
                return Ok(Some(r));
            }
            self.at = start;
            match self.next_event()? {
                None => return Ok(None),
                Some(TypedEvent::Record(r)) => return Ok(Some(r)),
                Some(_) => {}
            }
        }
    }

    /// The next record or built-in record; `Ok(None)` at the end.
    pub fn next_event(&mut self) -> Result<Option<TypedEvent<T>>, Error> {
        while self.block_left == 0 {
            if !self.next_block()? {
                return Ok(None);
            }
        }
        let event = self.decode()?;
        self.block_left -= 1;
        self.record += 1;
        Ok(Some(event))
    }

    /// Loads the next block after checking that the current one was read to its end;
    /// `false` at the end of the container.
    #[cold]
    fn next_block(&mut self) -> Result<bool, Error> {
        if self.done {
            return Ok(false);
        }
        if let Some(m) = &self.model {
            if self.at != m.flat.words.len() || self.byte != m.flat.bytes.len() {
                return Err(Error::Corrupt {
                    offset: self.block_offset,
                    message: "the modelled block holds values after its last record".into(),
                });
            }
        } else if self.at != self.stream.len() {
            return Err(Error::Corrupt {
                offset: self.block_offset,
                message: format!(
                    "the block's record stream has {} bytes after its last record",
                    self.stream.len() - self.at
                ),
            });
        }
        match self.container.next_block()? {
            None => {
                self.done = true;
                Ok(false)
            }
            Some(block) => {
                self.load(block)?;
                Ok(true)
            }
        }
    }

    fn load(&mut self, block: Block) -> Result<(), Error> {
        self.block_offset = block.offset;
        self.block_left = block.record_count;
        self.stream.clear();
        self.at = 0;
        self.byte = 0;
        if let Some(m) = self.model.as_mut() {
            return decode_columns(
                &m.schema,
                &m.catalog,
                &m.streams,
                block,
                self.section,
                &mut m.flat,
                &mut m.carried,
            );
        }
        self.values.clear();
        for states in self.states.iter_mut().flatten().chain([&mut self.current]) {
            for s in &mut states.fields {
                s.start_block();
            }
        }
        let values = &mut self.values;
        self.stream = split_block(block, |number, width, bytes| {
            values.insert(number, width, &bytes);
        })?;
        Ok(())
    }

    fn fail(&self, path: &str, message: impl Into<String>) -> Error {
        Error::record(Some(self.block_offset), self.record, path, message)
    }

    #[inline(always)]
    fn uint(&mut self, width: u8, path: &str) -> Result<u64, Error> {
        if let Some(m) = &self.model {
            // The model engine's columns hold every tag and value as a word.
            let Some(&v) = m.flat.words.get(self.at) else {
                return Err(self.fail(path, "the block's columns end early"));
            };
            self.at += 1;
            return Ok(v);
        }
        let n = usize::from(width);
        let at = self.at;
        let v = match self.stream.get(at..at + 8) {
            Some(window) => {
                let mut word = [0u8; 8];
                word.copy_from_slice(window);
                window_value(word, width, self.values.order)
            }
            None => match self.stream.get(at..at + n) {
                Some(bytes) if width <= 8 => read_uint(bytes, width, self.values.order),
                _ => return Err(self.short(n, path)),
            },
        };
        self.at = at + n;
        Ok(v)
    }

    #[cold]
    #[inline(never)]
    fn short(&self, n: usize, path: &str) -> Error {
        let left = self.stream.len().saturating_sub(self.at);
        self.fail(
            path,
            format!(
                "record stream ends: {n} bytes needed at stream byte {}, {left} left",
                self.at
            ),
        )
    }

    /// Runs `f` with a decoder over the fields of record type `slot`, at the stream position,
    /// and moves the position past what `f` read.
    #[inline(always)]
    fn decode_with<V>(
        &mut self,
        slot: usize,
        f: impl FnOnce(&mut Decoder<'_>) -> Result<V, Error>,
    ) -> Result<V, Error> {
        let Some(&(offset, name)) = self.heads.get(slot) else {
            return Err(self.fail("", format!("record type {slot} does not exist")));
        };
        let states = &mut self.current;
        let flat = self.model.as_ref().map(|m| &m.flat);
        // Fast flags are all false for a little-endian trace (see `fresh_states`); the fast
        // paths read the record layout, not the model engine's columns.
        let fast = flat.is_none() && states.fast.get(slot) == Some(&true);
        // From the slot's first state on: generated code indexes by ordinal, and the plan
        // checked that the record has as many scalars as the generated code decodes.
        let Some(states) = states.fields.get_mut(offset..) else {
            return Err(Error::invalid("field states of the record are missing"));
        };
        let mut d = Decoder {
            fast,
            states,
            stream: &self.stream,
            pos: self.at,
            values: &self.values,
            order: self.values.order,
            record: self.record,
            block_offset: self.block_offset,
            name,
            flat,
            byte: self.byte,
        };
        let v = f(&mut d)?;
        self.at = d.pos;
        self.byte = d.byte;
        Ok(v)
    }

    fn decode(&mut self) -> Result<TypedEvent<T>, Error> {
        let plan = self.plan;
        let tag = self.uint(plan.schema.tag_width, "tag")?;
        let kind = self.scope_ref.kind(tag).ok_or_else(|| {
            let place = match self.section {
                None => "the global section".to_string(),
                Some(n) => format!("section {n}"),
            };
            self.fail("tag", format!("tag {tag} names no record in {place}"))
        })?;
        Ok(match kind {
            Kind::Variant(i) => TypedEvent::Record(self.decode_with(i, |d| T::decode(i, d))?),
            Kind::Comment => {
                let data = self.decode_with(plan.variants + COMMENT, |d| d.vfield(0, "data"))?;
                TypedEvent::Comment(data)
            }
            Kind::Section => {
                let n: u64 =
                    self.decode_with(plan.variants + SECTION, |d| d.scalar(0, "number"))?;
                let scope = u8::try_from(n)
                    .ok()
                    .and_then(|n| self.scope_of(n))
                    .ok_or_else(|| {
                        self.fail(
                            "section.number",
                            format!("section {n} is not declared in the DTD"),
                        )
                    })?;
                self.switch_scope(scope);
                self.section = Some(n as u8);
                TypedEvent::Section(n as u8)
            }
            Kind::Metadata => self.metadata()?,
        })
    }

    /// The index in `states` of section `n`: one of the plan's scopes, or a section only the
    /// trace's DTD declares.
    fn scope_of(&self, n: u8) -> Option<usize> {
        self.plan.scope_index(Some(n)).or_else(|| {
            let k = self.foreign.iter().position(|&f| f == n)?;
            Some(self.plan.scopes.len() + k)
        })
    }

    /// Makes `scope` current, keeping the field states of the one it replaces.
    fn switch_scope(&mut self, scope: usize) {
        if scope == self.scope {
            return;
        }
        let plan = self.plan;
        let incoming = self.states[scope]
            .take()
            .unwrap_or_else(|| fresh_states(plan, self.values.order));
        let outgoing = std::mem::replace(&mut self.current, incoming);
        self.states[self.scope] = Some(outgoing);
        self.scope = scope;
        self.scope_ref = plan.scopes.get(scope).unwrap_or(&plan.foreign);
    }

    fn metadata(&mut self) -> Result<TypedEvent<T>, Error> {
        let plan = self.plan;
        // The model engine's columns give a metadata record's number of fields first.
        let fields = match self.model {
            Some(_) => Some(self.uint(8, "metadata")?),
            None => None,
        };
        let record = self.uint(plan.schema.tag_width, "metadata.record")?;
        // One byte each in the record layout; a word of the model engine's columns may hold more.
        let position = self.uint(1, "metadata.field")?;
        let position = u8::try_from(position).map_err(|_| {
            self.fail(
                "metadata.field",
                format!("field position {position} exceeds 255"),
            )
        })?;
        let position = u16::from(position);
        let property = self.uint(1, "metadata.property")?;
        let property = u8::try_from(property).map_err(|_| {
            self.fail(
                "metadata.property",
                format!("property {property} exceeds 255"),
            )
        })?;
        let count = Change::value_count(property).ok_or_else(|| {
            self.fail(
                "metadata.property",
                format!("unknown metadata property code {property}"),
            )
        })?;
        if let Some(n) = fields.filter(|&n| n != 3 + count as u64) {
            return Err(self.fail(
                "metadata",
                format!("{n} fields, but property {property} takes {}", 3 + count),
            ));
        }
        let mut values = [0u64; 2];
        for v in values.iter_mut().take(count) {
            *v = self.uint(8, "metadata.value")?;
        }
        let change = Change::from_parts(property, &values[..count])
            .map_err(|m| self.fail("metadata.value", m))?;
        let slot = match self.scope_ref.kind(record) {
            Some(Kind::Variant(i)) => Some(i),
            Some(Kind::Comment) => Some(plan.variants + COMMENT),
            Some(Kind::Section) => Some(plan.variants + SECTION),
            Some(Kind::Metadata) => Some(plan.variants + METADATA),
            None => None,
        };
        let slot = slot
            .ok_or_else(|| self.fail("metadata", format!("names unknown record tag {record}")))?;
        let target = &plan.slots[slot];
        let ordinal = target.ordinal(position).ok_or_else(|| {
            self.fail(
                "metadata",
                format!(
                    "record {} has no scalar field at position {position}",
                    target.name
                ),
            )
        })?;
        self.current.fields[target.offset + ordinal].apply(change);
        plan.refresh_fast(&mut self.current, slot);
        if self.values.order != ByteOrder::Big {
            // The generated fast paths read big-endian only.
            self.current.fast.fill(false);
        }
        Ok(TypedEvent::Metadata {
            record,
            position,
            change,
        })
    }
}

impl<T: Format, R: Read> Iterator for TypedReader<T, R> {
    type Item = Result<T, Error>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self.next_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                // After an error the reader's position is unknown: stop.
                self.done = true;
                self.block_left = 0;
                self.stream.clear();
                self.at = 0;
                Some(Err(e))
            }
        }
    }
}

/// A scope's initial states; the fast paths, which read big-endian only, are off for a
/// little-endian trace, so that the per-record check is one flag.
fn fresh_states(plan: &FormatPlan, order: ByteOrder) -> ScopeStates {
    let mut states = plan.fresh_states();
    if order != ByteOrder::Big {
        states.fast.fill(false);
    }
    states
}
