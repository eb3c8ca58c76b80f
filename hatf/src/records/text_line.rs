//! The record text form of one record: the line `hatf dump` prints and
//! `hatf encode --from text --dtd` reads.

use super::{RecordType, Value};

/// Appends `name field=value ...` and a newline for one record: numbers in decimal, byte
/// strings quoted with non-printing bytes escaped, an absent value as `-`.
pub fn text_line(t: &RecordType, values: &[Value<'_>], out: &mut Vec<u8>) {
    out.extend_from_slice(t.name.as_bytes());
    for (f, v) in t.fields.iter().zip(values) {
        out.push(b' ');
        out.extend_from_slice(f.name.as_bytes());
        out.push(b'=');
        match v {
            Value::Null => out.push(b'-'),
            Value::U64(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            Value::I64(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            Value::Bytes(b) => {
                out.push(b'"');
                out.extend(b.escape_ascii());
                out.push(b'"');
            }
        }
    }
    out.push(b'\n');
}
