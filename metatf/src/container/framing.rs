//! Little-endian fixed-width integers for the container's own framing, read through a reader
//! that counts bytes so every error can name its offset.
//!
//! (Trace *data* inside sections uses the byte order given in the header; the framing is always
//! little-endian.)

use std::io::{self, Read, Write};

use crate::error::Error;
use crate::varint;

/// A reader that knows how many bytes it has consumed.
pub(crate) struct Positioned<R> {
    inner: R,
    pub(crate) pos: u64,
    /// The full form of a compact container, read from here instead of `inner` (which has been
    /// read to its end); see [`super::compact`].
    expanded: Option<io::Cursor<Vec<u8>>>,
    compact_len: Option<u64>,
}

impl<R: Read> Positioned<R> {
    pub(crate) fn new(inner: R) -> Self {
        Positioned {
            inner,
            pos: 0,
            expanded: None,
            compact_len: None,
        }
    }

    /// Where bytes come from: the expanded compact container, or the input.
    fn source(&mut self) -> &mut dyn Read {
        match self.expanded.as_mut() {
            Some(c) => c,
            None => &mut self.inner,
        }
    }

    /// The size of the input when it is a compact container (read through its full form).
    pub(crate) fn compact_len(&self) -> Option<u64> {
        self.compact_len
    }

    /// Reads the rest of a compact container whose first `head` bytes were read, expands it,
    /// and from then on reads the full form, positioned just after its first `head.len()`
    /// bytes. Returns those bytes of the full form.
    pub(crate) fn expand_compact(&mut self, head: &[u8]) -> Result<Vec<u8>, Error> {
        let mut bytes = head.to_vec();
        let limit = super::compact::COMPACT_MAX;
        (&mut self.inner)
            .take(limit + 1 - head.len() as u64)
            .read_to_end(&mut bytes)
            .map_err(|source| Error::Io {
                offset: self.pos,
                source,
            })?;
        let full = super::compact::expand(&bytes)?;
        self.compact_len = Some(bytes.len() as u64);
        let start = full[..head.len()].to_vec();
        let mut cursor = io::Cursor::new(full);
        cursor.set_position(head.len() as u64);
        self.expanded = Some(cursor);
        self.pos = head.len() as u64;
        Ok(start)
    }

    pub(crate) fn into_inner(self) -> R {
        self.inner
    }

    /// Fills `buf` completely, or reports a truncation naming `what`.
    pub(crate) fn exact(&mut self, buf: &mut [u8], what: &'static str) -> Result<(), Error> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.source().read(&mut buf[filled..]) {
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
        let got = self
            .source()
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
            match self.source().read(&mut buf[filled..]) {
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

    pub(crate) fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An unsigned LEB128 integer (see [`PutLe::put_varint`]); overlong, non-minimal and
    /// overflowing encodings are corruption.
    pub(crate) fn varint(&mut self) -> Result<u64, Error> {
        let at = self.offset();
        let mut end = self.at;
        match varint::take_checked(self.bytes, &mut end) {
            Ok(v) if varint::is_shortest(&self.bytes[self.at..end]) => {
                self.at = end;
                Ok(v)
            }
            Ok(_) => Err(varint_error(at, "is not in its shortest form")),
            Err(varint::Malformed::Overflows) => Err(varint_error(at, "overflows 64 bits")),
            // Reported as every other field that runs past the end, at the end.
            Err(varint::Malformed::Ends) => {
                self.at = self.bytes.len();
                self.take(1).map(|_| 0)
            }
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
}

impl<R: Read + std::io::Seek> Positioned<R> {
    /// Moves to file offset `offset`.
    pub(crate) fn seek_to(&mut self, offset: u64) -> Result<(), Error> {
        if let Some(c) = self.expanded.as_mut() {
            c.set_position(offset);
            self.pos = offset;
            return Ok(());
        }
        self.inner
            .seek(std::io::SeekFrom::Start(offset))
            .map_err(|source| Error::Io { offset, source })?;
        self.pos = offset;
        Ok(())
    }
}

impl<R: Read> Positioned<R> {
    /// Skips `len` bytes without keeping them; a short input is a truncation.
    pub(crate) fn skip(&mut self, len: u64, what: &'static str) -> Result<(), Error> {
        let got = io::copy(&mut self.source().take(len), &mut io::sink()).map_err(|source| {
            Error::Io {
                offset: self.pos,
                source,
            }
        })?;
        self.pos += got;
        if got < len {
            return Err(Error::Truncated {
                offset: self.pos,
                what,
            });
        }
        Ok(())
    }
}

/// Longest LEB128 encoding of a `u64`.
pub(crate) const MAX_VARINT: usize = varint::MAX_LEN;

fn varint_error(offset: u64, problem: &str) -> Error {
    Error::Corrupt {
        offset,
        message: format!("variable-length integer {problem}"),
    }
}

impl<R: Read> Positioned<R> {
    /// Reads one unsigned LEB128 integer, appending its bytes to `raw` (for a checksum over the
    /// structure it belongs to). Same rules as [`Fields::varint`].
    pub(crate) fn varint_into(
        &mut self,
        raw: &mut Vec<u8>,
        what: &'static str,
    ) -> Result<u64, Error> {
        let start = raw.len();
        let at = self.pos;
        for _ in 0..MAX_VARINT {
            let mut b = [0u8; 1];
            self.exact(&mut b, what)?;
            raw.push(b[0]);
            if b[0] & 0x80 == 0 {
                break;
            }
        }
        Fields::new(&raw[start..], at, what).varint()
    }
}

/// A writer that counts bytes, so the index can record block offsets. While `held` is set,
/// bytes are kept in it instead of written (so a short file can still be rewritten in the
/// compact form).
pub(crate) struct Counted<W> {
    pub(crate) inner: W,
    pub(crate) pos: u64,
    pub(crate) held: Option<Vec<u8>>,
}

impl<W: Write> Counted<W> {
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if let Some(held) = self.held.as_mut() {
            held.extend_from_slice(bytes);
            self.pos += bytes.len() as u64;
            return Ok(());
        }
        self.inner.write_all(bytes).map_err(|source| Error::Io {
            offset: self.pos,
            source,
        })?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Writes the held bytes and stops holding.
    pub(crate) fn release(&mut self) -> Result<(), Error> {
        if let Some(held) = self.held.take() {
            self.inner
                .write_all(&held)
                .map_err(|source| Error::Io { offset: 0, source })?;
        }
        Ok(())
    }
}

/// Appends little-endian integers to a buffer.
pub(crate) trait PutLe {
    fn put_u32(&mut self, v: u32);
    fn put_u64(&mut self, v: u64);
    /// Unsigned LEB128: seven bits per byte, least significant group first, high bit set on
    /// every byte but the last; always the shortest form.
    fn put_varint(&mut self, v: u64);
}

impl PutLe for Vec<u8> {
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_varint(&mut self, v: u64) {
        varint::put_u64(self, v);
    }
}

/// CRC-32 (IEEE, as in gzip and zlib) of `bytes`.
pub(crate) fn crc(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}
