//! `memory_replay` dumps as AOSP ships them: a zip holding one text file.
//!
//! The corpus zips were written by Info-ZIP `zip` 3.0 (Unix, deflate). Its deflate output is not
//! reproduced by zlib at any level 1–9 (checked on `systemui.zip`: the streams differ from the
//! second byte), so re-deflating the text cannot give the archive back. This encoding therefore
//! stores the archive's bytes as they are (property `deflate = original-bytes`), in bounded
//! chunks, and gives them back byte for byte. Statistics and events inflate the entry.

use std::io::{Read, Write};

use super::line;
use crate::alloc::raw_store;
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError};

/// Format id stored in the container header.
pub const FORMAT: &str = "memory-replay-zip";

/// True when `head` is a zip whose first entry is deflated `memory_replay` text.
pub fn detect(head: &[u8]) -> bool {
    let Some((data_at, method)) = local_entry(head) else {
        return false;
    };
    let data = &head[data_at..];
    let mut text = Vec::new();
    let mut dec = flate2::read::DeflateDecoder::new(data);
    let mut chunk = [0u8; 4096];
    if method == 0 {
        text.extend_from_slice(&data[..data.len().min(4096)]);
    } else if let Ok(n) = dec.read(&mut chunk) {
        text.extend_from_slice(&chunk[..n]);
    }
    let mut lines = text.split(|&b| b == b'\n');
    matches!(lines.next(), Some(l) if line::parse(l).is_ok())
}

/// Offset of the first entry's data and its compression method.
fn local_entry(z: &[u8]) -> Option<(usize, u16)> {
    if !z.starts_with(b"PK\x03\x04") || z.len() < 30 {
        return None;
    }
    let u16_at = |o: usize| u16::from_le_bytes([z[o], z[o + 1]]);
    let method = u16_at(8);
    let at = 30 + usize::from(u16_at(26)) + usize::from(u16_at(28));
    (at <= z.len()).then_some((at, method))
}

/// Stores the archive's bytes.
pub fn encode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let mut head = Vec::with_capacity(4096);
    input
        .take(4096)
        .read_to_end(&mut head)
        .map_err(|e| FormatError {
            file: options.input_name.clone(),
            position: "byte 0".to_string(),
            message: format!("cannot read the input: {e}"),
        })?;
    if !head.starts_with(b"PK\x03\x04") {
        return Err(FormatError {
            file: options.input_name.clone(),
            position: "byte 0".to_string(),
            message: "not a zip archive (no local file header `PK\\x03\\x04`)".to_string(),
        });
    }
    raw_store::encode(
        FORMAT,
        super::DTD,
        "the entry was deflated by Info-ZIP zip 3.0, which zlib does not reproduce",
        &mut std::io::Cursor::new(head).chain(input),
        output,
        options,
    )
}

/// Writes the archive back.
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    raw_store::decode(FORMAT, input, output, options)
}

/// Inflates the archive's first entry into `sink` (for events and statistics).
pub fn inflate_entry(
    input: &mut dyn Read,
    name: &str,
    sink: &mut dyn FnMut(&mut dyn Read) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let mut head = vec![0u8; 30];
    input.read_exact(&mut head).map_err(|e| FormatError {
        file: name.to_string(),
        position: "byte 0".to_string(),
        message: format!("not a zip archive: {e}"),
    })?;
    let u16_at = |o: usize| u16::from_le_bytes([head[o], head[o + 1]]);
    if !head.starts_with(b"PK\x03\x04") {
        return Err(FormatError {
            file: name.to_string(),
            position: "byte 0".to_string(),
            message: "not a zip archive (no local file header)".to_string(),
        });
    }
    let (method, skip) = (u16_at(8), u64::from(u16_at(26)) + u64::from(u16_at(28)));
    std::io::copy(&mut input.take(skip), &mut std::io::sink()).map_err(|e| FormatError {
        file: name.to_string(),
        position: "byte 30".to_string(),
        message: format!("cannot read the zip header: {e}"),
    })?;
    match method {
        0 => sink(input),
        8 => sink(&mut flate2::read::DeflateDecoder::new(input)),
        m => Err(FormatError {
            file: name.to_string(),
            position: "byte 8".to_string(),
            message: format!(
                "zip compression method {m} is not supported (only stored and deflate)"
            ),
        }),
    }
}
