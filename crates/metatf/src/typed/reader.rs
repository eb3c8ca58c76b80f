//! The typed reader: decodes a container's records into a format's Rust types.

use std::collections::BTreeMap;
use std::io::Read;
use std::marker::PhantomData;

use super::codec::Decoder;
use super::plan::{wire_shape, FormatPlan, Kind, COMMENT, METADATA, SECTION};
use super::{Format, TypedEvent};
use crate::container::{Block, ContainerHeader, ContainerReader};
use crate::error::Error;
use crate::field::bits::read_uint;
use crate::field::{Change, FieldState, MAX_WIDTH};
use crate::universal::values::BlockValues as ReadValues;
use crate::universal::RECORD_SECTION;

/// Reads the records of a container as values of format `T`, one block in memory at a time.
///
/// As an iterator it yields the format's records and applies the built-in records (comments are
/// skipped); [`Self::next_event`] returns the built-ins too.
pub struct TypedReader<T: Format, R: Read> {
    plan: &'static FormatPlan,
    container: ContainerReader<R>,
    states: Vec<Option<Vec<FieldState>>>,
    scope: usize,
    stream: Vec<u8>,
    at: usize,
    values: ReadValues,
    block_offset: u64,
    block_left: u64,
    record: u64,
    done: bool,
    _format: PhantomData<fn() -> T>,
}

impl<T: Format, R: Read> TypedReader<T, R> {
    /// Opens a container; its embedded DTD must describe the same bytes as `T`'s DTD (names may
    /// differ, layouts may not).
    pub fn new(r: R) -> Result<Self, Error> {
        let plan = T::plan()?;
        let container = ContainerReader::new(r)?;
        let embedded = metatf_dtd::parse_schema(&container.header().dtd, "<embedded DTD>")
            .map_err(|d| Error::Schema {
                message: d.to_string(),
            })?;
        if wire_shape(&embedded) != wire_shape(&plan.schema) {
            return Err(Error::Schema {
                message: format!(
                    "the trace's DTD does not describe the records of format {}",
                    plan.format()
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
        let mut states = vec![None; plan.scopes.len()];
        states[0] = Some(plan.fresh_states());
        Ok(TypedReader {
            plan,
            container,
            states,
            scope: 0,
            stream: Vec::new(),
            at: 0,
            values: ReadValues {
                sections: BTreeMap::new(),
                order,
            },
            block_offset: 0,
            block_left: 0,
            record: 0,
            done: false,
            _format: PhantomData,
        })
    }

    /// The container header.
    pub fn header(&self) -> &ContainerHeader {
        self.container.header()
    }

    /// The next record of the format, applying section and metadata records and skipping
    /// comments; `Ok(None)` at the end.
    pub fn next_record(&mut self) -> Result<Option<T>, Error> {
        loop {
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
            if self.done {
                return Ok(None);
            }
            if self.at != self.stream.len() {
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
                    return Ok(None);
                }
                Some(block) => self.load(block)?,
            }
        }
        let event = self.decode()?;
        self.block_left -= 1;
        self.record += 1;
        Ok(Some(event))
    }

    fn load(&mut self, block: Block) -> Result<(), Error> {
        self.block_offset = block.offset;
        self.block_left = block.record_count;
        self.stream.clear();
        self.at = 0;
        self.values.sections.clear();
        for states in self.states.iter_mut().flatten() {
            for s in states {
                s.start_block();
            }
        }
        for s in block.sections {
            if s.number == RECORD_SECTION {
                self.stream = s.bytes;
            } else if s.element_width == 0 || s.element_width > MAX_WIDTH {
                return Err(Error::Corrupt {
                    offset: block.offset,
                    message: format!(
                        "value section {} has element width {}; 1-8 is required",
                        s.number, s.element_width
                    ),
                });
            } else {
                self.values
                    .sections
                    .insert(s.number, (s.element_width, s.bytes));
            }
        }
        Ok(())
    }

    fn fail(&self, path: &str, message: impl Into<String>) -> Error {
        Error::record(Some(self.block_offset), self.record, path, message)
    }

    fn uint(&mut self, width: u8, path: &str) -> Result<u64, Error> {
        let n = usize::from(width);
        let left = self.stream.len() - self.at;
        if left < n {
            return Err(self.fail(
                path,
                format!(
                    "record stream ends: {n} bytes needed at stream byte {}, {left} left",
                    self.at
                ),
            ));
        }
        let v = read_uint(&self.stream[self.at..], width, self.values.order);
        self.at += n;
        Ok(v)
    }

    fn decoder(&mut self, slot: usize) -> Result<Decoder<'_>, Error> {
        let s = &self.plan.slots[slot];
        let Some(states) = self.states[self.scope].as_mut() else {
            return Err(Error::invalid(
                "field states of the current section are missing",
            ));
        };
        Ok(Decoder {
            states: &mut states[s.offset..s.offset + s.positions.len()],
            stream: &self.stream,
            at: &mut self.at,
            values: &self.values,
            order: self.values.order,
            record: self.record,
            block_offset: self.block_offset,
            name: &s.name,
        })
    }

    fn decode(&mut self) -> Result<TypedEvent<T>, Error> {
        let plan = self.plan;
        let tag = self.uint(plan.schema.tag_width, "tag")?;
        let kind = plan.scopes[self.scope].kind(tag).ok_or_else(|| {
            let place = match plan.scopes[self.scope].section {
                None => "the global section".to_string(),
                Some(n) => format!("section {n}"),
            };
            self.fail("tag", format!("tag {tag} names no record in {place}"))
        })?;
        Ok(match kind {
            Kind::Variant(i) => TypedEvent::Record(T::decode(i, &mut self.decoder(i)?)?),
            Kind::Comment => {
                let data = self.decoder(plan.variants + COMMENT)?.vfield(0, "data")?;
                TypedEvent::Comment(data)
            }
            Kind::Section => {
                let n: u64 = self.decoder(plan.variants + SECTION)?.scalar(0, "number")?;
                let scope = u8::try_from(n)
                    .ok()
                    .and_then(|n| plan.scope_index(Some(n)))
                    .ok_or_else(|| {
                        self.fail(
                            "section.number",
                            format!("section {n} is not declared in the DTD"),
                        )
                    })?;
                self.scope = scope;
                if self.states[scope].is_none() {
                    self.states[scope] = Some(plan.fresh_states());
                }
                TypedEvent::Section(n as u8)
            }
            Kind::Metadata => self.metadata()?,
        })
    }

    fn metadata(&mut self) -> Result<TypedEvent<T>, Error> {
        let plan = self.plan;
        let record = self.uint(plan.schema.tag_width, "metadata.record")?;
        let position = self.uint(1, "metadata.field")? as u16;
        let property = self.uint(1, "metadata.property")? as u8;
        let count = Change::value_count(property).ok_or_else(|| {
            self.fail(
                "metadata.property",
                format!("unknown metadata property code {property}"),
            )
        })?;
        let mut values = [0u64; 2];
        for v in values.iter_mut().take(count) {
            *v = self.uint(8, "metadata.value")?;
        }
        let change = Change::from_parts(property, &values[..count])
            .map_err(|m| self.fail("metadata.value", m))?;
        let slot = match plan.scopes[self.scope].kind(record) {
            Some(Kind::Variant(i)) => Some(i),
            Some(Kind::Comment) => Some(plan.variants + COMMENT),
            Some(Kind::Section) => Some(plan.variants + SECTION),
            Some(Kind::Metadata) => Some(plan.variants + METADATA),
            None => None,
        };
        let target = slot
            .map(|i| &plan.slots[i])
            .ok_or_else(|| self.fail("metadata", format!("names unknown record tag {record}")))?;
        let ordinal = target.ordinal(position).ok_or_else(|| {
            self.fail(
                "metadata",
                format!(
                    "record {} has no scalar field at position {position}",
                    target.name
                ),
            )
        })?;
        if let Some(states) = self.states[self.scope].as_mut() {
            states[target.offset + ordinal].apply(change);
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
