//! The typed writer: the universal writer's algorithm with compile-time field positions.

use std::io::Write;
use std::marker::PhantomData;

use metatf_dtd::Interpretation;

use super::buf::StreamBuf;
use super::codec::{Encoder, Stop, Undo};
use super::plan::{FormatPlan, Kind, ScopeStates, COMMENT, METADATA, SECTION};
use super::values::WriteValues;
use super::{Format, TypedEvent};
use crate::container::{ByteOrder, Codec, ContainerHeader, ContainerWriter};
use crate::error::Error;
use crate::field::{Change, Misfit, MAX_WIDTH};
use crate::model::{ENGINE_MODEL, PROPERTY_ENGINE};
use crate::universal::modelled::ModelColumns;
use crate::universal::plan::Catalog;
use crate::universal::values::block_sections;
use crate::universal::DEFAULT_BLOCK_RECORDS;

/// Writes records of format `T` into a container, in blocks.
///
/// Before a record of a section other than the current one it writes the `section` record
/// (a format spanning several sections switches between them this way); when a value does not fit a field's current state it writes the metadata
/// record that makes it fit, exactly as [`crate::UniversalWriter`] does.
///
/// With the model engine (the header property `engine = model`: a format derived with
/// `#[metatf(model = "auto")]`, [`Self::modelled`], or that property given to
/// [`Self::with_properties`]) the writer collects each block's values into the columns the
/// universal writer fills and codes them with the same block encoder: the same records give
/// the same bytes as [`crate::UniversalWriter::for_format`].
pub struct TypedWriter<T: Format, W: Write> {
    plan: &'static FormatPlan,
    container: ContainerWriter<W>,
    order: ByteOrder,
    codec: Codec,
    level: i32,
    /// Field states of the scopes other than the current one (index into `plan.scopes`),
    /// created on first use; the current scope's are in `current`.
    states: Vec<Option<ScopeStates>>,
    current: ScopeStates,
    scope: usize,
    /// Per slot, what writing a record of it needs first, looked up once per record.
    heads: Vec<RecordHead>,
    /// The current section (`None` before any section record).
    section: Option<u8>,
    stream: StreamBuf,
    values: WriteValues,
    block_records: u64,
    /// Records per block, or `u64::MAX` for none (no automatic blocks): one compare per record.
    block_limit: u64,
    record: u64,
    /// States a failed attempt must restore: only those whose encoding changed them.
    undo: Undo,
    /// Set when the header names the model engine: each block's records are collected as
    /// columns and coded by the model engine.
    model: Option<ModelWriter>,
    _format: PhantomData<fn(&T)>,
}

/// What a typed writer needs to code blocks with the model engine: the universal writer's
/// record plans of the format's DTD, and the block's columns.
struct ModelWriter {
    catalog: Catalog,
    columns: ModelColumns,
}

impl<T: Format, W: Write> TypedWriter<T, W> {
    /// Writes a container header carrying the format's DTD (big-endian trace data), naming
    /// the model engine when the format asks for it ([`Format::MODEL_ENGINE`]).
    pub fn new(out: W, codec: Codec, level: i32) -> Result<Self, Error> {
        let properties = if T::MODEL_ENGINE {
            vec![(PROPERTY_ENGINE.to_string(), ENGINE_MODEL.to_string())]
        } else {
            Vec::new()
        };
        Self::with_properties(out, properties, codec, level)
    }

    /// A writer coding with the model engine whatever the format's default: per block, each
    /// field gets the predictors its DTD fixes (`field.model = ...;`) or else those that
    /// measure cheapest on the block. The engine codes its blocks itself (no section codec).
    ///
    /// ```
    /// use metatf::typed::{TypedReader, TypedWriter};
    /// use metatf::{Codec, DynRecord, MetaTf, UniversalWriter, Value};
    ///
    /// #[derive(MetaTf, Debug, Clone, PartialEq)]
    /// #[metatf(tag = 4)]
    /// struct Alloc {
    ///     size: u32,
    /// }
    ///
    /// #[derive(MetaTf, Debug, Clone, PartialEq)]
    /// #[metatf(section = 1, name = "heap")]
    /// enum Heap {
    ///     Alloc(Alloc),
    /// }
    ///
    /// let mut w = TypedWriter::<Heap, _>::modelled(Vec::new())?;
    /// for size in [16, 32, 16, 32] {
    ///     w.write(&Heap::Alloc(Alloc { size }))?;
    /// }
    /// let bytes = w.finish()?;
    /// let back: Vec<Heap> = TypedReader::<Heap, _>::new(&bytes[..])?.collect::<Result<_, _>>()?;
    /// assert_eq!(back[3], Heap::Alloc(Alloc { size: 32 }));
    /// # Ok::<(), metatf::Error>(())
    /// ```
    pub fn modelled(out: W) -> Result<Self, Error> {
        let properties = vec![(PROPERTY_ENGINE.to_string(), ENGINE_MODEL.to_string())];
        Self::with_properties(out, properties, Codec::None, 0)
    }

    /// Like [`Self::new`], with header properties (`byteorder` = `little` selects
    /// little-endian; `engine` = `model` the model engine, whatever the format's default).
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
        let model = if header.property(PROPERTY_ENGINE) == Some(ENGINE_MODEL) {
            let catalog = Catalog::new(&plan.schema)?;
            let columns = ModelColumns::new(&plan.schema, &catalog, &header)?;
            Some(ModelWriter { catalog, columns })
        } else {
            None
        };
        let states = vec![None; plan.scopes.len()];
        let heads = plan
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| RecordHead {
                section: plan.variant_section(i),
                tag: word(s.tag, plan.schema.tag_width, order),
                tag_value: s.tag,
                tag_width: usize::from(plan.schema.tag_width.min(8)),
                tag_fits: s.tag_fits,
                offset: s.offset,
                name: s.name.as_str(),
            })
            .collect();
        Ok(TypedWriter {
            plan,
            container,
            order,
            codec,
            level,
            states,
            current: fresh_states(plan, order),
            scope: 0,
            heads,
            section: None,
            // Room for a default block of records of up to 16 bytes without growing (the
            // model engine's columns have their own buffers).
            stream: StreamBuf::with_capacity(if model.is_some() {
                0
            } else {
                DEFAULT_BLOCK_RECORDS as usize * 16
            }),
            values: WriteValues::default(),
            block_records: 0,
            block_limit: crate::universal::block_records(model.is_some()),
            record: 0,
            undo: Undo::default(),
            model,
            _format: PhantomData,
        })
    }

    /// Starts a new block automatically after `n` records (0: only on [`Self::end_block`]).
    pub fn set_block_records(&mut self, n: u64) {
        self.block_limit = if n == 0 { u64::MAX } else { n };
    }

    /// Records written so far, including the section and metadata records the writer added.
    pub fn records_written(&self) -> u64 {
        self.record
    }

    /// Writes one record, after the section record and any metadata records it needs.
    #[inline]
    pub fn write(&mut self, record: &T) -> Result<(), Error> {
        self.maybe_end_block()?;
        let variant = record.variant();
        if let Some(&RecordHead {
            section: Some(n), ..
        }) = self.heads.get(variant)
        {
            if self.section != Some(n) {
                self.section(n)?;
            }
        }
        self.write_slot(variant, |e| record.encode(e))
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
        // The coding fast paths rely on widths of at most 8 bytes, as the DTD and readers do.
        if let Change::Width(w) = change {
            if w > MAX_WIDTH {
                return Err(self.fail(
                    "metadata.value",
                    format!("width {w} exceeds {MAX_WIDTH} bytes"),
                ));
            }
        }
        self.maybe_end_block()?;
        self.metadata(record, position, change)
    }

    /// Writes a metadata record changing the scalar field named `field` of the record named
    /// `record`, both by their DTD names, as valid in the current section. A field type used
    /// twice in the record is ambiguous by name: use [`Self::write_metadata`] with its position.
    ///
    /// ```
    /// use metatf::typed::TypedWriter;
    /// use metatf::dtd::Interpretation;
    /// use metatf::field::Change;
    /// use metatf::{Codec, MetaTf};
    ///
    /// #[derive(MetaTf, Debug, Clone, PartialEq)]
    /// #[metatf(tag = 4)]
    /// struct Alloc {
    ///     size: u32,
    /// }
    ///
    /// #[derive(MetaTf, Debug, Clone, PartialEq)]
    /// #[metatf(section = 1, name = "heap")]
    /// enum Heap {
    ///     Alloc(Alloc),
    /// }
    ///
    /// let mut w = TypedWriter::<Heap, _>::new(Vec::new(), Codec::None, 0)?;
    /// w.write_section(1)?;
    /// w.write_field_metadata("alloc", "size", Change::Interpretation(Interpretation::Delta(0)))?;
    /// w.write(&Heap::Alloc(Alloc { size: 16 }))?;
    /// assert!(w.write_field_metadata("alloc", "sise", Change::Width(2)).is_err());
    /// # Ok::<(), metatf::Error>(())
    /// ```
    pub fn write_field_metadata(
        &mut self,
        record: &str,
        field: &str,
        change: Change,
    ) -> Result<(), Error> {
        let section = self.plan.scopes[self.scope].section;
        let (tag, position) = self
            .plan
            .field_position(section, record, field)
            .map_err(|m| self.fail("metadata", m))?;
        self.write_metadata(tag, position, change)
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
        if let Some(m) = self.model.as_mut() {
            let first = self.record - self.block_records;
            m.columns.write_block(
                &self.plan.schema,
                &m.catalog,
                &mut self.container,
                self.block_records,
                first,
                self.section,
            )?;
            self.block_records = 0;
            return Ok(());
        }
        let values = self.values.take_sections(self.order);
        let sections = block_sections(self.stream.as_slice(), &values, self.codec, self.level);
        self.container.write_block(self.block_records, &sections)?;
        self.stream.clear();
        self.block_records = 0;
        for states in self.states.iter_mut().flatten().chain([&mut self.current]) {
            for s in &mut states.fields {
                s.start_block();
            }
        }
        Ok(())
    }

    /// Writes the last block (if it holds records), the index and the trailer.
    pub fn finish(mut self) -> Result<W, Error> {
        if self.block_records > 0 || (self.model.is_none() && !self.values.is_empty()) {
            self.end_block()?;
        }
        self.container.finish()
    }

    #[inline(always)]
    fn maybe_end_block(&mut self) -> Result<(), Error> {
        // A modelled block also ends once its values fill the bound the universal writer keeps
        // (`FlatBlock::is_full`), so both writers cut blocks at the same records.
        let values_full = self
            .model
            .as_ref()
            .is_some_and(|m| m.columns.flat.is_full());
        if values_full || self.block_records >= self.block_limit {
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
        if scope != self.scope {
            let incoming = self.states[scope]
                .take()
                .unwrap_or_else(|| fresh_states(self.plan, self.order));
            let outgoing = std::mem::replace(&mut self.current, incoming);
            self.states[self.scope] = Some(outgoing);
            self.scope = scope;
        }
        self.section = Some(number);
        Ok(())
    }

    fn count_record(&mut self) {
        self.record += 1;
        self.block_records += 1;
    }

    /// Writes a record of type `slot` whose fields `encode` writes: one attempt inline, and
    /// the metadata records and retries a misfit needs out of line.
    #[inline(always)]
    fn write_slot<F>(&mut self, slot: usize, mut encode: F) -> Result<(), Error>
    where
        F: FnMut(&mut Encoder<'_>) -> Result<(), Stop>,
    {
        match self.attempt(slot, &mut encode) {
            Ok(()) => {
                self.count_record();
                Ok(())
            }
            Err(stop) => self.adapt(slot, stop, encode),
        }
    }

    /// One attempt at a record; on failure nothing of it remains written.
    #[inline(always)]
    fn attempt<F>(&mut self, slot: usize, encode: &mut F) -> Result<(), Stop>
    where
        F: FnMut(&mut Encoder<'_>) -> Result<(), Stop>,
    {
        let Some(head) = self.heads.get(slot) else {
            return Err(self.stop("", format!("record type {slot} does not exist")));
        };
        if !head.tag_fits {
            return Err(self.tag_misfit(slot));
        }
        if self.model.is_some() {
            return self.attempt_modelled(slot, encode);
        }
        let mark = self.stream.len();
        let checkpoint = self.values.checkpoint();
        let states = &mut self.current;
        // Fast flags are all false for a little-endian trace (see `fresh_states`).
        let fast = states.fast.get(slot) == Some(&true);
        // From the slot's first state on: generated code indexes by ordinal, and the plan
        // checked that the record has as many scalars as the generated code codes.
        let Some(states) = states.fields.get_mut(head.offset..) else {
            return Err(self.stop("", "field states of the record are missing"));
        };
        self.undo.clear();
        let pos = self.stream.put_word(mark, head.tag, head.tag_width);
        let name = head.name;
        let mut e = Encoder {
            states,
            out: &mut self.stream,
            pos,
            fast,
            values: &mut self.values,
            order: self.order,
            record: self.record,
            name,
            undo: &mut self.undo,
            flat: None,
        };
        match encode(&mut e) {
            Ok(()) => {
                let end = e.pos;
                self.stream.set_len(end);
                self.values.commit();
                Ok(())
            }
            Err(stop) => {
                let offset = head.offset;
                self.retreat(offset, mark, checkpoint);
                Err(stop)
            }
        }
    }

    /// One attempt at a record for the model engine: its tag and values appended to the
    /// block's columns, or, on failure, nothing.
    #[inline(always)]
    fn attempt_modelled<F>(&mut self, slot: usize, encode: &mut F) -> Result<(), Stop>
    where
        F: FnMut(&mut Encoder<'_>) -> Result<(), Stop>,
    {
        let (Some(head), Some(m)) = (self.heads.get(slot), self.model.as_mut()) else {
            return Err(self.stop("", format!("record type {slot} does not exist")));
        };
        let flat = &mut m.columns.flat;
        let (words, bytes) = (flat.words.len(), flat.bytes.len());
        flat.words.push(head.tag_value);
        let mut e = Encoder {
            states: &mut [],
            out: &mut self.stream,
            pos: 0,
            fast: false,
            values: &mut self.values,
            order: self.order,
            record: self.record,
            name: head.name,
            undo: &mut self.undo,
            flat: Some(flat),
        };
        let result = encode(&mut e);
        let flat = &mut m.columns.flat;
        match result {
            Ok(()) => flat.records += 1,
            Err(_) => {
                flat.words.truncate(words);
                flat.bytes.truncate(bytes);
            }
        }
        result
    }

    /// After a failed attempt: writes the metadata record the misfit asks for and tries again;
    /// each retry follows a metadata record that widened a field or switched it to `none`.
    #[cold]
    #[inline(never)]
    fn adapt<F>(&mut self, slot: usize, mut stop: Stop, mut encode: F) -> Result<(), Error>
    where
        F: FnMut(&mut Encoder<'_>) -> Result<(), Stop>,
    {
        let plan = self.plan;
        let mut retries = 0;
        loop {
            let Some(s) = plan.slots.get(slot) else {
                return Err(self.fail("", format!("record type {slot} does not exist")));
            };
            match stop {
                Stop::Fail(e) => return Err(*e),
                Stop::Adapt(..) if retries >= 10 * (s.positions.len() + 1) => {
                    return Err(self.fail(&s.name, "the writer could not fit the record"))
                }
                Stop::Adapt(ordinal, misfit) => {
                    retries += 1;
                    let change = match misfit {
                        Misfit::Width(w) => Change::Width(w),
                        Misfit::Interpretation => Change::Interpretation(Interpretation::None),
                    };
                    let position = s.positions.get(ordinal).copied().unwrap_or(0);
                    self.metadata(s.tag, position, change)?;
                }
            }
            match self.attempt(slot, &mut encode) {
                Ok(()) => {
                    self.count_record();
                    return Ok(());
                }
                Err(again) => stop = again,
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn tag_misfit(&self, slot: usize) -> Stop {
        match self.plan.slots.get(slot) {
            Some(s) => self.stop(&s.name, format!("tag {} does not fit tag.width", s.tag)),
            None => self.stop("", format!("record type {slot} does not exist")),
        }
    }

    #[cold]
    fn stop(&self, path: &str, message: impl Into<String>) -> Stop {
        Stop::Fail(Box::new(self.fail(path, message)))
    }

    /// Undoes a failed attempt at a record: its bytes, value-section elements and state changes.
    #[cold]
    fn retreat(&mut self, offset: usize, mark: usize, checkpoint: usize) {
        self.stream.truncate(mark);
        self.values.rollback(checkpoint);
        self.undo
            .restore(self.current.fields.get_mut(offset..).unwrap_or_default());
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
        if let Some(m) = self.model.as_mut() {
            // The columns of a metadata record: its tag, its number of fields, the fields.
            let values = change.values();
            let flat = &mut m.columns.flat;
            flat.words.extend([meta, 3 + values.len() as u64, record]);
            flat.words
                .extend([u64::from(position), u64::from(change.property_code())]);
            flat.words.extend(values);
            flat.records += 1;
            self.count_record();
            return Ok(());
        }
        self.stream.put(meta, tag_width, self.order);
        self.stream.put(record, tag_width, self.order);
        self.stream.put(u64::from(position), 1, self.order);
        self.stream
            .put(u64::from(change.property_code()), 1, self.order);
        for v in change.values() {
            self.stream.put(v, 8, self.order);
        }
        if let Some(state) = self.current.fields.get_mut(target.offset + ordinal) {
            state.apply(change);
        }
        plan.refresh_fast(&mut self.current, slot);
        if self.order != ByteOrder::Big {
            // The generated fast paths write big-endian only.
            self.current.fast.fill(false);
        }
        self.count_record();
        Ok(())
    }
}

/// What writing a record of one slot needs before its fields: looked up once per record.
struct RecordHead {
    /// The section the record belongs to (`None`: global, valid in any section).
    section: Option<u8>,
    /// The tag as the 8 bytes [`StreamBuf::put_word`] stores (its first `tag_width` count).
    tag: [u8; 8],
    /// The tag's value (the model engine's columns hold it as a word).
    tag_value: u64,
    tag_width: usize,
    tag_fits: bool,
    /// Index of the slot's first state in [`ScopeStates::fields`].
    offset: usize,
    /// The record's name, for errors (the plan lives as long as the program).
    name: &'static str,
}

/// The word [`StreamBuf::put_at`] would store for `value` at `width` bytes in `order`.
fn word(value: u64, width: u8, order: ByteOrder) -> [u8; 8] {
    let w = u32::from(width.min(8));
    match order {
        ByteOrder::Big => value.wrapping_shl(64 - 8 * w).to_be_bytes(),
        ByteOrder::Little => value.to_le_bytes(),
    }
}

/// A scope's initial states; the fast paths, which write big-endian only, are off for a
/// little-endian trace, so that the per-record check is one flag.
fn fresh_states(plan: &FormatPlan, order: ByteOrder) -> ScopeStates {
    let mut states = plan.fresh_states();
    if order != ByteOrder::Big {
        states.fast.fill(false);
    }
    states
}
