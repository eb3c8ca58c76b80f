//! `hatf encode --encoding hatf10-dtd`: a text trace's events through the generated writer.

use std::io::{Read, Write};

use metatf::Codec;

use super::{EventWriter, NAME, SOURCE_PROPERTY};
use crate::format::{Compression, EncodeOptions, EncodeReport, FormatError};
use crate::shared::allocation::placed::ForEachPlacedEvent;

/// Counts the bytes read, for [`EncodeReport::input_bytes`].
struct Counting<'a> {
    inner: &'a mut dyn Read,
    bytes: u64,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Reads the events of a text trace of format `source` with `for_each_event` (their places are
/// not kept) and writes them
/// as `hatf10.dtd` records, streaming (memory does not grow with the trace). Lossy with
/// respect to the text: see the module documentation of [`super`].
pub fn encode_text(
    source: &str,
    for_each_event: ForEachPlacedEvent,
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let fail = |message: String| FormatError {
        file: options.input_name.clone(),
        position: String::new(),
        message: format!("encoding {NAME}: {message}"),
    };
    let (codec, default_level) = match options.compression {
        Compression::None => (Codec::None, 0),
        Compression::Gzip => (Codec::Gzip, 6),
        Compression::Zstd => (Codec::Zstd, 3),
    };
    let properties = vec![(SOURCE_PROPERTY.to_string(), source.to_string())];
    let mut writer = EventWriter::new(
        output,
        properties,
        codec,
        options.level.unwrap_or(default_level),
    )
    .map_err(fail)?;
    let mut input = Counting {
        inner: input,
        bytes: 0,
    };
    // The sink cannot return an error: the first one is kept and later events are skipped.
    let mut failed: Option<String> = None;
    for_each_event(&mut input, &options.input_name, &mut |_, e| {
        if failed.is_none() {
            if let Err(m) = writer.write(&e) {
                failed = Some(m);
            }
        }
    })?;
    if let Some(m) = failed {
        return Err(fail(m));
    }
    let records = writer.events();
    writer.finish().map_err(fail)?;
    Ok(EncodeReport {
        records,
        bad_lines: 0,
        input_bytes: input.bytes,
    })
}
