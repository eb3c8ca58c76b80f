//! The universal writer: encodes dynamic records with a schema into a container, choosing
//! nothing itself except metadata records that widen a field (or switch it to `none`) when a
//! value cannot be written under the field's current state. It never truncates a value.

use std::io::Write;
use std::sync::Arc;

use metatf_dtd::{Interpretation, Schema};

use super::modelled::ModelColumns;
use super::plan::{Builtin, Catalog, Leaf, RecordPlan};
use super::reader::{lookup, metadata_target, section_name};
use super::record::{DynRecord, Value};
use super::values::{block_sections, ValueBuilder};
use crate::container::{ByteOrder, Codec, ContainerHeader, ContainerWriter};
use crate::error::Error;
use crate::field::bits::{unsigned_width, write_uint};
use crate::field::{Change, FieldState, Misfit};
use crate::model::{ENGINE_MODEL, PROPERTY_ENGINE};

/// Why encoding a record stopped.
enum Stop {
    /// The field at `position` needs a metadata change first.
    Adapt(u16, Misfit),
    /// The record is wrong.
    Fail(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Fail(e)
    }
}

/// Writes dynamic records into a container in blocks, in constant memory per block.
pub struct UniversalWriter<W: Write> {
    container: ContainerWriter<W>,
    schema: Schema,
    catalog: Arc<Catalog>,
    metadata_tag: Option<u64>,
    order: ByteOrder,
    codec: Codec,
    level: i32,
    /// Field states by slot (see [`Catalog::initial_states`]).
    states: Vec<FieldState>,
    section: Option<u8>,
    stream: Vec<u8>,
    values: ValueBuilder,
    block_records: u64,
    records_per_block: u64,
    record: u64,
    /// States changed by the record being written, to restore if it must be retried.
    undo: Vec<(usize, FieldState)>,
    /// (position, value) of the scalars of the record being written, reused between records.
    scalars: Vec<(u16, u64)>,
    /// Set when the header names the model engine: records are collected and modelled per block.
    model: Option<ModelColumns>,
    /// For a writer made by [`Self::for_format`]: the section, tag and name of each of the
    /// format's record types, so that the writer writes the `section` record a record needs.
    sections_of: Option<Vec<(u8, u64, String)>>,
}

impl<W: Write> UniversalWriter<W> {
    /// Parses `dtd` and writes a container header carrying exactly that text, so that the
    /// schema the records are coded with and the DTD the trace embeds cannot differ.
    ///
    /// ```
    /// use metatf::{Codec, DynRecord, UniversalReader, UniversalWriter, Value};
    ///
    /// let dtd = "tag.width = 1;\nsize.width = 4;\nsize.interpretation = none;\n\
    ///            alloc : (tag, size) { tag.value = 4; }\n";
    /// let mut w = UniversalWriter::from_dtd(Vec::new(), dtd, "sizes", vec![], Codec::None, 0)?;
    /// let alloc = DynRecord {
    ///     section: None,
    ///     name: "alloc".into(),
    ///     tag: 4,
    ///     fields: vec![Value::Uint(16)],
    /// };
    /// w.write(&alloc)?;
    /// let bytes = w.finish()?;
    /// let mut r = UniversalReader::new(&bytes[..])?;
    /// assert_eq!(r.next_record()?.map(|x| x.fields), Some(vec![Value::Uint(16)]));
    /// assert!(UniversalWriter::from_dtd(Vec::new(), "tag.width = ;", "x", vec![], Codec::None, 0).is_err());
    /// # Ok::<(), metatf::Error>(())
    /// ```
    pub fn from_dtd(
        out: W,
        dtd: &str,
        format: &str,
        properties: Vec<(String, String)>,
        codec: Codec,
        level: i32,
    ) -> Result<Self, Error> {
        let schema = metatf_dtd::parse_schema(dtd, format).map_err(|d| Error::Schema {
            message: d.to_string(),
        })?;
        let header = ContainerHeader {
            dtd: dtd.to_string(),
            format: format.to_string(),
            properties,
        };
        Self::new(out, schema, &header, codec, level)
    }

    /// A writer for the DTD of typed format `F` (see [`crate::typed`]), coding with the model
    /// engine when `F` asks for it ([`crate::typed::Format::MODEL_ENGINE`]), which writes the
    /// `section` record a record of the format needs itself, where the typed writer does:
    /// before a record of a section other than the current one (the record's `section` says
    /// which, or, when `None`, the one section whose record has its tag and name). Both
    /// writers write the same bytes from the same records.
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
    /// let mut u = UniversalWriter::for_format::<Heap>(Vec::new(), Codec::None, 0)?;
    /// u.write(&DynRecord {
    ///     section: Some(1),
    ///     name: "alloc".into(),
    ///     tag: 4,
    ///     fields: vec![Value::Uint(16)],
    /// })?;
    /// let universal = u.finish()?;
    ///
    /// let mut t = TypedWriter::<Heap, _>::new(Vec::new(), Codec::None, 0)?;
    /// t.write(&Heap::Alloc(Alloc { size: 16 }))?;
    /// assert_eq!(t.finish()?, universal);
    /// # Ok::<(), metatf::Error>(())
    /// ```
    pub fn for_format<F: crate::typed::Format>(
        out: W,
        codec: Codec,
        level: i32,
    ) -> Result<Self, Error> {
        let plan = F::plan()?;
        // As the typed writer's `new`: the model engine when the format asks for it.
        let properties = if F::MODEL_ENGINE {
            vec![(PROPERTY_ENGINE.to_string(), ENGINE_MODEL.to_string())]
        } else {
            Vec::new()
        };
        let header = ContainerHeader {
            dtd: plan.dtd().to_string(),
            format: plan.format().to_string(),
            properties,
        };
        let mut w = Self::new(out, plan.schema().clone(), &header, codec, level)?;
        let mut sections_of = Vec::new();
        for (section, r) in F::spec().records() {
            if let Some(n) = section {
                sections_of.push((n, r.tag, r.name.to_string()));
            }
        }
        w.sections_of = Some(sections_of);
        Ok(w)
    }

    /// Writes the container header; `header.dtd` must be the text `schema` came from (the
    /// reader decodes with the embedded text). [`Self::from_dtd`] takes the text once.
    pub fn new(
        out: W,
        schema: Schema,
        header: &ContainerHeader,
        codec: Codec,
        level: i32,
    ) -> Result<Self, Error> {
        let order = header.byte_order()?;
        let catalog = Arc::new(Catalog::new(&schema)?);
        let states = catalog.initial_states();
        let container = ContainerWriter::new(out, header)?;
        let model = if header.property(PROPERTY_ENGINE) == Some(ENGINE_MODEL) {
            Some(ModelColumns::new(&schema, &catalog, header)?)
        } else {
            None
        };
        let metadata_tag = schema
            .global_records
            .iter()
            .find(|r| r.name == "metadata")
            .map(|r| r.tag);
        Ok(UniversalWriter {
            container,
            catalog,
            schema,
            metadata_tag,
            order,
            codec,
            level,
            states,
            section: None,
            stream: Vec::new(),
            values: ValueBuilder::default(),
            block_records: 0,
            records_per_block: super::block_records(model.is_some()),
            record: 0,
            undo: Vec::new(),
            scalars: Vec::new(),
            model,
            sections_of: None,
        })
    }

    /// Asks for the container's compact form when the file has one (one block of stored
    /// sections, at most 64 KiB: [`ContainerWriter::prefer_compact`]).
    pub fn prefer_compact(&mut self) {
        self.container.prefer_compact();
    }

    /// Starts a new block automatically after `n` records (0: only on [`Self::end_block`]).
    pub fn set_block_records(&mut self, n: u64) {
        self.records_per_block = n;
    }

    /// Records written so far, including metadata records the writer added.
    pub fn records_written(&self) -> u64 {
        self.record
    }

    /// Writes one record (after any metadata records its values need, and, for a writer made
    /// by [`Self::for_format`], the `section` record it needs).
    pub fn write(&mut self, rec: &DynRecord) -> Result<(), Error> {
        if let Some(n) = self.section_needed(rec) {
            let tag = self
                .schema
                .global_records
                .iter()
                .find(|r| r.name == "section")
                .map(|r| r.tag)
                .ok_or_else(|| Error::invalid("the DTD has no section record"))?;
            self.write_one(&DynRecord {
                section: None,
                name: "section".into(),
                tag,
                fields: vec![Value::Uint(u64::from(n))],
            })?;
        }
        self.write_one(rec)
    }

    /// The section a writer made by [`Self::for_format`] must enter before `rec`, if any.
    fn section_needed(&self, rec: &DynRecord) -> Option<u8> {
        let known = self.sections_of.as_ref()?;
        let mut matching = known
            .iter()
            .filter(|(_, tag, name)| *tag == rec.tag && (rec.name.is_empty() || *name == rec.name))
            .map(|(n, _, _)| *n);
        let want = match rec.section {
            Some(n) if known.iter().any(|(s, _, _)| *s == n) => n,
            _ => {
                let first = matching.next()?;
                // A tag and name in several sections: the record's `section` must say which.
                if matching.next().is_some() {
                    return None;
                }
                first
            }
        };
        // Built-ins and global records need no section; the current one may already do.
        let is_format_record = known
            .iter()
            .any(|(n, tag, _)| *n == want && *tag == rec.tag);
        (is_format_record && self.section != Some(want)).then_some(want)
    }

    /// Writes a metadata record changing the scalar field named `field` of the record named
    /// `record`, both by their DTD names as valid in the current section. A field name used
    /// twice in the record is ambiguous: write the `metadata` record with its position.
    ///
    /// ```
    /// use metatf::dtd::Interpretation;
    /// use metatf::field::Change;
    /// use metatf::{Codec, DynRecord, UniversalReader, UniversalWriter, Value};
    ///
    /// let dtd = "tag.width = 1;\nsize.width = 4;\nsize.interpretation = none;\n\
    ///            alloc : (tag, size) { tag.value = 4; }\n";
    /// let mut w = UniversalWriter::from_dtd(Vec::new(), dtd, "sizes", vec![], Codec::None, 0)?;
    /// w.write_field_metadata("alloc", "size", Change::Interpretation(Interpretation::Delta(0)))?;
    /// assert!(w.write_field_metadata("alloc", "sise", Change::Width(2)).is_err());
    /// let bytes = w.finish()?;
    /// let mut r = UniversalReader::new(&bytes[..])?;
    /// assert_eq!(r.next_record()?.map(|m| m.name), Some("metadata".to_string()));
    /// # Ok::<(), metatf::Error>(())
    /// ```
    pub fn write_field_metadata(
        &mut self,
        record: &str,
        field: &str,
        change: Change,
    ) -> Result<(), Error> {
        let (tag, position) =
            crate::typed::field_position(&self.schema, self.section, record, field)
                .map_err(|m| self.fail("metadata", m))?;
        let tag_of_metadata = self
            .metadata_tag
            .ok_or_else(|| self.fail("metadata", "the DTD has no metadata record"))?;
        let mut fields = vec![
            Value::Uint(tag),
            Value::Uint(u64::from(position)),
            Value::Uint(u64::from(change.property_code())),
        ];
        fields.extend(change.values().into_iter().map(Value::Uint));
        self.write_one(&DynRecord {
            section: self.section,
            name: "metadata".into(),
            tag: tag_of_metadata,
            fields,
        })
    }

    fn write_one(&mut self, rec: &DynRecord) -> Result<(), Error> {
        let values_full = self.model.as_ref().is_some_and(|m| m.flat.is_full());
        if values_full
            || (self.records_per_block != 0 && self.block_records >= self.records_per_block)
        {
            self.end_block()?;
        }
        let catalog = Arc::clone(&self.catalog);
        let plan = catalog.by_tag(self.section, rec.tag).ok_or_else(|| {
            self.fail(
                &rec.name,
                format!(
                    "tag {} names no record in {}",
                    rec.tag,
                    section_name(self.section)
                ),
            )
        })?;
        if !rec.name.is_empty() && rec.name != plan.name {
            return Err(self.fail(
                &rec.name,
                format!("tag {} is record {}, not {}", rec.tag, plan.name, rec.name),
            ));
        }
        if self.model.is_some() {
            return self.write_modelled(plan, &rec.fields);
        }
        match plan.builtin {
            Builtin::Metadata => self.write_metadata(&catalog, plan, &rec.fields),
            _ => self.write_data(plan, &rec.fields),
        }
    }

    /// Collects one record of a modelled block.
    fn write_modelled(&mut self, plan: &RecordPlan, fields: &[Value]) -> Result<(), Error> {
        let Some(m) = self.model.as_mut() else {
            return Ok(());
        };
        if let Err(message) = m.flat.push(plan, fields) {
            return Err(self.fail(&plan.name, message));
        }
        if plan.builtin == Builtin::Section {
            self.enter_section(fields)?;
        }
        self.count_record();
        Ok(())
    }

    /// Codes the collected records of a modelled block.
    fn end_model_block(&mut self) -> Result<(), Error> {
        let Some(m) = self.model.as_mut() else {
            return Ok(());
        };
        let first = self.record - self.block_records;
        m.write_block(
            &self.schema,
            &self.catalog,
            &mut self.container,
            self.block_records,
            first,
            self.section,
        )?;
        self.block_records = 0;
        Ok(())
    }

    /// Ends the current block (writing it even when it holds no records).
    pub fn end_block(&mut self) -> Result<(), Error> {
        if self.model.is_some() {
            return self.end_model_block();
        }
        let values = self.values.take_sections(self.order);
        let sections = block_sections(&self.stream, &values, self.codec, self.level);
        self.container.write_block(self.block_records, &sections)?;
        self.stream.clear();
        self.block_records = 0;
        self.states.iter_mut().for_each(FieldState::start_block);
        Ok(())
    }

    /// Writes the last block (if it holds records), the index and the trailer.
    pub fn finish(mut self) -> Result<W, Error> {
        if self.block_records > 0 || (self.model.is_none() && !self.values.is_empty()) {
            self.end_block()?;
        }
        self.container.finish()
    }

    fn fail(&self, path: &str, message: impl Into<String>) -> Error {
        Error::record(None, self.record, path, message)
    }

    fn put(&mut self, value: u64, width: u8, path: &str) -> Result<(), Error> {
        if unsigned_width(value) > width {
            return Err(self.fail(path, format!("{value} does not fit in {width} bytes")));
        }
        write_uint(&mut self.stream, value, width, self.order);
        Ok(())
    }

    fn write_metadata(
        &mut self,
        catalog: &Catalog,
        plan: &RecordPlan,
        fields: &[Value],
    ) -> Result<(), Error> {
        let mut ints = Vec::with_capacity(fields.len());
        for f in fields {
            match f {
                Value::Uint(v) => ints.push(*v),
                _ => return Err(self.fail("metadata", "metadata fields must all be integers")),
            }
        }
        if ints.len() < 3 {
            return Err(self.fail("metadata", "metadata needs record, field and property"));
        }
        let (target, position, property) = (ints[0], ints[1], ints[2]);
        let position = u8::try_from(position).map_err(|_| {
            self.fail(
                "metadata.field",
                format!("field position {position} exceeds 255"),
            )
        })?;
        let property = u8::try_from(property).map_err(|_| {
            self.fail(
                "metadata.property",
                format!("property {property} exceeds 255"),
            )
        })?;
        let change =
            Change::from_parts(property, &ints[3..]).map_err(|m| self.fail("metadata", m))?;
        let slot = metadata_target(catalog, self.section, target, u16::from(position))
            .map_err(|m| self.fail("metadata", m))?;
        let mark = self.stream.len();
        let tag_width = self.schema.tag_width;
        let result = (|| {
            self.put(plan.tag, tag_width, "metadata.tag")?;
            self.put(target, tag_width, "metadata.record")?;
            self.put(u64::from(position), 1, "metadata.field")?;
            self.put(u64::from(property), 1, "metadata.property")?;
            for v in &ints[3..] {
                self.put(*v, 8, "metadata.value")?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            self.stream.truncate(mark);
            return Err(e);
        }
        self.states[slot].apply(change);
        self.count_record();
        Ok(())
    }

    fn count_record(&mut self) {
        self.record += 1;
        self.block_records += 1;
    }

    fn write_data(&mut self, plan: &RecordPlan, fields: &[Value]) -> Result<(), Error> {
        // Each retry follows a metadata record that widened a field or switched it to `none`;
        // a field can be switched once and widened at most eight times.
        let mut retries = None;
        loop {
            let mark = self.stream.len();
            let checkpoint = self.values.checkpoint();
            self.undo.clear();
            let attempt = (|| {
                self.put(plan.tag, self.schema.tag_width, "tag")
                    .map_err(Stop::Fail)?;
                let mut scalars = std::mem::take(&mut self.scalars);
                scalars.clear();
                let r = self.encode_leaves(plan, &plan.leaves, fields, &mut scalars);
                self.scalars = scalars;
                r
            })();
            match attempt {
                Ok(()) => {
                    self.values.commit();
                    break;
                }
                Err(stop) => {
                    self.stream.truncate(mark);
                    self.values.rollback(checkpoint);
                    while let Some((slot, state)) = self.undo.pop() {
                        self.states[slot] = state;
                    }
                    match stop {
                        Stop::Fail(e) => return Err(e),
                        Stop::Adapt(_, _) if retries == Some(0) => {
                            return Err(self.fail(&plan.name, "the writer could not fit the record"))
                        }
                        Stop::Adapt(position, misfit) => {
                            let left = retries.unwrap_or(10 * (count_scalars(&plan.leaves) + 1));
                            retries = Some(left - 1);
                            self.adapt(plan, position, misfit)?;
                        }
                    }
                }
            }
        }
        if plan.builtin == Builtin::Section {
            self.enter_section(fields)?;
        }
        self.count_record();
        Ok(())
    }

    /// A section record was written: its number becomes the current section.
    fn enter_section(&mut self, fields: &[Value]) -> Result<(), Error> {
        let n = match fields.first() {
            Some(Value::Uint(n)) => *n,
            _ => 0,
        };
        match u8::try_from(n)
            .ok()
            .filter(|&n| self.schema.section(n).is_some())
        {
            Some(n) => {
                self.section = Some(n);
                Ok(())
            }
            None => Err(self.fail(
                "section.number",
                format!("section {n} is not declared in the DTD"),
            )),
        }
    }

    /// Emits the metadata record that lets the field at `position` hold its value.
    fn adapt(&mut self, plan: &RecordPlan, position: u16, misfit: Misfit) -> Result<(), Error> {
        let metadata_tag = self.metadata_tag.ok_or_else(|| {
            self.fail(
                &plan.name,
                "a value needs a metadata record but the DTD has none",
            )
        })?;
        let change = match misfit {
            Misfit::Width(w) => Change::Width(w),
            Misfit::Interpretation => Change::Interpretation(Interpretation::None),
        };
        let mut fields = vec![
            Value::Uint(plan.tag),
            Value::Uint(u64::from(position)),
            Value::Uint(u64::from(change.property_code())),
        ];
        fields.extend(change.values().into_iter().map(Value::Uint));
        let catalog = Arc::clone(&self.catalog);
        let meta = catalog
            .by_tag(self.section, metadata_tag)
            .ok_or_else(|| self.fail("metadata", "metadata record is shadowed"))?;
        self.write_metadata(&catalog, meta, &fields)
    }

    fn encode_leaves(
        &mut self,
        plan: &RecordPlan,
        leaves: &[Leaf],
        values: &[Value],
        scalars: &mut Vec<(u16, u64)>,
    ) -> Result<(), Stop> {
        if leaves.len() != values.len() {
            return Err(Stop::Fail(self.fail(
                &plan.name,
                format!("{} fields given, {} expected", values.len(), leaves.len()),
            )));
        }
        for (leaf, value) in leaves.iter().zip(values) {
            // Formatted only on error: this loop runs for every field of every record.
            let path = || format!("{}.{}", plan.name, leaf.name());
            match (leaf, value) {
                (Leaf::Scalar { position, slot, .. }, Value::Uint(v)) => {
                    let state = &mut self.states[*slot];
                    let before = *state;
                    match state.encode(*v, &mut self.values) {
                        Ok(stored) => {
                            let w = state.width();
                            self.undo.push((*slot, before));
                            write_uint(&mut self.stream, stored, w, self.order);
                            scalars.push((*position, *v));
                        }
                        Err(m) => return Err(Stop::Adapt(*position, m)),
                    }
                }
                (
                    Leaf::Bytes {
                        length_position, ..
                    },
                    Value::Bytes(b),
                ) => {
                    let len = lookup(scalars, *length_position);
                    if len != Some(b.len() as u64) {
                        return Err(Stop::Fail(self.fail(
                            &path(),
                            format!("{} bytes given but the length field says {len:?}", b.len()),
                        )));
                    }
                    self.stream.extend_from_slice(b);
                }
                (
                    Leaf::Repeated {
                        count_position,
                        element,
                        ..
                    },
                    Value::List(items),
                ) => {
                    let count = lookup(scalars, *count_position);
                    if count != Some(items.len() as u64) {
                        return Err(Stop::Fail(self.fail(
                            &path(),
                            format!(
                                "{} repetitions given but the count field says {count:?}",
                                items.len()
                            ),
                        )));
                    }
                    for item in items {
                        self.encode_leaves(plan, element, item, scalars)?;
                    }
                }
                _ => {
                    return Err(Stop::Fail(self.fail(
                        &path(),
                        format!("value {value:?} has the wrong shape for this field"),
                    )))
                }
            }
        }
        Ok(())
    }
}

fn count_scalars(leaves: &[Leaf]) -> usize {
    leaves
        .iter()
        .map(|l| match l {
            Leaf::Scalar { .. } => 1,
            Leaf::Bytes { .. } => 0,
            Leaf::Repeated { element, .. } => count_scalars(element),
        })
        .sum()
}
