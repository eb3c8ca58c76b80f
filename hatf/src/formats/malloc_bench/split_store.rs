//! The container layout of an encoded `.trace.gz`: gzip head and tail bytes, preflate's
//! reconstruction data (piece by piece, [`LAYOUT`]) and the modelled protobuf, in one
//! block (docs/FORMAT.md §6.1, `malloc-bench`). Falls back to storing the file's bytes
//! ([`raw_store`]) when the deflate stream cannot be rebuilt exactly.

use std::io::{Read, Write};

use metatf::container::{Codec, ContainerWriter, SectionData};

use crate::shared::archive::rebuilt_check;

use super::{mixed_parts, model};
use crate::format::{Compression, DecodeOptions, EncodeOptions, EncodeReport, FormatError};
use crate::shared::archive::deflate::gzip_split;
use crate::shared::archive::raw_store;
use crate::shared::coding::{context_mix, lzma_alone};
use crate::shared::container::blocks::{self, container_error, write_error, DEFAULT_ZSTD_LEVEL};

/// Value of the `layout` property: section 1 lists the deflate stream's pieces
/// ([`gzip_split::encode_pieces`]; one piece for the whole stream when preflate cannot take it
/// in pieces), so analysing and rebuilding the stream piece by piece bounds preflate's memory
/// by a piece; the model stream has run records ([`model::encode_runs`]) and is packed by
/// version 2 of the context mixer with tables of at most 2^19 slots (section
/// [`MODEL_CM2_BOUNDED`]), in parts that code and decode on separate threads when it is
/// [`mixed_parts::PARTS_FROM`] bytes or more (section [`MODEL_CM2_PARTS`]), by LZMA with a
/// dictionary of at most 4 MiB (section [`MODEL_LZMA`]) or by zstd: encoding and decoding a
/// malloc-bench trace then stay well under 100 MB (docs/FORMAT.md §6.1).
pub const LAYOUT: &str = "malloc-bench-preflate-5";
/// Sections [`HEAD`] (the gzip header bytes), [`CORRECTIONS`] (preflate's reconstruction
/// data) and [`TAIL`] (the bytes after the deflate stream: CRC-32, size, anything after) are
/// those of every taken-apart archive.
pub use crate::shared::archive::rebuilt_check::{CORRECTIONS, HEAD, TAIL};
/// Section: the model stream, compressed by the container's codec.
pub const MODEL: u8 = 3;
/// Section: the model stream as an LZMA "alone" stream (container codec none).
pub const MODEL_LZMA: u8 = 4;
/// Section: the model stream through [`context_mix::v2::compress_with_tables`] with
/// [`context_mix::v2::BOUNDED_STREAM_TABLE_BITS`] (container codec none).
pub const MODEL_CM2_BOUNDED: u8 = 7;
/// Section: the model stream in parts, each through [`context_mix::v2::compress_with_tables`]
/// with [`context_mix::v2::BOUNDED_STREAM_TABLE_BITS`] ([`mixed_parts`]; container codec none).
pub const MODEL_CM2_PARTS: u8 = 8;
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

/// The model stream of a block, unpacked (parts on up to `threads` threads).
fn model_stream(b: &metatf::container::Block, threads: usize) -> Result<Vec<u8>, String> {
    let lzma = blocks::section(b, MODEL_LZMA);
    let cm2_bounded = blocks::section(b, MODEL_CM2_BOUNDED);
    let cm2_parts = blocks::section(b, MODEL_CM2_PARTS);
    Ok(if !cm2_parts.is_empty() {
        mixed_parts::decompress(cm2_parts, threads)?
    } else if !cm2_bounded.is_empty() {
        context_mix::v2::decompress_with_tables(
            cm2_bounded,
            context_mix::v2::BOUNDED_STREAM_TABLE_BITS,
        )?
    } else if !lzma.is_empty() {
        lzma_alone::decompress(lzma)?
    } else {
        blocks::section(b, MODEL).to_vec()
    })
}

/// The protobuf of a block: its model stream, unpacked (on up to
/// `threads` threads) and decoded.
pub fn protobuf(b: &metatf::container::Block, threads: usize) -> Result<Vec<u8>, String> {
    let stream = model_stream(b, threads)?;
    // The text is about four times the stream. The stream is freed on return, before the
    // caller rebuilds the deflate stream.
    let mut text = Vec::with_capacity(stream.len().saturating_mul(4));
    model::decode(&stream, &mut text)?;
    Ok(text)
}

/// True when `layout` is the taken-apart layout (not the file's bytes as they are).
pub fn is_split(layout: Option<&str>) -> bool {
    layout == Some(LAYOUT)
}

/// Writes the original `.trace.gz` back.
pub fn decode(
    format: &str,
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    rebuilt_check::rebuild(input, output, format, file, LAYOUT, &mut |b, w| {
        let bad = |m: String| FormatError {
            file: file.to_string(),
            position: format!("block {}", b.index),
            message: m,
        };
        // Piece by piece, straight to the output, as the model decoder gives the protobuf:
        // neither the protobuf nor the rebuilt stream is ever whole in memory.
        let stream = model_stream(b, options.threads).map_err(bad)?;
        model::decode_to(&stream, w).map(|_| ()).map_err(bad)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use metatf::container::{ContainerHeader, PROPERTY_LAYOUT};

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// A Tracefile of `n` malloc lines.
    fn tracefile(n: u64) -> Vec<u8> {
        // Ids and sizes from a linear congruential generator, so the deflate stream is long.
        let mut x = 12345u64;
        let mut text = Vec::new();
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (id, size) = ((x >> 40) as u8 & 0x7f, (x >> 20) as u8 & 0x7f);
            text.extend_from_slice(&[0x0a, 0x06, 0x0a, 0x04, 0x08, id, 0x10, size]);
        }
        text
    }

    /// Writes `gz` as a container, its section 1 being `corrections`.
    fn container(gz: &[u8], corrections: &[u8], text: &[u8], tail: &[u8]) -> Vec<u8> {
        let head_len = gzip_split::header_len(gz).unwrap();
        let mut stream = Vec::new();
        let records = model::encode_runs(text, &mut stream);
        let header = ContainerHeader {
            dtd: super::super::DTD.to_string(),
            format: super::super::FORMAT.to_string(),
            properties: vec![
                ("encoding".to_string(), "auto".to_string()),
                (PROPERTY_LAYOUT.to_string(), LAYOUT.to_string()),
                ("deflate".to_string(), "preflate".to_string()),
            ],
        };
        let section = |number, bytes| SectionData {
            number,
            element_width: 1,
            codec: Codec::Zstd,
            level: 3,
            bytes,
        };
        let mut w = ContainerWriter::new(Vec::new(), &header).unwrap();
        w.write_block(
            records,
            &[
                section(HEAD, &gz[..head_len]),
                section(CORRECTIONS, corrections),
                section(TAIL, tail),
                section(MODEL, &stream[..]),
            ],
        )
        .unwrap();
        w.finish().unwrap()
    }

    fn decoded(bin: &[u8]) -> Vec<u8> {
        let mut back = Vec::new();
        decode(
            super::super::FORMAT,
            &mut &bin[..],
            &mut back,
            &DecodeOptions::default(),
        )
        .unwrap();
        back
    }

    #[test]
    fn files_of_several_pieces_decode() {
        let gz = gzip(&tracefile(200_000));
        // The encoder's layout: pieces.
        let mut bin = Vec::new();
        encode(
            super::super::FORMAT,
            super::super::DTD,
            &mut &gz[..],
            &mut bin,
            &EncodeOptions::default(),
        )
        .unwrap();
        let r = metatf::container::ContainerReader::new(&bin[..]).unwrap();
        assert_eq!(r.header().property(PROPERTY_LAYOUT), Some(LAYOUT));
        assert!(decoded(&bin) == gz);
        // The stream in several pieces.
        let p = gzip_split::split_chunked(&gz).unwrap();
        assert!(p.pieces.len() > 1);
        let corrections = gzip_split::encode_pieces(&p.pieces);
        let bin = container(&gz, &corrections, &p.text, &p.tail);
        assert!(
            decoded(&bin) == gz,
            "a file of several pieces does not decode"
        );
        // Damaged pieces are an error, never wrong bytes.
        let mut wrong = p.pieces.clone();
        wrong[1].deflate_len += 1;
        let bin = container(&gz, &gzip_split::encode_pieces(&wrong), &p.text, &p.tail);
        let mut back = Vec::new();
        assert!(decode(
            super::super::FORMAT,
            &mut &bin[..],
            &mut back,
            &DecodeOptions::default(),
        )
        .is_err());
    }
}
