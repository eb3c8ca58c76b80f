//! Container → the text it was encoded from, through the line patterns of its embedded DTD.

use std::collections::HashMap;
use std::io::{BufWriter, Read, Write};

use super::printer::print;
use super::{LineEnd, PROPERTY_LINE_END};
use crate::error::Error;
use crate::universal::{UniversalReader, Value};

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
    let by_tag: HashMap<(Option<u8>, u64), usize> = spec
        .records
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.section, r.tag), i))
        .collect();
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let mut line = Vec::with_capacity(256);
    let mut records = 0u64;
    while let Some(rec) = reader.next_record()? {
        records += 1;
        let pattern = by_tag
            .get(&(rec.section, rec.tag))
            .or_else(|| by_tag.get(&(None, rec.tag)));
        match pattern {
            Some(&i) => {
                line.clear();
                print(&spec.records[i], &rec.fields, &mut line)
                    .map_err(|m| Error::record(None, records - 1, &rec.name, m))?;
                line.extend_from_slice(end.bytes());
                out.write_all(&line).map_err(output)?;
            }
            None if rec.name == "comment" => match rec.fields.get(1) {
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
