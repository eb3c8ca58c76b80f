//! The records of a file hatf wrote, in the record text form `hatf dump` prints and
//! `hatf encode --from text --dtd` reads: one `name field=value ...` line per record, byte
//! strings quoted, a byte string's length field left out (the string implies it).

use crate::format::FormatError;
use crate::records::{text_line, Item, RecordFile};
use std::io::Cursor;

/// The record text of the binary trace `file` and its number of records.
pub fn of_file(file: &[u8], name: &str) -> Result<(Vec<u8>, u64), FormatError> {
    let mut input = Cursor::new(file);
    let records = RecordFile::open(&mut input, name)?;
    let types = records.types();
    // About 40 bytes a record for the built-in formats; the binary is far smaller.
    let mut text = Vec::with_capacity(file.len().saturating_mul(8));
    let count = records.read(&mut input, name, 0..u64::MAX, &mut |item| {
        if let Item::Record(r) = item {
            text_line(&types[r.record_type], r.values, &mut text);
        }
        Ok(())
    })?;
    Ok((text, count))
}

/// The number of records of the binary trace `file`.
pub fn count(file: &[u8], name: &str) -> Result<u64, FormatError> {
    let mut input = Cursor::new(file);
    let records = RecordFile::open(&mut input, name)?;
    records.read(&mut input, name, 0..u64::MAX, &mut |_| Ok(()))
}
