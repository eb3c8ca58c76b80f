//! The length in front of a context-mixed stream: an unsigned LEB128 varint (7 bits per byte,
//! low group first), read as leniently as the trace formats' own varints (a longer-than-needed
//! encoding is accepted, one that overflows 64 bits is not).

/// Appends `v` as an unsigned LEB128 varint.
pub(super) fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads varints and byte runs from a slice, with errors that name the stream.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    name: &'static str,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8], name: &'static str) -> Self {
        Cursor {
            bytes,
            pos: 0,
            name,
        }
    }

    /// Bytes not read yet.
    pub(super) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Reads one varint.
    pub(super) fn u64(&mut self) -> Result<u64, String> {
        let start = self.pos;
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(format!(
                    "{}: varint at byte {start} is cut short",
                    self.name
                ));
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                break;
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!(
            "{}: varint at byte {start} overflows 64 bits",
            self.name
        ))
    }

    /// Reads `n` raw bytes.
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.remaining() {
            return Err(format!(
                "{}: {n} bytes wanted at byte {} but only {} remain",
                self.name,
                self.pos,
                self.remaining()
            ));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_damage_is_an_error() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_u64(&mut out, v);
            let mut c = Cursor::new(&out, "test");
            assert_eq!(c.u64().unwrap(), v);
            assert_eq!(c.remaining(), 0);
        }
        assert!(Cursor::new(&[0x80], "test").u64().is_err());
        assert!(Cursor::new(&[0xff; 10], "test").u64().is_err());
        assert!(Cursor::new(&[1, 2], "test").take(3).is_err());
    }
}
