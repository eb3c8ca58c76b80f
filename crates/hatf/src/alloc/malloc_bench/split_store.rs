//! The container layout of an encoded `.trace.gz`: gzip head and tail bytes, preflate's
//! reconstruction data and the modelled protobuf, in one block (docs/FORMAT.md §6.1,
//! `malloc-bench`). Falls back to storing the file's bytes ([`raw_store`]) when the deflate
//! stream cannot be rebuilt exactly.

use std::io::{Read, Write};

use metatf::container::{Codec, ContainerHeader, ContainerWriter, SectionData, PROPERTY_LAYOUT};

use super::{gzip_split, model};
use crate::alloc::blocks::{self, container_error, write_error, DEFAULT_ZSTD_LEVEL};
use crate::alloc::{context_mix, lzma_alone, raw_store};
use crate::format::{Compression, DecodeOptions, EncodeOptions, EncodeReport, FormatError};

/// Value of the `layout` property for this layout.
pub const LAYOUT: &str = "malloc-bench-preflate-1";
/// Section: the gzip header bytes.
pub const HEAD: u8 = 0;
/// Section: preflate's reconstruction data.
pub const CORRECTIONS: u8 = 1;
/// Section: the bytes after the deflate stream (CRC-32, size, anything after).
pub const TAIL: u8 = 2;
/// Section: the model stream, compressed by the container's codec.
pub const MODEL: u8 = 3;
/// Section: the model stream as an LZMA "alone" stream (container codec none).
pub const MODEL_LZMA: u8 = 4;
/// Section: the model stream through [`context_mix`] (container codec none).
pub const MODEL_CM: u8 = 5;

/// Largest input read (the split needs the whole file in memory).
const MAX_INPUT: u64 = 1 << 30;

/// Encodes a `.trace.gz`: split and model when the rebuild matches, else the bytes as they are.
pub fn encode(
    format: &str,
    dtd: &str,
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let mut gz = Vec::new();
    input
        .take(MAX_INPUT)
        .read_to_end(&mut gz)
        .map_err(|e| FormatError {
            file: file.to_string(),
            position: format!("byte {}", gz.len()),
            message: format!("cannot read the input: {e}"),
        })?;
    if gz.len() as u64 == MAX_INPUT {
        let reason = "the file is too large to rebuild its deflate stream in memory";
        let mut rest = (&gz[..]).chain(input);
        return raw_store::encode(format, dtd, reason, &mut rest, output, options);
    }
    let parts = match gzip_split::split(&gz) {
        Ok(p) => p,
        Err(reason) => {
            let reason = format!("the deflate stream could not be rebuilt exactly: {reason}");
            return raw_store::encode(format, dtd, &reason, &mut &gz[..], output, options);
        }
    };
    let mut stream = Vec::with_capacity(parts.text.len() / 4);
    let records = model::encode(&parts.text, &mut stream);
    let (codec, level) = match options.compression {
        Compression::None => (Codec::None, 0),
        Compression::Gzip => (Codec::Gzip, options.level.unwrap_or(9)),
        Compression::Zstd => (Codec::Zstd, options.level.unwrap_or(DEFAULT_ZSTD_LEVEL)),
    };
    // With the default compression, the model stream goes through whichever of the context
    // mixer, LZMA and zstd gives the fewest bytes (docs/FORMAT.md); otherwise through the
    // container's codec as chosen.
    let packed = match options.compression {
        Compression::Zstd => best_packing(&stream, level).map_err(|m| FormatError {
            file: file.to_string(),
            position: String::new(),
            message: m,
        })?,
        _ => None,
    };
    let header = ContainerHeader {
        dtd: dtd.to_string(),
        format: format.to_string(),
        properties: vec![
            ("encoding".to_string(), "auto".to_string()),
            (PROPERTY_LAYOUT.to_string(), LAYOUT.to_string()),
            ("deflate".to_string(), "preflate".to_string()),
        ],
    };
    let section = |number, codec, bytes| SectionData {
        number,
        element_width: 1,
        codec,
        level,
        bytes,
    };
    let mut sections = vec![
        section(HEAD, codec, &parts.head[..]),
        section(CORRECTIONS, codec, &parts.corrections[..]),
        section(TAIL, Codec::None, &parts.tail[..]),
    ];
    match &packed {
        Some((number, bytes)) => sections.push(section(*number, Codec::None, &bytes[..])),
        None => sections.push(section(MODEL, codec, &stream[..])),
    }
    sections.retain(|s| !s.bytes.is_empty());
    let mut w = ContainerWriter::new(output, &header).map_err(|e| container_error(file, e))?;
    w.write_block(records, &sections)
        .map_err(|e| container_error(file, e))?;
    let out = w.finish().map_err(|e| container_error(file, e))?;
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(EncodeReport {
        records,
        bad_lines: 0,
        input_bytes: gz.len() as u64,
    })
}

/// The smallest self-packed form of `stream` (section number and bytes), or `None` when the
/// container's zstd at `level` is smaller.
fn best_packing(stream: &[u8], level: i32) -> Result<Option<(u8, Vec<u8>)>, String> {
    let cm = context_mix::compress(stream);
    let lzma = lzma_alone::compress(stream)?;
    let zstd = zstd::bulk::compress(stream, level).map_or(usize::MAX, |z| z.len());
    Ok(if zstd <= cm.len().min(lzma.len()) {
        None
    } else if cm.len() <= lzma.len() {
        Some((MODEL_CM, cm))
    } else {
        Some((MODEL_LZMA, lzma))
    })
}

/// Writes the original `.trace.gz` back, from either layout.
pub fn decode(
    format: &str,
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut r = blocks::open(input, format, file)?;
    let layout = r
        .header()
        .property(PROPERTY_LAYOUT)
        .unwrap_or("")
        .to_string();
    let mut n = 0;
    while let Some(b) = r.next_block().map_err(|e| container_error(file, e))? {
        n += 1;
        if layout != LAYOUT {
            // Stored as is (raw_store layout).
            output
                .write_all(blocks::section(&b, raw_store::RAW))
                .map_err(|e| write_error(file, e))?;
            continue;
        }
        let bad = |m: String| FormatError {
            file: file.to_string(),
            position: format!("block {}", b.index),
            message: m,
        };
        let (cm, lzma) = (
            blocks::section(&b, MODEL_CM),
            blocks::section(&b, MODEL_LZMA),
        );
        let stream = if !cm.is_empty() {
            context_mix::decompress(cm).map_err(bad)?
        } else if !lzma.is_empty() {
            lzma_alone::decompress(lzma).map_err(bad)?
        } else {
            blocks::section(&b, MODEL).to_vec()
        };
        let mut text = Vec::with_capacity(stream.len() * 4);
        model::decode(&stream, &mut text).map_err(bad)?;
        let gz = gzip_split::join(
            blocks::section(&b, HEAD),
            blocks::section(&b, CORRECTIONS),
            &text,
            blocks::section(&b, TAIL),
        )
        .map_err(bad)?;
        output.write_all(&gz).map_err(|e| write_error(file, e))?;
    }
    output.flush().map_err(|e| write_error(file, e))?;
    Ok(n)
}
