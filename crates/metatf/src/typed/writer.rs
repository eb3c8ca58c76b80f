//! The typed writer: the universal writer's algorithm with compile-time field positions.

use std::io::Write;
use std::marker::PhantomData;

use metatf_dtd::Interpretation;

use super::codec::{put_uint, Encoder, Stop};
use super::plan::{FormatPlan, Kind, COMMENT, METADATA, SECTION};
use super::{Format, TypedEvent};
use crate::container::{ByteOrder, Codec, ContainerHeader, ContainerWriter, SectionData};
use crate::error::Error;
use crate::field::bits::{unsigned_width, write_uint};
use crate::field::{Change, FieldState, Misfit};
use crate::universal::values::ValueBuilder as WriteValues;
use crate::universal::{DEFAULT_BLOCK_RECORDS, RECORD_SECTION};

/// Writes records of format `T` into a container, in blocks.
///
/// Before the first record of a format whose records live in a DTD section it writes the
/// `section` record; when a value does not fit a field's current state it writes the metadata
/// record that makes it fit, exactly as [`crate::UniversalWriter`] does.
pub struct TypedWriter<T: Format, W: Write> {
    plan: &'static FormatPlan,
    container: ContainerWriter<W>,
    order: ByteOrder,
    codec: Codec,
    level: i32,
    /// Field states per scope (index into `plan.scopes`), created on first use.
    states: Vec<Option<Vec<FieldState>>>,
    scope: usize,
    stream: Vec<u8>,
    values: WriteValues,
    block_records: u64,
    records_per_block: u64,
    record: u64,
    /// States a failed attempt must restore: only those whose encoding changes them.
    scratch: Vec<(usize, FieldState)>,
    _format: PhantomData<fn(&T)>,
}

impl<T: Format, W: Write> TypedWriter<T, W> {
    /// Writes a container header carrying the format's DTD (big-endian trace data).
    pub fn new(out: W, codec: Codec, level: i32) -> Result<Self, Error> {
        Self::with_properties(out, Vec::new(), codec, level)
    }

    /// Like [`Self::new`], with header properties (`byteorder` = `little` selects little-endian).
    pub fn with_properties(
        out: W,
        properties: Vec<(String, String)>,
        codec: Codec,
        level: i32,
    ) -> Result<Self, Error> {
        let plan = T::plan()?;
        let header = ContainerHeader {
            dtd: plan.dtd().to_string(),
            format: plan.format().to_string(),
            properties,
        };
        let order = header.byte_order()?;
        let container = ContainerWriter::new(out, &header)?;
        let mut states = vec![None; plan.scopes.len()];
        states[0] = Some(plan.fresh_states());
        Ok(TypedWriter {
            plan,
            container,
            order,
            codec,
            level,
            states,
            scope: 0,
            stream: Vec::new(),
            values: WriteValues::default(),
            block_records: 0,
            records_per_block: DEFAULT_BLOCK_RECORDS,
            record: 0,
            scratch: Vec::new(),
            _format: PhantomData,
        })
    }

    /// Starts a new block automatically after `n` records (0: only on [`Self::end_block`]).
    pub fn set_block_records(&mut self, n: u64) {
        self.records_per_block = n;
    }

    /// Records written so far, including the section and metadata records the writer added.
    pub fn records_written(&self) -> u64 {
        self.record
    }

    /// Writes one record, after the section record and any metadata records it needs.
    pub fn write(&mut self, record: &T) -> Result<(), Error> {
        self.maybe_end_block()?;
        let current = self.plan.scopes[self.scope].section;
        let wanted = self.plan.records_section;
        if let Some(n) = wanted.filter(|&n| current != Some(n)) {
            self.section(n)?;
        }
        self.write_slot(record.variant(), |e| record.encode(e))
    }

    /// Writes a comment record.
    pub fn write_comment(&mut self, data: &[u8]) -> Result<(), Error> {
        self.maybe_end_block()?;
        self.expect_kind(COMMENT, Kind::Comment)?;
        self.write_slot(self.plan.variants + COMMENT, |e| e.vfield(0, data))
    }

    /// Writes a section record, making `number` the current section.
    pub fn write_section(&mut self, number: u8) -> Result<(), Error> {
        self.maybe_end_block()?;
        self.section(number)
    }

    /// Writes a metadata record changing the field at `position` of the record tagged `record`.
    pub fn write_metadata(
        &mut self,
        record: u64,
        position: u16,
        change: Change,
    ) -> Result<(), Error> {
        self.maybe_end_block()?;
        self.metadata(record, position, change)
    }

    /// Writes any event a [`super::TypedReader`] returns, so a trace can be copied losslessly.
    pub fn write_event(&mut self, event: &TypedEvent<T>) -> Result<(), Error> {
        match event {
            TypedEvent::Record(r) => self.write(r),
            TypedEvent::Comment(c) => self.write_comment(c),
            TypedEvent::Section(n) => self.write_section(*n),
            TypedEvent::Metadata {
                record,
                position,
                change,
            } => self.write_metadata(*record, *position, *change),
        }
    }

    /// Ends the current block (writing it even when it holds no records).
    pub fn end_block(&mut self) -> Result<(), Error> {
        let values = self.values.take_sections(self.order);
        let mut sections = Vec::with_capacity(values.len() + 1);
        if !self.stream.is_empty() {
            sections.push(SectionData {
                number: RECORD_SECTION,
                element_width: 0,
                codec: self.codec,
                level: self.level,
                bytes: &self.stream,
            });
        }
        for (number, width, bytes) in &values {
            sections.push(SectionData {
                number: *number,
                element_width: *width,
                codec: self.codec,
                level: self.level,
                bytes,
            });
        }
        self.container.write_block(self.block_records, &sections)?;
        self.stream.clear();
        self.block_records = 0;
        for states in self.states.iter_mut().flatten() {
            for s in states {
                s.start_block();
            }
        }
        Ok(())
    }

    /// Writes the last block (if it holds records), the index and the trailer.
    pub fn finish(mut self) -> Result<W, Error> {
        if self.block_records > 0 || !self.values.is_empty() {
            self.end_block()?;
        }
        self.container.finish()
    }

    fn maybe_end_block(&mut self) -> Result<(), Error> {
        if self.records_per_block != 0 && self.block_records >= self.records_per_block {
            self.end_block()?;
        }
        Ok(())
    }

    fn fail(&self, path: &str, message: impl Into<String>) -> Error {
        Error::record(None, self.record, path, message)
    }

    /// Checks that the built-in `which` is not shadowed in the current section.
    fn expect_kind(&self, which: usize, kind: Kind) -> Result<(), Error> {
        let slot = self.plan.builtin(which);
        if self.plan.scopes[self.scope].kind(slot.tag) == Some(kind) {
            Ok(())
        } else {
            Err(self.fail(
                &slot.name,
                format!(
                    "tag {} is another record in the current section; {} cannot be written",
                    slot.tag, slot.name
                ),
            ))
        }
    }

    fn section(&mut self, number: u8) -> Result<(), Error> {
        let Some(scope) = self.plan.scope_index(Some(number)) else {
            return Err(self.fail(
                "section.number",
                format!("section {number} is not declared in the DTD"),
            ));
        };
        self.expect_kind(SECTION, Kind::Section)?;
        self.write_slot(self.plan.variants + SECTION, |e| e.scalar(0, number))?;
        self.scope = scope;
        if self.states[scope].is_none() {
            self.states[scope] = Some(self.plan.fresh_states());
        }
        Ok(())
    }

    fn count_record(&mut self) {
        self.record += 1;
        self.block_records += 1;
    }

    fn write_slot<F>(&mut self, slot: usize, mut encode: F) -> Result<(), Error>
    where
        F: FnMut(&mut Encoder<'_>) -> Result<(), Stop>,
    {
        let plan = self.plan;
        let Some(s) = plan.slots.get(slot) else {
            return Err(self.fail("", format!("record type {slot} does not exist")));
        };
        if unsigned_width(s.tag) > plan.schema.tag_width {
            return Err(self.fail(&s.name, format!("tag {} does not fit tag.width", s.tag)));
        }
        let range = s.offset..s.offset + s.positions.len();
        // Each retry follows a metadata record that widened a field or switched it to `none`.
        let mut retries = 10 * (s.positions.len() + 1);
        loop {
            let mark = self.stream.len();
            let checkpoint = self.values.checkpoint();
            let Some(states) = self.states[self.scope].as_mut() else {
                return Err(Error::invalid(
                    "field states of the current section are missing",
                ));
            };
            let states = &mut states[range.clone()];
            self.scratch.clear();
            for (i, st) in states.iter().enumerate() {
                // `encode` changes only the previous value (delta, stride) and the cursor
                // (sectionStride); other states need no copy.
                if matches!(
                    st.interpretation(),
                    Interpretation::Delta(_)
                        | Interpretation::Stride { .. }
                        | Interpretation::SectionStride { .. }
                ) {
                    self.scratch.push((i, *st));
                }
            }
            put_uint(&mut self.stream, s.tag, plan.schema.tag_width, self.order);
            let mut e = Encoder {
                states,
                out: &mut self.stream,
                values: &mut self.values,
                order: self.order,
                record: self.record,
                name: &s.name,
            };
            let outcome = encode(&mut e);
            let stop = match outcome {
                Ok(()) => {
                    self.values.commit();
                    break;
                }
                Err(stop) => stop,
            };
            self.stream.truncate(mark);
            self.values.rollback(checkpoint);
            if let Some(states) = self.states[self.scope].as_mut() {
                for &(i, st) in &self.scratch {
                    states[s.offset + i] = st;
                }
            }
            match stop {
                Stop::Fail(e) => return Err(e),
                Stop::Adapt(..) if retries == 0 => {
                    return Err(self.fail(&s.name, "the writer could not fit the record"))
                }
                Stop::Adapt(ordinal, misfit) => {
                    retries -= 1;
                    let change = match misfit {
                        Misfit::Width(w) => Change::Width(w),
                        Misfit::Interpretation => Change::Interpretation(Interpretation::None),
                    };
                    let position = s.positions.get(ordinal).copied().unwrap_or(0);
                    self.metadata(s.tag, position, change)?;
                }
            }
        }
        self.count_record();
        Ok(())
    }

    fn metadata(&mut self, record: u64, position: u16, change: Change) -> Result<(), Error> {
        self.expect_kind(METADATA, Kind::Metadata)?;
        let plan = self.plan;
        let scope = &plan.scopes[self.scope];
        let slot = match scope.kind(record) {
            Some(Kind::Variant(i)) => i,
            Some(Kind::Comment) => plan.variants + COMMENT,
            Some(Kind::Section) => plan.variants + SECTION,
            Some(Kind::Metadata) => plan.variants + METADATA,
            None => {
                return Err(self.fail(
                    "metadata",
                    format!("names record tag {record}, unknown in the current section"),
                ))
            }
        };
        let target = &plan.slots[slot];
        let Some(ordinal) = target.ordinal(position) else {
            return Err(self.fail(
                "metadata",
                format!(
                    "record {} has no scalar field at position {position}",
                    target.name
                ),
            ));
        };
        let Ok(position) = u8::try_from(position) else {
            return Err(self.fail(
                "metadata.field",
                format!("field position {position} exceeds 255"),
            ));
        };
        let tag_width = plan.schema.tag_width;
        let meta = plan.builtin(METADATA).tag;
        write_uint(&mut self.stream, meta, tag_width, self.order);
        write_uint(&mut self.stream, record, tag_width, self.order);
        self.stream.push(position);
        self.stream.push(change.property_code());
        for v in change.values() {
            write_uint(&mut self.stream, v, 8, self.order);
        }
        if let Some(states) = self.states[self.scope].as_mut() {
            states[target.offset + ordinal].apply(change);
        }
        self.count_record();
        Ok(())
    }
}
