//! The records of files that keep an archive byte for byte (layout `original-bytes`: a zip or
//! gzip file whose compressed stream hatf could not rebuild exactly): the archive is written
//! back to a temporary file, its trace is read out of it (the zip entry, the gzip member, or
//! the bytes themselves) and cut and parsed as the format's records, as the model's decoder
//! would have given them.

use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::ops::Range;

use super::builtin::Parser;
use super::framing::RecordSink;
use super::value::Item;
use super::Visitor;
use crate::format::{DecodeOptions, FormatError, TraceFormat};
use crate::seek::ReadSeek;
use crate::shared::archive::zip_entry::{self, Wanted};

/// The `layout` property of a file that keeps the archive's bytes.
pub(crate) const ORIGINAL_BYTES: &str = "original-bytes";

/// Visits records `range` of `input`, a `format` file that keeps its archive as is.
pub(crate) fn read(
    input: &mut dyn ReadSeek,
    name: &str,
    format: &dyn TraceFormat,
    parser: Parser,
    range: Range<u64>,
    visitor: &mut Visitor<'_>,
) -> Result<u64, FormatError> {
    let fail = |message: String| FormatError {
        file: name.to_string(),
        position: String::new(),
        message,
    };
    let io_fail = |what: &str, e: io::Error| fail(format!("{what}: {e}"));
    let temp = tempfile::tempfile()
        .map_err(|e| io_fail("cannot create a temporary file for the archive", e))?;
    let mut archive = BufWriter::with_capacity(1 << 20, temp);
    let options = DecodeOptions {
        input_name: name.to_string(),
        ..DecodeOptions::default()
    };
    format.decode(input, &mut archive, &options)?;
    let mut temp = archive
        .into_inner()
        .map_err(|e| io_fail("cannot write the archive", e.into_error()))?;
    temp.rewind()
        .map_err(|e| io_fail("cannot read the archive back", e))?;
    let mut archive = BufReader::with_capacity(1 << 20, temp);
    let mut magic = [0u8; 2];
    let got = archive
        .read(&mut magic)
        .map_err(|e| io_fail("cannot read the archive back", e))?;
    archive
        .rewind()
        .map_err(|e| io_fail("cannot read the archive back", e))?;

    let mut visited = 0u64;
    let mut wanted = |item: Item<'_>| match item {
        Item::Record(r) if !range.contains(&r.index) => Ok(()),
        Item::Record(r) => {
            visited += 1;
            visitor(Item::Record(r))
        }
        block => visitor(block),
    };
    let mut sink = RecordSink::new(parser, 0, &[], &mut wanted);
    let copied = match &magic[..got] {
        b"PK" => zip_trace(&mut archive, format.name(), &mut sink),
        [0x1f, 0x8b] => io::copy(&mut flate2::read::MultiGzDecoder::new(archive), &mut sink),
        _ => io::copy(&mut archive, &mut sink),
    };
    if let Err(e) = copied {
        return Err(sink
            .failure
            .take()
            .unwrap_or_else(|| fail(format!("the archive kept as is cannot be read: {e}"))));
    }
    sink.finish(0)?;
    Ok(visited)
}

/// Copies the trace entry of the zip archive `archive` (a `jvm-zip` archive's member
/// `trace`, another archive's first file) into `out`, through the one zip-entry reader
/// ([`zip_entry::with_entry`]: local headers one after another, so a damaged or cut archive is
/// read up to the damage, and the text held to the size its header declares).
fn zip_trace(archive: &mut impl Read, format: &str, out: &mut impl Write) -> io::Result<u64> {
    let wanted = if format == crate::formats::jvm::zip::FORMAT {
        Wanted::Named(crate::formats::jvm::zip::MEMBER)
    } else {
        Wanted::FirstFile
    };
    zip_entry::with_entry(archive, wanted, |_, text| io::copy(text, out))
        .map_err(io::Error::other)?
}
