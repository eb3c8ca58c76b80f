//! Decoding an encoded `.trace.gz` back to the file's bytes, and the protobuf of its block for
//! `decode --records`.

use std::io::{Read, Write};

use super::{mixed_parts, model};
use super::{LAYOUT, MODEL, MODEL_CM2_BOUNDED, MODEL_CM2_PARTS, MODEL_LZMA};
use crate::format::{DecodeOptions, FormatError};
use crate::shared::archive::rebuilt_check;
use crate::shared::coding::{context_mix, lzma_alone};
use crate::shared::container::blocks;

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
        let bad = |m: String| blocks::block_error(file, b, m);
        // Piece by piece, straight to the output, as the model decoder gives the protobuf:
        // neither the protobuf nor the rebuilt stream is ever whole in memory.
        let stream = model_stream(b, options.threads).map_err(bad)?;
        model::decode_to(&stream, w).map(|_| ()).map_err(bad)
    })
}

#[cfg(test)]
mod tests {
    use super::super::encode::encode;
    use super::super::{CORRECTIONS, HEAD, TAIL};
    use super::*;
    use crate::format::EncodeOptions;
    use crate::shared::archive::deflate::gzip_split;
    use metatf::container::{
        Codec, ContainerHeader, ContainerWriter, SectionData, PROPERTY_LAYOUT,
    };

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
