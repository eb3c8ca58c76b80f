//! Container → the text it was encoded from, through the line patterns of its embedded DTD.

use std::collections::HashMap;
use std::io::{BufWriter, Read, Write};

use metatf_dtd::lines::{LineRecord, Unmatched};

use super::printer::print;
use super::{LineEnd, PROPERTY_LINE_END};
use crate::error::Error;
use crate::universal::{DynRecord, UniversalReader, Value};

/// Writes the text a container written by [`super::encode_lines`] was encoded from, byte for
/// byte; returns the number of records read.
pub fn decode_lines(r: impl Read, out: impl Write) -> Result<u64, Error> {
    let mut reader = UniversalReader::new(r)?;
    let header = reader.header().clone();
    let end = match header.property(PROPERTY_LINE_END) {
        Some(name) => LineEnd::from_name(name).ok_or_else(|| Error::Corrupt {
            offset: 0,
            message: format!("unknown line ending `{name}` in the header"),
        })?,
        None => {
            return Err(Error::InvalidArgument {
                message: "the file was not encoded from a text by line patterns (its header has no line ending)".into(),
            })
        }
    };
    let (_, spec) =
        metatf_dtd::parse_schema_with_lines(&header.dtd, "<embedded DTD>").map_err(|d| {
            Error::Schema {
                message: d.to_string(),
            }
        })?;
    let patterns = PatternIndex::new(&spec.records);
    // The record unmatched lines were kept in, besides the built-in `comment`.
    let kept = match &spec.unmatched {
        Unmatched::Record { name, tag, .. } => Some((name.as_str(), *tag)),
        Unmatched::Verbatim | Unmatched::Error => None,
    };
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let mut line = Vec::with_capacity(256);
    let mut records = 0u64;
    // One record, refilled in place: no allocation per line.
    let mut rec = DynRecord::default();
    while reader.read_record(&mut rec)? {
        records += 1;
        let verbatim = rec.name == "comment" || kept == Some((rec.name.as_str(), rec.tag));
        let pattern = patterns
            .find(rec.section, rec.tag)
            .or_else(|| patterns.find(None, rec.tag))
            .filter(|_| !verbatim);
        match pattern {
            Some(i) => {
                line.clear();
                print(&spec.records[i], &rec.fields, &mut line)
                    .map_err(|m| Error::record(None, records - 1, &rec.name, m))?;
                line.extend_from_slice(end.bytes());
                out.write_all(&line).map_err(output)?;
            }
            None if verbatim => match rec.fields.get(1) {
                Some(Value::Bytes(b)) => out.write_all(b).map_err(output)?,
                _ => {
                    return Err(Error::record(
                        None,
                        records - 1,
                        &rec.name,
                        "a comment without its bytes",
                    ))
                }
            },
            None if rec.name == "section" || rec.name == "metadata" => {}
            None => {
                return Err(Error::record(
                    None,
                    records - 1,
                    &rec.name,
                    "the record has no line pattern, so it has no text",
                ))
            }
        }
    }
    out.flush().map_err(output)?;
    Ok(records)
}

fn output(e: std::io::Error) -> Error {
    Error::Output { source: e }
}

/// The pattern of each (section, tag), looked up once per record: a flat table for one-byte
/// tags (every record of most DTDs), a map for the rest.
struct PatternIndex {
    /// Index `scope * 256 + tag`, scope 0 for global records and `section + 1` otherwise;
    /// `u32::MAX` when no record has a pattern there.
    dense: Vec<u32>,
    sparse: HashMap<(Option<u8>, u64), usize>,
}

impl PatternIndex {
    fn new(records: &[LineRecord]) -> PatternIndex {
        let mut index = PatternIndex {
            dense: vec![u32::MAX; 257 * 256],
            sparse: HashMap::new(),
        };
        for (i, r) in records.iter().enumerate() {
            match (Self::slot(r.section, r.tag), u32::try_from(i)) {
                (Some(slot), Ok(i)) => index.dense[slot] = i,
                _ => {
                    index.sparse.insert((r.section, r.tag), i);
                }
            }
        }
        index
    }

    fn slot(section: Option<u8>, tag: u64) -> Option<usize> {
        let scope = section.map_or(0, |s| usize::from(s) + 1);
        (tag < 256).then(|| scope * 256 + tag as usize)
    }

    #[inline]
    fn find(&self, section: Option<u8>, tag: u64) -> Option<usize> {
        match Self::slot(section, tag) {
            Some(slot) => match self.dense[slot] {
                u32::MAX => None,
                i => Some(i as usize),
            },
            None => self.sparse.get(&(section, tag)).copied(),
        }
    }
}
