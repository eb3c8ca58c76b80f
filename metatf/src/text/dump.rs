//! A container's records printed in the text form (or as JSON lines), the inverse of
//! [`super::encode`].

use std::io::{BufWriter, Read, Write};

use super::{quote, record_json, record_line, record_line_into};
use crate::error::Error;
use crate::model::PROPERTY_ENGINE;
use crate::universal::{DynRecord, Step, UniversalReader};

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
    // One record, refilled for each: a modelled block's records then allocate nothing.
    let mut rec = DynRecord::default();
    while let Some(step) = reader.read_event(&mut rec)? {
        match step {
            Step::Block {
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
            Step::Record => {
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

/// Prints the records of a container as the text form's record lines only — no `#format`,
/// `#property` or `#block` lines: the text `encode_text` read, when it had none of those.
/// Returns the number of records printed.
pub fn print_records(r: impl Read, out: impl Write) -> Result<u64, Error> {
    let mut reader = UniversalReader::new(r)?;
    let catalog = reader.catalog();
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let mut records = 0u64;
    // One record and one line, refilled for each record: no allocation per line.
    let mut rec = DynRecord::default();
    let mut line = String::with_capacity(256);
    while reader.read_record(&mut rec)? {
        line.clear();
        record_line_into(&catalog, &rec, &mut line)
            .map_err(|m| Error::record(None, records, &rec.name, m))?;
        line.push('\n');
        out.write_all(line.as_bytes()).map_err(output)?;
        records += 1;
    }
    out.flush().map_err(output)?;
    Ok(records)
}

/// A failed write of the printed text.
pub(super) fn output(e: std::io::Error) -> Error {
    Error::Output { source: e }
}
