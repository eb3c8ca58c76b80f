//! Encoding an `.trace.gz`: the container layout [`LAYOUT`] (gzip head and tail bytes,
//! preflate's reconstruction data piece by piece and the modelled protobuf, in one block;
//! docs/FORMAT.md §6.1, `malloc-bench`), or the file's bytes as they are ([`raw_store`]) when
//! the deflate stream cannot be rebuilt exactly.

use std::io::{Read, Write};

use metatf::container::{Codec, ContainerWriter, SectionData};

use super::{mixed_parts, model};
use super::{
    CORRECTIONS, HEAD, LAYOUT, MODEL, MODEL_CM2_BOUNDED, MODEL_CM2_PARTS, MODEL_LZMA, TAIL,
};
use crate::format::{Compression, EncodeOptions, EncodeReport, FormatError};
use crate::shared::archive::deflate::gzip_split;
use crate::shared::archive::{raw_store, rebuilt_check};
use crate::shared::coding::{context_mix, lzma_alone};
use crate::shared::container::blocks::{container_error, write_error, DEFAULT_ZSTD_LEVEL};

/// Model streams shorter than this are also tried with zstd: only there can its smaller
/// framing win. On every corpus stream of this length or more, zstd at level 19 is 5 to 20 %
/// larger than LZMA, and the trial would cost up to 1.5 s.
const ZSTD_TRIED_BELOW: usize = 64 << 10;

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
    // In pieces (bounded memory), or as one piece when preflate cannot take the stream in
    // pieces and its text is short (gzip_split::split_bounded).
    let (head, pieces, text, tail) = match gzip_split::split_bounded(&gz) {
        Ok(p) => (p.head, p.pieces, p.text, p.tail),
        Err(reason) => {
            let reason = format!("the deflate stream could not be rebuilt exactly: {reason}");
            return raw_store::encode(format, dtd, &reason, &mut &gz[..], output, options);
        }
    };
    let corrections = gzip_split::encode_pieces(&pieces);
    drop(pieces);
    let input_bytes = gz.len() as u64;
    let archive_crc = rebuilt_check::property(&gz);
    drop(gz);
    let mut stream = Vec::with_capacity(text.len() / 4);
    let records = model::encode_runs(&text, &mut stream);
    drop(text);
    let (codec, level) = match options.compression {
        Compression::None => (Codec::None, 0),
        Compression::Gzip => (Codec::Gzip, options.level.unwrap_or(9)),
        Compression::Zstd => (Codec::Zstd, options.level.unwrap_or(DEFAULT_ZSTD_LEVEL)),
    };
    // With the default compression, the model stream goes through whichever of the context
    // mixer, LZMA and zstd gives the fewest bytes (docs/FORMAT.md); otherwise through the
    // container's codec as chosen.
    let packed = match options.compression {
        Compression::Zstd => {
            best_packing(&stream, level, options.threads).map_err(|m| FormatError {
                file: file.to_string(),
                position: String::new(),
                message: m,
            })?
        }
        _ => None,
    };
    let header = rebuilt_check::header(dtd, format, LAYOUT, archive_crc);
    let section = |number, codec, bytes| SectionData {
        number,
        element_width: 1,
        codec,
        level,
        bytes,
    };
    let mut sections = vec![
        section(HEAD, codec, &head[..]),
        section(CORRECTIONS, codec, &corrections[..]),
        section(TAIL, Codec::None, &tail[..]),
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
        input_bytes,
    })
}

/// The smallest self-packed form of `stream` (section number and bytes), or `None` when the
/// container's zstd at `level` is smaller (tried only below [`ZSTD_TRIED_BELOW`]).
///
/// With two threads or more, a stream coded whole by the mixer is coded while LZMA (and zstd)
/// run on the caller's thread; a stream in parts has its parts coded side by side, then LZMA
/// runs: so at most the parts' tables, or the mixer's and LZMA's, are in memory at once
/// ([`LAYOUT`]'s bounds). The bytes do not depend on `threads`.
fn best_packing(
    stream: &[u8],
    level: i32,
    threads: usize,
) -> Result<Option<(u8, Vec<u8>)>, String> {
    let others = || -> Result<(Vec<u8>, usize), String> {
        let lzma = lzma_alone::compress_with_dict(stream, lzma_alone::BOUNDED_DICT)?;
        // Measured as the container will compress it (its window cap also bounds the memory).
        let zstd = if stream.len() < ZSTD_TRIED_BELOW {
            metatf::container::zstd_compress(level, stream).map_or(usize::MAX, |z| z.len())
        } else {
            usize::MAX
        };
        Ok((lzma, zstd))
    };
    let parts = mixed_parts::parts_for(stream.len());
    let (cm, cm_section, (lzma, zstd)) = if parts > 1 {
        let cm = mixed_parts::compress(stream, parts, threads);
        (cm, MODEL_CM2_PARTS, others()?)
    } else {
        let whole = || {
            context_mix::v2::compress_with_tables(
                stream,
                context_mix::v2::BOUNDED_STREAM_TABLE_BITS,
            )
        };
        let (cm, others) = if threads > 1 {
            std::thread::scope(|s| {
                let mixed = s.spawn(whole);
                let others = others();
                let cm = mixed
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p));
                (cm, others)
            })
        } else {
            (whole(), others())
        };
        (cm, MODEL_CM2_BOUNDED, others?)
    };
    Ok(if zstd <= cm.len().min(lzma.len()) {
        None
    } else if cm.len() <= lzma.len() {
        Some((cm_section, cm))
    } else {
        Some((MODEL_LZMA, lzma))
    })
}
