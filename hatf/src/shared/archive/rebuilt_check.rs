//! The end-to-end check of an archive rebuilt from its parts (a gzip or zip file whose deflate
//! stream was taken apart and is rebuilt by preflate): the encoder stores the CRC-32 of the
//! original file's bytes in the container header, and the decoder computes it over every byte
//! it writes and compares at the end. Reconstruction data that passed every section checksum
//! but rebuilds another valid archive is then an error, not a silent change. A file without
//! the property is read without this check.

use std::io::{self, Read, Write};

use metatf::container::{Block, ContainerHeader, PROPERTY_LAYOUT};

use crate::format::FormatError;
use crate::shared::archive::deflate::gzip_split;
use crate::shared::archive::deflate::piece_stream::PieceWriter;
use crate::shared::archive::raw_store;
use crate::shared::container::blocks::{self, container_error, write_error};

/// Header property: the CRC-32 (IEEE, as zlib and zip compute it) of the original archive,
/// as 8 lowercase hexadecimal digits.
pub const PROPERTY: &str = "archive-crc32";

/// The header property for an archive of bytes `bytes`.
pub fn property(bytes: &[u8]) -> (String, String) {
    (
        PROPERTY.to_string(),
        format!("{:08x}", crc32fast::hash(bytes)),
    )
}

/// The header of an archive format's file holding the archive taken apart (layout `layout`),
/// its deflate streams to be rebuilt by preflate and checked against `archive_crc` (see
/// [`property`]).
pub fn header(
    dtd: &str,
    format: &str,
    layout: &str,
    archive_crc: (String, String),
) -> ContainerHeader {
    let deflate = ("deflate".to_string(), "preflate".to_string());
    blocks::auto_header(dtd, format, layout, [deflate, archive_crc])
}

/// Section of each block of a taken-apart archive: the archive's bytes before the deflate
/// stream.
pub const HEAD: u8 = 0;
/// Section: preflate's reconstruction data (and the deflate stream's pieces).
pub const CORRECTIONS: u8 = 1;
/// Section: the archive's bytes after the deflate stream.
pub const TAIL: u8 = 2;

/// Writes back the archive of archive format `format` whose container is `input`; returns the
/// number of blocks. When the layout property is not `taken_apart` the container holds the
/// archive's bytes, which are written as they are. Otherwise each block gives its [`HEAD`],
/// then the deflate stream preflate rebuilds, piece by piece, from [`CORRECTIONS`] and the
/// uncompressed bytes `body` writes (the format's own decoding of the block), then its
/// [`TAIL`]; every byte written is checked against the original archive's CRC-32 at the end.
pub fn rebuild(
    input: &mut dyn Read,
    output: &mut dyn Write,
    format: &str,
    file: &str,
    taken_apart: &str,
    body: &mut dyn FnMut(&Block, &mut dyn Write) -> Result<(), FormatError>,
) -> Result<u64, FormatError> {
    let mut r = blocks::open(input, format, file)?;
    if r.header().property(PROPERTY_LAYOUT) != Some(taken_apart) {
        return raw_store::write_blocks(&mut r, output, file);
    }
    let expected = r.header().property(PROPERTY).map(str::to_string);
    let mut output = CrcWriter::new(output);
    let mut n = 0;
    while let Some(b) = r.next_block().map_err(|e| container_error(file, e))? {
        let bad = |m: String| blocks::block_error(file, &b, m);
        // Each piece rebuilt as soon as the format's decoder completes it: neither the
        // uncompressed data nor the rebuilt stream is ever whole in memory.
        let pieces = gzip_split::decode_pieces(blocks::section(&b, CORRECTIONS)).map_err(bad)?;
        output
            .write_all(blocks::section(&b, HEAD))
            .map_err(|e| write_error(file, e))?;
        let mut w = PieceWriter::new(&pieces, &mut output);
        body(&b, &mut w)?;
        w.finish().map_err(bad)?;
        output
            .write_all(blocks::section(&b, TAIL))
            .map_err(|e| write_error(file, e))?;
        n += 1;
    }
    output.finish(file, expected.as_deref())?;
    Ok(n)
}

/// A writer passing bytes to `inner` and computing their CRC-32 on the way.
pub struct CrcWriter<W: Write> {
    inner: W,
    hasher: crc32fast::Hasher,
    bytes: u64,
}

impl<W: Write> CrcWriter<W> {
    /// A writer to `inner`.
    pub fn new(inner: W) -> Self {
        CrcWriter {
            inner,
            hasher: crc32fast::Hasher::new(),
            bytes: 0,
        }
    }

    /// Flushes what was written and compares its CRC-32 with `expected` (the header
    /// property's value; `None` for files written without it): an error of `file` saying both
    /// when they differ, or the flush's error.
    pub fn finish(mut self, file: &str, expected: Option<&str>) -> Result<(), FormatError> {
        self.inner.flush().map_err(|e| write_error(file, e))?;
        self.check(expected).map_err(|message| FormatError {
            file: file.to_string(),
            position: String::new(),
            message,
        })
    }

    /// Compares the CRC-32 of what was written with `expected`: an error saying both when
    /// they differ.
    fn check(&self, expected: Option<&str>) -> Result<(), String> {
        let Some(expected) = expected else {
            return Ok(());
        };
        let got = format!("{:08x}", self.hasher.clone().finalize());
        if got != expected {
            return Err(format!(
                "the rebuilt archive ({} bytes) has CRC-32 {got}, but the original's was \
                 {expected}: its reconstruction data is damaged",
                self.bytes
            ));
        }
        Ok(())
    }
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_bytes_pass_and_other_bytes_fail() {
        let (name, value) = property(b"archive bytes");
        assert_eq!(name, PROPERTY);
        let mut w = CrcWriter::new(Vec::new());
        w.write_all(b"archive ").unwrap();
        w.write_all(b"bytes").unwrap();
        w.finish("f", Some(&value)).unwrap();
        let mut w = CrcWriter::new(Vec::new());
        w.write_all(b"archive bytez").unwrap();
        let e = w.finish("f", Some(&value)).unwrap_err();
        assert_eq!(e.file, "f");
        assert!(e.message.contains("CRC-32"), "{}", e.message);
        // Files written without the property are not checked.
        CrcWriter::new(Vec::new()).finish("f", None).unwrap();
    }
}
