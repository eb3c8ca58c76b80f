//! Little-endian fixed-width integers for the container's own framing, read through a reader
//! that counts bytes so every error can name its offset.
//!
//! (Trace *data* inside sections uses the byte order given in the header; the framing is always
//! little-endian.)

use std::io::{self, Read, Write};

use crate::error::Error;

/// A reader that knows how many bytes it has consumed.
pub(crate) struct Positioned<R> {
    inner: R,
    pub(crate) pos: u64,
}

impl<R: Read> Positioned<R> {
    pub(crate) fn new(inner: R) -> Self {
        Positioned { inner, pos: 0 }
    }

    /// Fills `buf` completely, or reports a truncation naming `what`.
    pub(crate) fn exact(&mut self, buf: &mut [u8], what: &'static str) -> Result<(), Error> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => {
                    self.pos += filled as u64;
                    return Err(Error::Truncated {
                        offset: self.pos,
                        what,
                    });
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(Error::Io {
                        offset: self.pos + filled as u64,
                        source,
                    })
                }
            }
        }
        self.pos += buf.len() as u64;
        Ok(())
    }

    /// Reads `len` bytes into a vector that grows only as data arrives, so a lying length in a
    /// damaged file cannot make us allocate memory the file does not back.
    pub(crate) fn bytes(&mut self, len: u64, what: &'static str) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(len.min(1 << 16) as usize);
        let got = (&mut self.inner)
            .take(len)
            .read_to_end(&mut out)
            .map_err(|source| Error::Io {
                offset: self.pos,
                source,
            })?;
        self.pos += got as u64;
        if (got as u64) < len {
            return Err(Error::Truncated {
                offset: self.pos,
                what,
            });
        }
        Ok(out)
    }

    /// Reads up to `buf.len()` bytes, returning how many were read (0 only at end of input).
    pub(crate) fn fill(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(Error::Io {
                        offset: self.pos + filled as u64,
                        source,
                    })
                }
            }
        }
        self.pos += filled as u64;
        Ok(filled)
    }
}

/// Cursor over an in-memory structure whose bytes were already read and checksummed.
pub(crate) struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
    /// File offset of `bytes[0]`, for error messages.
    base: u64,
    what: &'static str,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(bytes: &'a [u8], base: u64, what: &'static str) -> Self {
        Fields {
            bytes,
            at: 0,
            base,
            what,
        }
    }

    pub(crate) fn offset(&self) -> u64 {
        self.base + self.at as u64
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.bytes.len() - self.at < n {
            return Err(Error::Corrupt {
                offset: self.offset(),
                message: format!("the {} is shorter than its contents require", self.what),
            });
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16, Error> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, Error> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
}

/// A writer that counts bytes, so the index can record block offsets.
pub(crate) struct Counted<W> {
    pub(crate) inner: W,
    pub(crate) pos: u64,
}

impl<W: Write> Counted<W> {
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.inner.write_all(bytes).map_err(|source| Error::Io {
            offset: self.pos,
            source,
        })?;
        self.pos += bytes.len() as u64;
        Ok(())
    }
}

/// Appends little-endian integers to a buffer.
pub(crate) trait PutLe {
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
    fn put_u64(&mut self, v: u64);
}

impl PutLe for Vec<u8> {
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
}

/// CRC-32 (IEEE, as in gzip and zlib) of `bytes`.
pub(crate) fn crc(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}
