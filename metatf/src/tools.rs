//! What the `hatf` command line calls: inspect a container, dump its records as text or JSON,
//! and encode the text form back into a container.

use std::fmt;
use std::io::{BufRead, BufWriter, Read, Write};

use serde::Serialize;

use crate::container::{
    ByteOrder, Codec, ContainerHeader, ContainerReader, DtdIdentity, DtdStorage, SectionDescriptor,
};
use crate::error::Error;
use crate::model::{ENGINE_MODEL, PROPERTY_ENGINE};
use crate::text::{parse_line, quote, record_json, record_line, Line};
use crate::universal::plan::{Builtin, Catalog};
use crate::universal::{Event, UniversalReader, UniversalWriter, Value};

/// Longest line [`encode_text`] accepts (64 MiB).
pub const MAX_TEXT_LINE: u64 = 64 << 20;

/// What [`inspect`] finds in a container.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    /// Producer format id.
    pub format: String,
    /// Header properties in order.
    pub properties: Vec<(String, String)>,
    /// Byte order of the trace data.
    pub byte_order: ByteOrder,
    /// The DTD text: embedded, or supplied by [`Inspection::resolve_dtd`] for a file that
    /// references it (empty until then).
    pub dtd: String,
    /// How the file stores its DTD.
    pub dtd_storage: DtdStorage,
    /// Length and CRC-32 of a DTD the file references instead of carrying.
    pub dtd_reference: Option<DtdIdentity>,
    /// Every block with its section descriptors.
    pub blocks: Vec<BlockInfo>,
    /// Records in all blocks.
    pub total_records: u64,
    /// Size of the container in bytes (header, blocks, index and trailer).
    pub total_bytes: u64,
    /// Size on disk of a compact container (version 3); `total_bytes` and block offsets are
    /// then those of the full form it encodes.
    pub compact_bytes: Option<u64>,
}

/// One block as [`inspect`] reports it.
#[derive(Debug, Clone, Serialize)]
pub struct BlockInfo {
    /// Block number.
    pub index: u64,
    /// Byte offset of the block header.
    pub offset: u64,
    /// Number of the block's first record.
    pub first_record: u64,
    /// Records in the block.
    pub record_count: u64,
    /// The block's sections: number, element width, codec, sizes, checksums.
    pub sections: Vec<SectionDescriptor>,
    /// The thread ids of the block's records, when the index lists them (else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<u64>,
}

impl fmt::Display for Inspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "format: {}", self.format)?;
        writeln!(f, "byte order: {:?}", self.byte_order)?;
        for (k, v) in &self.properties {
            writeln!(f, "property {k} = {v}")?;
        }
        match (self.dtd_reference, self.dtd.is_empty()) {
            (Some(id), true) => writeln!(
                f,
                "DTD: referenced, not carried ({} bytes, CRC-32 {:08x}); unknown to this reader",
                id.length, id.crc32
            )?,
            _ => writeln!(
                f,
                "DTD: {} bytes, {} lines, stored {}",
                self.dtd.len(),
                self.dtd.lines().count(),
                self.dtd_storage.name()
            )?,
        }
        if let Some(n) = self.compact_bytes {
            writeln!(
                f,
                "compact form (container version 3): {n} bytes on disk; the sizes and offsets \
                 below are those of the full form it encodes"
            )?;
        }
        writeln!(
            f,
            "{} blocks, {} records, {} bytes",
            self.blocks.len(),
            self.total_records,
            self.total_bytes
        )?;
        for b in &self.blocks {
            writeln!(
                f,
                "block {} at byte {}: records {}..{} ({})",
                b.index,
                b.offset,
                b.first_record,
                b.first_record + b.record_count,
                b.record_count
            )?;
            if !b.threads.is_empty() {
                let ids: Vec<String> = b.threads.iter().map(u64::to_string).collect();
                writeln!(f, "  threads: {}", ids.join(", "))?;
            }
            for s in &b.sections {
                writeln!(
                    f,
                    "  section {}: element width {}, {}, {} bytes stored, {} uncompressed",
                    s.number, s.element_width, s.codec, s.stored_len, s.uncompressed_len
                )?;
            }
        }
        Ok(())
    }
}

/// Reads a whole container, verifying every checksum, and describes it.
pub fn inspect(r: impl Read) -> Result<Inspection, Error> {
    let mut c = ContainerReader::new(r)?;
    let header = c.header().clone();
    let (dtd_storage, dtd_reference) = (c.dtd_storage(), c.dtd_reference());
    let byte_order = header.byte_order()?;
    let mut blocks = Vec::new();
    while let Some(b) = c.next_block()? {
        blocks.push(BlockInfo {
            index: b.index,
            offset: b.offset,
            first_record: b.first_record,
            record_count: b.record_count,
            sections: c.last_descriptors().to_vec(),
            threads: Vec::new(),
        });
    }
    if let Some(lists) = c.block_threads() {
        for (b, list) in blocks.iter_mut().zip(lists) {
            b.threads.clone_from(list);
        }
    }
    Ok(Inspection {
        format: header.format,
        properties: header.properties,
        byte_order,
        dtd: header.dtd,
        dtd_storage,
        dtd_reference,
        blocks,
        total_records: c.records_read(),
        total_bytes: c.position(),
        compact_bytes: c.compact_len(),
    })
}

impl Inspection {
    /// Supplies the text of a referenced DTD when `text` is the one the file names (same
    /// length and CRC-32); returns whether it was accepted.
    pub fn resolve_dtd(&mut self, text: &str) -> bool {
        match self.dtd_reference {
            Some(id) if self.dtd.is_empty() && id.matches(text) => {
                self.dtd = text.to_string();
                true
            }
            _ => false,
        }
    }
}

fn output(e: std::io::Error) -> Error {
    Error::Output { source: e }
}

/// Prints every record of a container (decoded with its embedded DTD) in the text form, or as
/// one JSON object per line; returns the number of records.
pub fn dump(r: impl Read, out: impl Write, json: bool) -> Result<u64, Error> {
    let mut reader = UniversalReader::new(r)?;
    let catalog = reader.catalog();
    let mut out = BufWriter::new(out);
    let header = reader.header().clone();
    if json {
        let h = serde_json::json!({"format": header.format, "properties": header.properties});
        writeln!(out, "{h}").map_err(output)?;
    } else {
        let mut s = String::from("#format ");
        quote(&mut s, header.format.as_bytes());
        writeln!(out, "{s}").map_err(output)?;
        // The engine is how the records are laid out, not what they say: re-encoding the
        // text chooses it again (`encode --model`), so the text stays the same either way.
        for (k, v) in header
            .properties
            .iter()
            .filter(|(k, _)| k != PROPERTY_ENGINE)
        {
            let mut s = String::from("#property ");
            quote(&mut s, k.as_bytes());
            s.push(' ');
            quote(&mut s, v.as_bytes());
            writeln!(out, "{s}").map_err(output)?;
        }
    }
    let mut records = 0u64;
    while let Some(event) = reader.next_event()? {
        match event {
            Event::Block {
                index,
                record_count,
            } => {
                if json {
                    let b = serde_json::json!({"block": index, "records": record_count});
                    writeln!(out, "{b}").map_err(output)?;
                } else {
                    writeln!(out, "#block {index}").map_err(output)?;
                }
            }
            Event::Record(rec) => {
                let printed = if json {
                    record_json(&catalog, &rec).map(|v| v.to_string())
                } else {
                    record_line(&catalog, &rec)
                };
                let line = printed.map_err(|m| Error::record(None, records, &rec.name, m))?;
                writeln!(out, "{line}").map_err(output)?;
                records += 1;
            }
        }
    }
    out.flush().map_err(output)?;
    Ok(records)
}

/// Reads a text form line by line, bounding line length, and numbering lines from 1.
/// Prints the records of a container as the text form's record lines only — no `#format`,
/// `#property` or `#block` lines: the text `encode_text` read, when it had none of those.
/// Returns the number of records printed.
pub fn print_records(r: impl Read, out: impl Write) -> Result<u64, Error> {
    let mut reader = UniversalReader::new(r)?;
    let catalog = reader.catalog();
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let mut records = 0u64;
    while let Some(rec) = reader.next_record()? {
        let line =
            record_line(&catalog, &rec).map_err(|m| Error::record(None, records, &rec.name, m))?;
        out.write_all(line.as_bytes()).map_err(output)?;
        out.write_all(b"\n").map_err(output)?;
        records += 1;
    }
    out.flush().map_err(output)?;
    Ok(records)
}

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
    if model == TextModel::Auto && header.property(PROPERTY_ENGINE).is_none() {
        header
            .properties
            .push((PROPERTY_ENGINE.to_string(), ENGINE_MODEL.to_string()));
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
