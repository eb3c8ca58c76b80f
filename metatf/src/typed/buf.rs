//! The record stream a typed writer builds: a byte buffer that keeps at least 8 writable bytes
//! past its logical end, so that a field of any width (0-8 bytes) is stored with one 8-byte copy
//! and an advance by the width, instead of a width-dependent loop or a `memmove` call.

use crate::container::ByteOrder;

/// Bytes the buffer keeps allocated past its logical end.
const SLACK: usize = 8;

/// A growable byte buffer with an 8-byte writable tail.
pub(crate) struct StreamBuf {
    /// Allocated bytes; only `..len` are the stream, the rest is scratch.
    bytes: Vec<u8>,
    len: usize,
}

impl StreamBuf {
    /// A buffer with room reserved for `capacity` bytes. Only what is used gets initialised
    /// (see [`Self::grow`]): zeroing the whole reservation up front cost more than the stores
    /// of a small block's records.
    pub(crate) fn with_capacity(capacity: usize) -> StreamBuf {
        StreamBuf {
            bytes: Vec::with_capacity(capacity.max(SLACK)),
            len: 0,
        }
    }

    /// Bytes written so far.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The stream written so far.
    pub(crate) fn as_slice(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&self.bytes)
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Drops everything after the first `len` bytes (a record that must be written again).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Sets the logical end after an [`crate::typed::Encoder`] wrote up to `len`.
    #[inline]
    pub(crate) fn set_len(&mut self, len: usize) {
        // Every put leaves its end within the allocation (widths are at most 8 bytes), so
        // no clamp here; `as_slice` stays in bounds all the same.
        self.len = len;
    }

    /// Makes at least `need + SLACK` bytes initialised. Within the reservation it zeroes the
    /// next chunk; past it the vector grows by amortised doubling, keeping its bytes (an
    /// encoder's bytes past `len` are not committed yet but must stay).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, need: usize) {
        const CHUNK: usize = 1 << 16;
        let target = need + SLACK;
        if target > self.bytes.capacity() {
            let want = target.max(self.bytes.capacity() * 2);
            self.bytes.reserve_exact(want - self.bytes.len());
        }
        let size = target
            .max(self.bytes.len() + CHUNK)
            .min(self.bytes.capacity());
        self.bytes.resize(size, 0);
    }

    /// Appends the low `width` bytes (0-8) of `value`, which the caller has checked fit.
    #[inline]
    pub(crate) fn put(&mut self, value: u64, width: u8, order: ByteOrder) {
        self.len = self.put_at(self.len, value, width, order);
    }

    /// Writes the low `width` bytes (0-8) of `value` at `at` (the end of what an encoder has
    /// written so far, at or past `len()`) and returns the new end. The caller keeps the end
    /// in a local, so that the byte stores cannot force it back to memory.
    #[inline(always)]
    pub(crate) fn put_at(&mut self, at: usize, value: u64, width: u8, order: ByteOrder) -> usize {
        let w = u32::from(width.min(8));
        // Big-endian: shift the kept bytes to the top of the word. Width 0 shifts by 0 (wrapping)
        // and writes 8 scratch bytes past the end without advancing.
        let word = match order {
            ByteOrder::Big => value.wrapping_shl(64 - 8 * w).to_be_bytes(),
            ByteOrder::Little => value.to_le_bytes(),
        };
        match self.bytes.get_mut(at..at + 8) {
            Some(dst) => dst.copy_from_slice(&word),
            None => self.put_slow(at, &word),
        }
        at + w as usize
    }

    /// Writes the 8 bytes `word` at `at` and returns `at + len` (a value prepared once, such
    /// as a record's tag; see [`Self::put_at`]).
    #[inline(always)]
    pub(crate) fn put_word(&mut self, at: usize, word: [u8; 8], len: usize) -> usize {
        match self.bytes.get_mut(at..at + 8) {
            Some(dst) => dst.copy_from_slice(&word),
            None => self.put_slow(at, &word),
        }
        at + len
    }

    /// [`Self::put_at`] for a big-endian trace and a width of 0-8 (validated everywhere a
    /// width comes from; a larger one writes garbage but cannot fail).
    #[inline(always)]
    pub(crate) fn put_be(&mut self, at: usize, value: u64, width: u8) -> usize {
        // The low `width` bytes rotated to the top. Width 0 writes scratch bytes without
        // advancing.
        let word = value.rotate_right(8 * u32::from(width)).to_be_bytes();
        match self.bytes.get_mut(at..at + 8) {
            Some(dst) => dst.copy_from_slice(&word),
            None => self.put_slow(at, &word),
        }
        at + usize::from(width)
    }

    #[cold]
    #[inline(never)]
    fn put_slow(&mut self, at: usize, word: &[u8; 8]) {
        self.grow(at + 8);
        self.bytes[at..at + 8].copy_from_slice(word);
    }

    /// Writes `data` at `at` (see [`Self::put_at`]) and returns the new end.
    #[inline]
    pub(crate) fn extend_at(&mut self, at: usize, data: &[u8]) -> usize {
        let end = at + data.len();
        if end + SLACK > self.bytes.len() {
            self.grow(end);
        }
        self.bytes[at..end].copy_from_slice(data);
        end
    }
}

#[cfg(test)]
mod tests {
    use super::StreamBuf;
    use crate::container::ByteOrder;
    use crate::field::bits::write_uint;

    #[test]
    fn puts_equal_write_uint_for_every_width_and_order_across_growth() {
        for order in [ByteOrder::Big, ByteOrder::Little] {
            let mut buf = StreamBuf::with_capacity(16);
            let mut want = Vec::new();
            for i in 0..5000u64 {
                let w = (i % 9) as u8;
                let v = crate::field::bits::truncate(i.wrapping_mul(0x9e37_79b9_7f4a_7c15), w);
                buf.put(v, w, order);
                write_uint(&mut want, v, w, order);
                if i % 97 == 0 {
                    let end = buf.extend_at(buf.len(), &[1, 2, 3]);
                    buf.set_len(end);
                    want.extend_from_slice(&[1, 2, 3]);
                }
            }
            assert_eq!(buf.as_slice(), &want[..]);
            if order == ByteOrder::Big {
                let mut end = buf.put_be(buf.len(), 0x0a0b0c, 3);
                end = buf.put_be(end, 0, 0);
                end = buf.put_be(end, u64::MAX - 1, 8);
                buf.set_len(end);
                let tail = &buf.as_slice()[want.len()..];
                assert_eq!(tail, &[10, 11, 12, 255, 255, 255, 255, 255, 255, 255, 254]);
            }
            buf.truncate(3);
            assert_eq!(buf.as_slice(), &want[..3]);
        }
    }
}
