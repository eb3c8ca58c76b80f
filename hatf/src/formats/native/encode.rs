//! Writing HATF 1.0 records. A value that does not fit the current width/interpretation is never
//! truncated: the writer first emits the metadata records that make it fit.

use super::codes::{op, tag, Field, Width};
use super::error::NativeError;
use super::record::{DataRecord, Record, Slot};
use super::state::{interpretation_code, Config, Interpretation, Metadata};
use std::io::Write;

/// Writes HATF 1.0 records to `W`, starting from the default configuration.
pub struct NativeWriter<W: Write> {
    out: W,
    config: Config,
    offset: u64,
    records: u64,
    metadata_records: u64,
    /// When splitting, the stored bytes of every address field go here instead.
    split_addresses: Option<Vec<u8>>,
}

impl<W: Write> NativeWriter<W> {
    /// A writer of one self-contained stream.
    pub fn new(out: W) -> Self {
        NativeWriter {
            out,
            config: Config::default(),
            offset: 0,
            records: 0,
            metadata_records: 0,
            split_addresses: None,
        }
    }

    /// A writer that moves the stored bytes of every address field (whatever its interpretation;
    /// zero-width ones have none) into a second stream, for the paper's "HATF SplitAddr"; read it
    /// back with `NativeReader::with_split_addresses`.
    pub fn with_split_addresses(out: W) -> Self {
        NativeWriter {
            split_addresses: Some(Vec::new()),
            ..NativeWriter::new(out)
        }
    }

    /// The configuration the next record is written with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Bytes written to the main stream so far.
    pub fn bytes_written(&self) -> u64 {
        self.offset
    }

    /// Records written so far (data, comment and metadata).
    pub fn records_written(&self) -> u64 {
        self.records
    }

    /// Metadata records written so far (explicit and automatic).
    pub fn metadata_written(&self) -> u64 {
        self.metadata_records
    }

    fn error(&self, field: Option<&'static str>, message: String) -> NativeError {
        NativeError {
            offset: self.offset,
            record: self.records,
            field,
            message,
        }
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<(), NativeError> {
        self.out
            .write_all(bytes)
            .map_err(|e| self.error(None, format!("cannot write: {e}")))?;
        self.offset += bytes.len() as u64;
        self.records += 1;
        Ok(())
    }

    /// Writes any record.
    pub fn write_record(&mut self, record: &Record) -> Result<(), NativeError> {
        match record {
            Record::Data(d) => self.write_data(d),
            Record::Comment(c) => self.write_comment(c),
            Record::Metadata(m) => self.write_metadata(m),
        }
    }

    /// Writes a metadata record and applies it.
    pub fn write_metadata(&mut self, meta: &Metadata) -> Result<(), NativeError> {
        let mut next = self.config.clone();
        next.apply(meta).map_err(|m| self.error(None, m))?;
        let mut bytes = Vec::with_capacity(20);
        match *meta {
            Metadata::SetSize(field, width) => bytes.extend_from_slice(&[
                tag::METADATA,
                op::SET_FIELD_SIZE,
                field.code(),
                width.code(),
            ]),
            Metadata::SetInterpretation(field, i) => {
                bytes.extend_from_slice(&[
                    tag::METADATA,
                    op::SET_FIELD_INTERPRETATION,
                    field.code(),
                ]);
                // `apply` above has refused what has no HATF 1.0 code.
                let code = interpretation_code(i).map_err(|m| self.error(None, m))?;
                bytes.push(code);
                match i {
                    Interpretation::Default(v)
                    | Interpretation::BaseOffset(v)
                    | Interpretation::Delta(v) => bytes.extend_from_slice(&v.to_be_bytes()),
                    Interpretation::Stride { initial, stride } => {
                        bytes.extend_from_slice(&initial.to_be_bytes());
                        bytes.extend_from_slice(&stride.to_be_bytes());
                    }
                    _ => {}
                }
            }
        }
        self.emit(&bytes)?;
        self.metadata_records += 1;
        self.config = next;
        Ok(())
    }

    /// Writes a comment record (at most 65535 bytes).
    pub fn write_comment(&mut self, text: &[u8]) -> Result<(), NativeError> {
        let len = u16::try_from(text.len()).map_err(|_| {
            self.error(
                None,
                format!("a comment holds at most 65535 bytes, not {}", text.len()),
            )
        })?;
        let mut bytes = vec![tag::COMMENT, 0];
        bytes.extend_from_slice(&len.to_be_bytes());
        bytes.extend_from_slice(text);
        self.emit(&bytes)
    }

    /// Writes a data record, preceded by whatever metadata makes its values fit.
    pub fn write_data(&mut self, record: &DataRecord) -> Result<(), NativeError> {
        if let Some(slot) = record.stray_value() {
            return Err(self.error(
                Some(slot.name()),
                format!("a {:?} record has no {} field", record.kind, slot.name()),
            ));
        }
        // Each pass either encodes the record or emits metadata for one misfit; a field needs at
        // most two metadata records (interpretation, width), so this ends.
        for _ in 0..32 {
            match self.try_encode(record) {
                Ok((main, addresses, next)) => {
                    self.emit(&main)?;
                    if let Some(split) = self.split_addresses.as_mut() {
                        split.extend_from_slice(&addresses);
                    }
                    self.config = next;
                    return Ok(());
                }
                Err(fixes) => {
                    if fixes.is_empty() {
                        return Err(self.error(None, "no metadata makes this record fit".into()));
                    }
                    for m in fixes {
                        self.write_metadata(&m)?;
                    }
                }
            }
        }
        Err(self.error(None, "the record does not fit after widening".into()))
    }

    /// Encodes `record` under a copy of the configuration; on a misfit returns the metadata to emit.
    #[allow(clippy::type_complexity)]
    fn try_encode(&self, record: &DataRecord) -> Result<(Vec<u8>, Vec<u8>, Config), Vec<Metadata>> {
        let mut cfg = self.config.clone();
        let mut main = vec![record.kind.tag()];
        let mut addresses = Vec::new();
        for &slot in record.kind.layout() {
            if slot == Slot::Attributes {
                let bytes = &record.attributes;
                if !cfg.attributes_fit(bytes) {
                    return Err(cfg.fix_attributes(bytes));
                }
                if cfg.default_attributes().is_none() {
                    match cfg.width(Field::Attributes) {
                        Width::Fixed(_) => {}
                        Width::V1 => main.push(bytes.len() as u8),
                        Width::V2 => main.extend_from_slice(&(bytes.len() as u16).to_be_bytes()),
                    }
                    main.extend_from_slice(bytes);
                }
                continue;
            }
            let field = slot.field();
            let value = record.get(slot);
            let to_split = self.split_addresses.is_some() && field == Field::Address;
            let Width::Fixed(w) = cfg.width(field) else {
                return Err(cfg.fix_numeric(field, value));
            };
            match cfg.encode_numeric(field, value) {
                Some(raw) => {
                    let be = raw.to_be_bytes();
                    let stored = &be[8 - usize::from(w)..];
                    if to_split {
                        addresses.extend_from_slice(stored);
                    } else {
                        main.extend_from_slice(stored);
                    }
                }
                None => return Err(cfg.fix_numeric(field, value)),
            }
        }
        Ok((main, addresses, cfg))
    }

    /// Flushes and returns the output and, when splitting, the address stream.
    pub fn finish(mut self) -> Result<(W, Option<Vec<u8>>), NativeError> {
        self.out
            .flush()
            .map_err(|e| self.error(None, format!("cannot write: {e}")))?;
        Ok((self.out, self.split_addresses))
    }
}
