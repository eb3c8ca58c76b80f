//! LEB128 varints (7 bits per byte, low group first) and zigzag signed integers: the byte shape
//! of the formats' model streams and of the lengths in front of context-mixed streams. The one
//! writer, the one zigzag and the readers every crate uses. A reader accepts a longer-than-needed
//! encoding of up to ten bytes and refuses one that overflows 64 bits.

/// Appends `v` as an unsigned LEB128 varint (7 bits per byte, low group first).
#[inline]
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Maps a signed value to unsigned so small magnitudes of either sign stay small.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Longest encoding of a `u64`: ten groups of seven bits.
pub const MAX_LEN: usize = 10;

/// Why the bytes at a position are not a varint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// The bytes end inside it.
    Ends,
    /// Its value does not fit 64 bits.
    Overflows,
}

/// The varint at `bytes[*pos..]`, moving `pos` past it; `None` when the bytes end inside it or
/// it does not fit 64 bits (then `pos` is left anywhere within it).
#[inline]
pub fn take(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    take_checked(bytes, pos).ok()
}

/// [`take`], saying why there is no varint. This is the one decoding of the workspace: model
/// streams, the container's framing (which adds [`is_shortest`]) and protobuf (whose stream
/// reader gathers the bytes first) all read through it.
#[inline]
pub fn take_checked(bytes: &[u8], pos: &mut usize) -> Result<u64, Malformed> {
    let mut v = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *bytes.get(*pos).ok_or(Malformed::Ends)?;
        *pos += 1;
        // The tenth group holds only bit 63; a continuation there would make an eleventh.
        if shift == 63 && b > 1 {
            return Err(Malformed::Overflows);
        }
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
        shift += 7;
    }
}

/// True when `encoded` (one whole varint) has no needless trailing zero group: the form
/// [`put_u64`] writes. Model streams accept longer forms; the container's framing, whose bytes
/// are checksummed as written, refuses them.
pub fn is_shortest(encoded: &[u8]) -> bool {
    encoded.len() <= 1 || encoded.last() != Some(&0)
}

/// A read position in one decoded stream; every read reports which stream ran dry or overflowed.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    name: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`; `name` is the stream name used in errors.
    pub fn new(bytes: &'a [u8], name: &'static str) -> Self {
        Cursor {
            bytes,
            pos: 0,
            name,
        }
    }

    /// A cursor at byte `pos` of `bytes` (to carry on where another cursor over the same bytes
    /// stopped, see [`Self::position`]).
    pub fn starting_at(bytes: &'a [u8], pos: usize, name: &'static str) -> Self {
        Cursor { bytes, pos, name }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// True when every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// Reads one byte, or `None` at the end.
    #[inline]
    pub fn next_byte(&mut self) -> Option<u8> {
        let b = self.bytes.get(self.pos).copied()?;
        self.pos += 1;
        Some(b)
    }

    /// Reads one byte.
    #[inline]
    pub fn byte(&mut self) -> Result<u8, String> {
        match self.next_byte() {
            Some(b) => Ok(b),
            None => Err(self.ends_early()),
        }
    }

    #[cold]
    fn ends_early(&self) -> String {
        format!("stream `{}` ends early at byte {}", self.name, self.pos)
    }

    /// Reads one unsigned LEB128 varint.
    #[inline]
    pub fn u64(&mut self) -> Result<u64, String> {
        // Most values in the model's streams fit one byte.
        match self.bytes.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            _ => self.u64_long(),
        }
    }

    /// [`Self::u64`] for varints of more than one byte (and the errors).
    fn u64_long(&mut self) -> Result<u64, String> {
        let start = self.pos;
        take_checked(self.bytes, &mut self.pos).map_err(|e| match e {
            Malformed::Ends => {
                self.pos = self.bytes.len();
                self.ends_early()
            }
            Malformed::Overflows => format!(
                "stream `{}`: varint at byte {start} overflows 64 bits",
                self.name
            ),
        })
    }

    /// Reads a zigzag varint.
    #[inline]
    pub fn i64(&mut self) -> Result<i64, String> {
        self.u64().map(unzigzag)
    }

    /// Reads `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "stream `{}`: {n} bytes wanted at byte {} but only {} remain",
                    self.name,
                    self.pos,
                    self.bytes.len() - self.pos
                )
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        let values = [0u64, 1, 127, 128, 16383, 16384, u64::MAX >> 1, u64::MAX];
        let mut buf = Vec::new();
        for v in values {
            put_u64(&mut buf, v);
        }
        let mut c = Cursor::new(&buf, "t");
        for v in values {
            assert_eq!(c.u64().unwrap(), v);
        }
        assert!(c.is_empty());
        assert!(c.byte().is_err());
    }

    #[test]
    fn malformed_varints_say_why() {
        let mut at = 0;
        assert_eq!(take_checked(&[0x80, 0x80], &mut at), Err(Malformed::Ends));
        let mut over = vec![0xff; 9];
        over.push(0x02);
        at = 0;
        assert_eq!(take_checked(&over, &mut at), Err(Malformed::Overflows));
        over[9] = 0x01;
        at = 0;
        assert_eq!(take_checked(&over, &mut at), Ok(u64::MAX));
        assert_eq!(at, MAX_LEN);
        assert!(Cursor::new(&over[..5], "t").u64().is_err());
    }

    #[test]
    fn only_the_written_form_is_shortest() {
        for v in [0u64, 1, 127, 128, u64::MAX] {
            let mut buf = Vec::new();
            put_u64(&mut buf, v);
            assert!(is_shortest(&buf));
        }
        assert!(!is_shortest(&[0x81, 0x00]));
        assert!(!is_shortest(&[0x80, 0x00]));
    }

    #[test]
    fn zigzag_keeps_small_values_small() {
        for v in [0i64, -1, 1, -64, 63, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }
}
