//! Reading HATF 1.0 records, one at a time, from any `io::Read`.
//!
//! Memory is bounded: the largest single allocation is a comment or a v2 attributes string
//! (at most 65535 bytes). After the first error the reader yields nothing more.

use super::codes::{interp, op, tag, Field, Width};
use super::error::NativeError;
use super::record::{DataRecord, Record, RecordKind, Slot};
use super::state::{Config, Interpretation, Metadata};
use std::io::{BufReader, ErrorKind, Read};

/// A byte source that counts its offset.
struct Source<R: Read> {
    inner: BufReader<R>,
    offset: u64,
}

impl<R: Read> Source<R> {
    fn new(inner: R) -> Self {
        Source {
            inner: BufReader::with_capacity(1 << 16, inner),
            offset: 0,
        }
    }

    /// One byte, or `None` at a clean end of input.
    fn byte_or_eof(&mut self) -> std::io::Result<Option<u8>> {
        let mut b = [0u8; 1];
        loop {
            match self.inner.read(&mut b) {
                Ok(0) => return Ok(None),
                Ok(_) => {
                    self.offset += 1;
                    return Ok(Some(b[0]));
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn exact(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_exact(buf)?;
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn be(&mut self, n: usize) -> std::io::Result<u64> {
        let mut buf = [0u8; 8];
        self.exact(&mut buf[8 - n..])?;
        Ok(u64::from_be_bytes(buf))
    }
}

/// Reads HATF 1.0 records from `R`, starting from the default configuration.
pub struct NativeReader<'a, R: Read> {
    input: Source<R>,
    addresses: Option<Source<Box<dyn Read + 'a>>>,
    config: Config,
    record: u64,
    record_start: u64,
    failed: bool,
}

impl<'a, R: Read> NativeReader<'a, R> {
    /// A reader of one self-contained stream.
    pub fn new(input: R) -> Self {
        NativeReader {
            input: Source::new(input),
            addresses: None,
            config: Config::default(),
            record: 0,
            record_start: 0,
            failed: false,
        }
    }

    /// A reader of a stream written by `NativeWriter::with_split_addresses`: the stored bytes of
    /// every address field come from `addresses`.
    pub fn with_split_addresses(input: R, addresses: Box<dyn Read + 'a>) -> Self {
        NativeReader {
            addresses: Some(Source::new(addresses)),
            ..NativeReader::new(input)
        }
    }

    /// The configuration the next record will be read with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Records read so far.
    pub fn records_read(&self) -> u64 {
        self.record
    }

    fn error(&self, field: Option<&'static str>, message: impl Into<String>) -> NativeError {
        NativeError {
            offset: self.record_start,
            record: self.record,
            field,
            message: message.into(),
        }
    }

    fn io_error(&self, field: Option<&'static str>, e: std::io::Error) -> NativeError {
        let what = if e.kind() == ErrorKind::UnexpectedEof {
            format!(
                "the input ends inside the record (at byte {})",
                self.input.offset
            )
        } else {
            format!("cannot read: {e}")
        };
        self.error(field, what)
    }

    /// Reads the next record; `Ok(None)` at the end of the input.
    pub fn read_record(&mut self) -> Result<Option<Record>, NativeError> {
        if self.failed {
            return Ok(None);
        }
        let result = self.read_inner();
        match &result {
            Err(_) => self.failed = true,
            Ok(Some(_)) => self.record += 1,
            Ok(None) => {}
        }
        result
    }

    fn read_inner(&mut self) -> Result<Option<Record>, NativeError> {
        self.record_start = self.input.offset;
        let t = match self.input.byte_or_eof() {
            Ok(Some(t)) => t,
            Ok(None) => return self.check_addresses_used().map(|()| None),
            Err(e) => return Err(self.io_error(None, e)),
        };
        match t {
            tag::COMMENT => self.read_comment().map(Some),
            tag::METADATA => self.read_metadata().map(Some),
            _ => match RecordKind::from_tag(t) {
                Some(kind) => self.read_data(kind).map(Some),
                None => Err(self.error(
                    Some("tag"),
                    format!("tag {t} is not a HATF 1.0 record (0..=11)"),
                )),
            },
        }
    }

    fn check_addresses_used(&mut self) -> Result<(), NativeError> {
        let leftover = match self.addresses.as_mut() {
            None => return Ok(()),
            Some(src) => match src.byte_or_eof() {
                Ok(None) => return Ok(()),
                Ok(Some(_)) => format!(
                    "the address stream has bytes left after the last record (from its byte {})",
                    src.offset - 1
                ),
                Err(e) => format!("cannot read the address stream: {e}"),
            },
        };
        Err(self.error(Some("address"), leftover))
    }

    fn read_comment(&mut self) -> Result<Record, NativeError> {
        let mut head = [0u8; 3];
        self.input
            .exact(&mut head)
            .map_err(|e| self.io_error(Some("length"), e))?;
        if head[0] != 0 {
            return Err(self.error(
                Some("reserved"),
                format!(
                    "byte 1 of a comment is reserved and must be 0, not {}",
                    head[0]
                ),
            ));
        }
        let len = usize::from(u16::from_be_bytes([head[1], head[2]]));
        let mut text = vec![0u8; len];
        self.input
            .exact(&mut text)
            .map_err(|e| self.io_error(Some("string"), e))?;
        Ok(Record::Comment(text))
    }

    fn read_metadata(&mut self) -> Result<Record, NativeError> {
        let mut head = [0u8; 3];
        self.input
            .exact(&mut head)
            .map_err(|e| self.io_error(Some("metadata"), e))?;
        let [operation, field_code, a2] = head;
        let field = Field::from_code(field_code).ok_or_else(|| {
            self.error(
                Some("field"),
                format!("field code {field_code} is not one of 0 size .. 5 attributes"),
            )
        })?;
        let meta = match operation {
            op::SET_FIELD_SIZE => {
                let width = Width::from_code(a2).ok_or_else(|| {
                    self.error(
                        Some("width"),
                        format!("width code {a2} is not HATF 1.0 (0, 1, 2, 4, 8, 9 = v1, 10 = v2)"),
                    )
                })?;
                Metadata::SetSize(field, width)
            }
            op::SET_FIELD_INTERPRETATION => {
                let arg = |me: &mut Self| {
                    me.input
                        .be(8)
                        .map_err(|e| me.io_error(Some("argument"), e))
                };
                let i = match a2 {
                    interp::NONE => Interpretation::None,
                    interp::DEFAULT => Interpretation::Default(arg(self)?),
                    interp::BASE_OFFSET => Interpretation::BaseOffset(arg(self)?),
                    interp::DELTA => Interpretation::Delta(arg(self)?),
                    interp::STRIDE => {
                        let initial = arg(self)?;
                        let stride = arg(self)?;
                        Interpretation::Stride { initial, stride }
                    }
                    other => {
                        return Err(self.error(
                            Some("interpretation"),
                            format!("interpretation code {other} is not one of 0 none .. 4 stride"),
                        ))
                    }
                };
                Metadata::SetInterpretation(field, i)
            }
            other => {
                return Err(self.error(
                    Some("op"),
                    format!("metadata operation {other} is not 1 (set fieldSize) or 2 (set fieldInterpretation)"),
                ))
            }
        };
        self.config
            .apply(&meta)
            .map_err(|m| self.error(Some(field.name()), m))?;
        Ok(Record::Metadata(meta))
    }

    fn read_data(&mut self, kind: RecordKind) -> Result<Record, NativeError> {
        let mut rec = DataRecord::new(kind);
        for &slot in kind.layout() {
            if slot == Slot::Attributes {
                rec.attributes = self.read_attributes()?;
                continue;
            }
            let field = slot.field();
            let Width::Fixed(w) = self.config.width(field) else {
                return Err(
                    self.error(Some(slot.name()), "a numeric field cannot have width v1/v2")
                );
            };
            let from_split = self.addresses.is_some() && field == Field::Address;
            let raw = if from_split {
                let src = self.addresses.as_mut().map(|s| s.be(usize::from(w)));
                match src {
                    Some(Ok(v)) => v,
                    Some(Err(e)) => {
                        return Err(self.error(
                            Some(slot.name()),
                            format!("the address stream ends early ({e})"),
                        ))
                    }
                    None => 0,
                }
            } else {
                self.input
                    .be(usize::from(w))
                    .map_err(|e| self.io_error(Some(slot.name()), e))?
            };
            let v = self.config.decode_numeric(field, raw);
            rec.set(slot, v);
        }
        Ok(Record::Data(rec))
    }

    fn read_attributes(&mut self) -> Result<Vec<u8>, NativeError> {
        if let Some(d) = self.config.default_attributes() {
            return Ok(d);
        }
        let len = match self.config.width(Field::Attributes) {
            Width::Fixed(n) => usize::from(n),
            Width::V1 => self
                .input
                .be(1)
                .map_err(|e| self.io_error(Some("attributes length"), e))?
                as usize,
            Width::V2 => self
                .input
                .be(2)
                .map_err(|e| self.io_error(Some("attributes length"), e))?
                as usize,
        };
        let mut bytes = vec![0u8; len];
        self.input
            .exact(&mut bytes)
            .map_err(|e| self.io_error(Some("attributes"), e))?;
        Ok(bytes)
    }
}

impl<R: Read> Iterator for NativeReader<'_, R> {
    type Item = Result<Record, NativeError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_record().transpose()
    }
}
