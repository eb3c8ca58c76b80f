//! The text form read back into a container: the inverse of [`super::dump`].

use std::io::{BufRead, Read, Write};

use super::dump::output;
use super::{parse_line, Line};
use crate::container::{Codec, ContainerHeader};
use crate::error::Error;
use crate::model::{ENGINE_MODEL, PROPERTY_ENGINE, PROPERTY_STAGE, STAGE_BYTES};
use crate::universal::plan::{Builtin, Catalog};
use crate::universal::{UniversalWriter, Value};

/// The section codec a DTD-driven trace (the text form, or lines read through a DTD's line
/// patterns) is written with unless another is asked for; `hatf encode` and `hatf compare`'s
/// generic columns both use it.
pub const DEFAULT_CODEC: Codec = Codec::Zstd;

/// The level `codec` is run at unless another is asked for: each codec's everyday setting
/// (zstd 3, gzip 6), fast enough that writing keeps up with reading the text.
pub fn default_level(codec: Codec) -> i32 {
    match codec {
        Codec::Gzip => 6,
        _ => 3,
    }
}

/// Longest line [`encode_text`] accepts (64 MiB).
pub const MAX_TEXT_LINE: u64 = 64 << 20;

/// Reads a text form line by line, bounding line length, and numbering lines from 1.
struct Lines<B> {
    text: B,
    buf: String,
    number: u64,
}

impl<B: BufRead> Lines<B> {
    /// The next line's number and text without its line ending, or `None` at the end.
    fn next(&mut self) -> Result<Option<(u64, &str)>, Error> {
        self.buf.clear();
        self.number += 1;
        let n = (&mut self.text)
            .take(MAX_TEXT_LINE)
            .read_line(&mut self.buf)
            .map_err(|e| self.error(1, format!("cannot read the line: {e}")))?;
        if n == 0 {
            return Ok(None);
        }
        match self.buf.strip_suffix('\n') {
            Some(l) => Ok(Some((self.number, l.strip_suffix('\r').unwrap_or(l)))),
            None if n as u64 >= MAX_TEXT_LINE => {
                Err(self.error(1, format!("line longer than {MAX_TEXT_LINE} bytes")))
            }
            None => Ok(Some((self.number, &self.buf))),
        }
    }

    fn error(&self, column: u64, message: impl Into<String>) -> Error {
        Error::Text {
            line: self.number,
            column,
            message: message.into(),
        }
    }
}

/// Reads the text form printed by [`dump`] (not the JSON form) and writes a container with the
/// DTD `schema_source`; returns the number of records written. Block boundaries follow the
/// `#block` lines when there are any, so `dump` → `encode_text` → `dump` prints the same text.
pub fn encode_text(
    schema_source: &str,
    dtd_file_name: &str,
    text: impl BufRead,
    out: impl Write,
    codec: Codec,
    level: i32,
) -> Result<u64, Error> {
    encode_text_with(
        schema_source,
        dtd_file_name,
        text,
        out,
        codec,
        level,
        TextModel::Plain,
    )
}

/// How [`encode_text_with`] lays out the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextModel {
    /// The paper's fixed-width record stream, each section compressed with the codec.
    Plain,
    /// The model engine: predictors chosen per block by measured cost, adaptive range coding
    /// (docs/FORMAT.md, "Model engine"); the codec is not used.
    Auto,
    /// The model engine as with `Auto`, its symbols stored as bytes in zstd-compressed
    /// streams (docs/FORMAT.md, "The byte-stream stage"): a little larger, decodes faster.
    Fast,
}

/// As [`encode_text`], with the record layout chosen by `model`.
pub fn encode_text_with(
    schema_source: &str,
    dtd_file_name: &str,
    text: impl BufRead,
    out: impl Write,
    codec: Codec,
    level: i32,
    model: TextModel,
) -> Result<u64, Error> {
    let schema =
        metatf_dtd::parse_schema(schema_source, dtd_file_name).map_err(|d| Error::Schema {
            message: d.to_string(),
        })?;
    let catalog = Catalog::new(&schema)?;
    let mut lines = Lines {
        text,
        buf: String::new(),
        number: 0,
    };
    let mut header = ContainerHeader {
        dtd: schema_source.to_string(),
        format: String::new(),
        properties: Vec::new(),
    };
    // Header lines first; the first other line is kept for the loop below.
    let mut pending = None;
    while let Some((number, text)) = lines.next()? {
        match parse_line(text, number, &catalog, None)? {
            Line::Blank => {}
            Line::Format(f) => header.format = f,
            Line::Property(k, v) => header.properties.push((k, v)),
            other => {
                pending = Some(other);
                break;
            }
        }
    }
    if model != TextModel::Plain && header.property(PROPERTY_ENGINE).is_none() {
        header
            .properties
            .push((PROPERTY_ENGINE.to_string(), ENGINE_MODEL.to_string()));
    }
    if model == TextModel::Fast && header.property(PROPERTY_STAGE).is_none() {
        header
            .properties
            .push((PROPERTY_STAGE.to_string(), STAGE_BYTES.to_string()));
    }
    let mut w = UniversalWriter::new(out, schema, &header, codec, level)?;
    let mut section = None;
    let mut blocks = 0u64;
    loop {
        let line = match pending.take() {
            Some(l) => l,
            None => match lines.next()? {
                Some((number, text)) => parse_line(text, number, &catalog, section)?,
                None => break,
            },
        };
        let at_line = |e: Error| lines.error(1, e.to_string());
        match line {
            Line::Blank => {}
            Line::Format(_) | Line::Property(..) => {
                return Err(lines.error(
                    1,
                    "#format and #property lines must come before any record or block",
                ))
            }
            Line::Block(n) => {
                if n != blocks {
                    return Err(lines.error(8, format!("expected #block {blocks}")));
                }
                if blocks > 0 {
                    w.end_block().map_err(at_line)?;
                }
                // From now on blocks end where the text says, not after a record count.
                w.set_block_records(0);
                blocks += 1;
            }
            Line::Record(rec) => {
                w.write(&rec).map_err(at_line)?;
                let is_section = catalog
                    .by_tag(section, rec.tag)
                    .is_some_and(|p| p.builtin == Builtin::Section);
                if let (true, Some(Value::Uint(n))) = (is_section, rec.fields.first()) {
                    section = u8::try_from(*n).ok();
                }
            }
        }
    }
    if blocks > 0 {
        w.end_block()?;
    }
    let records = w.records_written();
    let mut o = w.finish()?;
    o.flush().map_err(output)?;
    Ok(records)
}
