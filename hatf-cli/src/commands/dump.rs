//! `hatf dump`: every record of any binary trace, in the text form or as one JSON object per
//! record.

use std::io::BufReader;
use std::path::Path;

use hatf::records::{text_line, Item, RecordFile, RecordType, Value};

use crate::args::DumpArgs;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, open_input, Content, BINARY_READ_AHEAD};
use crate::record_range;
use crate::runtime_error::from_runtime;
use crate::Verbosity;

/// Runs `hatf dump`.
pub fn run(args: &DumpArgs, verbosity: Verbosity) -> CliResult {
    let range = args
        .records
        .as_deref()
        .map(record_range::parse)
        .transpose()?;
    let (first, end) = range.unwrap_or((0, u64::MAX));
    let name = args.file.display().to_string();
    let mut file = open_seekable(&args.file)?;
    let records = RecordFile::open(&mut file, &name)?;
    let universal = records.read_through_dtd();
    let mut out = create_output(None, false, Content::Text)?;
    let count = if universal && !args.json && range.is_none() {
        // A file read through its DTD keeps the text form `encode --from text` reads back,
        // with its metadata and block lines.
        let input =
            crate::compressed::unwrap_binary(open_input(Some(&args.file), BINARY_READ_AHEAD)?)?;
        metatf::dump(input.reader, out.writer(), false).map_err(|e| from_runtime(&name, e))?
    } else {
        let types = records.types();
        let mut line = Vec::with_capacity(256);
        let writer = out.writer();
        let mut failed = None;
        let result = records.read(&mut file, &name, first..end, &mut |item| {
            let Item::Record(r) = item else {
                return Ok(());
            };
            line.clear();
            let t = &types[r.record_type];
            if args.json {
                json_line(t, r.index, r.values, &mut line);
            } else {
                text_line(t, r.values, &mut line);
            }
            writer.write_all(&line).map_err(|e| {
                let message = e.to_string();
                failed = Some(e);
                hatf::FormatError {
                    file: "<stdout>".to_string(),
                    position: String::new(),
                    message,
                }
            })
        });
        match (result, failed) {
            (Ok(n), _) => n,
            (Err(_), Some(e)) => return Err(CliError::input(e.to_string())),
            (Err(e), None) => return Err(e.into()),
        }
    };
    out.commit()?;
    if verbosity.verbose {
        eprintln!("hatf: {count} records");
    }
    Ok(())
}

/// The file, buffered, for a reader that seeks to the blocks it needs. A binary trace kept
/// compressed (`trace.hatf.zst`) is unpacked into an anonymous temporary file first, as a
/// compressed stream cannot be sought in; any other compressed file is returned as it is.
pub fn open_seekable(path: &Path) -> CliResult<BufReader<std::fs::File>> {
    if crate::io::is_std(Some(path)) {
        return Err(CliError::usage(
            "records are read from a file (the reader seeks in it), not from standard input",
        ));
    }
    let name = path.display();
    let mut file =
        std::fs::File::open(path).map_err(|e| CliError::input(format!("{name}: {e}")))?;
    let mut magic = [0u8; 6];
    let got = std::io::Read::read(&mut file, &mut magic)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    std::io::Seek::rewind(&mut file)
        .map_err(|e| CliError::input(format!("{name}: cannot seek: {e}")))?;
    if crate::compressed::Wrapper::detect(&magic[..got]).is_none() {
        return Ok(BufReader::with_capacity(BINARY_READ_AHEAD, file));
    }
    let input = crate::compressed::unwrap_binary(crate::io::Input {
        name: name.to_string(),
        reader: Box::new(file),
        len: None,
        identity: None,
    })?;
    let mut reader = input.reader;
    let mut magic = Vec::with_capacity(4);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut reader, 4), &mut magic)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    if !metatf::container::looks_like_container(&magic) {
        // Compressed text (`hatf export trace.zst`): left to the caller, which reads text as
        // it streams, rather than unpacked here into a temporary file.
        let file =
            std::fs::File::open(path).map_err(|e| CliError::input(format!("{name}: {e}")))?;
        return Ok(BufReader::with_capacity(BINARY_READ_AHEAD, file));
    }
    let mut temp = tempfile::tempfile()
        .map_err(|e| CliError::input(format!("cannot create a temporary file: {e}")))?;
    std::io::copy(
        &mut std::io::Read::chain(magic.as_slice(), reader),
        &mut temp,
    )
    .map_err(|e| CliError::input(format!("{name}: {e}")))?;
    std::io::Seek::rewind(&mut temp)
        .map_err(|e| CliError::input(format!("cannot seek a temporary file: {e}")))?;
    Ok(BufReader::with_capacity(BINARY_READ_AHEAD, temp))
}

/// `{"record":"free","index":7,"address":...}`: one object per record, fields by name,
/// numbers as numbers, byte strings as strings (bytes that are not UTF-8 replaced).
fn json_line(t: &RecordType, index: u64, values: &[Value<'_>], out: &mut Vec<u8>) {
    let string = |s: &str, out: &mut Vec<u8>| {
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    };
    out.extend_from_slice(b"{\"record\":");
    string(&t.name, out);
    out.extend_from_slice(b",\"index\":");
    out.extend_from_slice(itoa::Buffer::new().format(index).as_bytes());
    for (f, v) in t.fields.iter().zip(values) {
        out.push(b',');
        string(&f.name, out);
        out.push(b':');
        match v {
            Value::Null => out.extend_from_slice(b"null"),
            Value::U64(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            Value::I64(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            Value::Bytes(b) => string(&String::from_utf8_lossy(b), out),
        }
    }
    out.extend_from_slice(b"}\n");
}
