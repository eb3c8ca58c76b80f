//! The end-to-end check of an archive rebuilt from its parts (a gzip or zip file whose deflate
//! stream was taken apart and is rebuilt by preflate): the encoder stores the CRC-32 of the
//! original file's bytes in the container header, and the decoder computes it over every byte
//! it writes and compares at the end. Reconstruction data that passed every section checksum
//! but rebuilds another valid archive is then an error, not a silent change. A file without
//! the property is read without this check.

use std::io::{self, Read, Write};

use metatf::container::{ContainerReader, PROPERTY_LAYOUT};

use crate::format::FormatError;
use crate::shared::archive::raw_store;
use crate::shared::container::blocks::{self, write_error};

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

/// An archive format's container, opened to write the archive back.
pub enum Opened<R: Read> {
    /// The container held the archive's bytes as they are, and they have been written: this
    /// many blocks.
    Stored(u64),
    /// The archive was taken apart: the reader, before its first block, and the writer that
    /// checks the rebuilt bytes against the original's CRC-32 when finished.
    TakenApart(Box<ContainerReader<R>>, Rebuilt),
}

/// The check of the bytes written back by a decoder of an [`Opened::TakenApart`] archive.
pub struct Rebuilt {
    /// The header property's value (`None` when the file has none).
    expected: Option<String>,
}

impl Rebuilt {
    /// A [`CrcWriter`] to `output` and the CRC-32 its bytes must have.
    pub fn writer<W: Write>(self, output: W) -> (CrcWriter<W>, Option<String>) {
        (CrcWriter::new(output), self.expected)
    }
}

/// Opens the container of archive format `format` in `input`: when its layout property is not
/// `taken_apart` the container holds the archive's bytes, which are written to `output` here.
pub fn open_to_rebuild<R: Read>(
    input: R,
    format: &str,
    file: &str,
    taken_apart: &str,
    output: &mut dyn Write,
) -> Result<Opened<R>, FormatError> {
    let mut r = blocks::open(input, format, file)?;
    if r.header().property(PROPERTY_LAYOUT) != Some(taken_apart) {
        return raw_store::write_blocks(&mut r, output, file).map(Opened::Stored);
    }
    let expected = r.header().property(PROPERTY).map(str::to_string);
    Ok(Opened::TakenApart(Box::new(r), Rebuilt { expected }))
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
