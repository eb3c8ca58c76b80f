//! The byte streams of one block (one container section each) and how values are spelled in them.
//! The layout is in `docs/FORMAT.md §6.3`.

use metatf::varint::{put_u64, zigzag, Cursor};

/// Kind code of a line stored verbatim (its text is in the `verbatim` stream).
pub const VERBATIM_LINE: u8 = 12;
/// Flag on the kind byte: the line ends in `\r\n` (records only; verbatim text keeps its `\r`).
pub const CRLF: u8 = 0x80;
/// Flag on the kind byte: the line has no line end (the last line of the file).
pub const UNTERMINATED: u8 = 0x40;
/// Kind byte per line: kind code (1..=11) or a verbatim code, plus line-end flags.
pub const KIND: u8 = 0;
/// Zigzag varint: time stamp minus the previous record's.
pub const TIME: u8 = 1;
/// Varint thread code: 0 = current thread, 1 = new (see `THREAD_NEW`), k+2 = thread k.
pub const THREAD: u8 = 2;
/// Zigzag varint id of each new thread.
pub const THREAD_NEW: u8 = 3;
/// Varint method code: 0..=3 = candidate, 4 = new method, k+5 = method k.
pub const METHOD: u8 = 4;
/// Varint class code: 0..=3 = candidate, 4 = new name (see `CLASS_TEXT`), k+5 = class k.
pub const CLASS: u8 = 5;
/// Length-prefixed bytes of each new class name.
pub const CLASS_TEXT: u8 = 6;
/// Varint method-name code of each new method: 0 = new name, k+1 = name k.
pub const METHOD_NAME: u8 = 7;
/// Length-prefixed bytes of each new method name.
pub const METHOD_NAME_TEXT: u8 = 8;
/// Raw object id of each allocation.
pub const OBJECT_NEW: u8 = 9;
/// Varint object reference: 0 = id 0, 1 = raw (see `OBJECT_RAW`), 2 = caller's receiver,
/// r+3 = the r-th most recent live object.
pub const OBJECT_REF: u8 = 10;
/// Raw object id of each reference to an object not in the live set.
pub const OBJECT_RAW: u8 = 11;
/// Length-prefixed bytes of each line kept verbatim.
pub const VERBATIM: u8 = 12;
/// Number of streams.
pub const COUNT: usize = 13;

/// Stream names, for errors and measurements.
pub const NAMES: [&str; COUNT] = [
    "kind",
    "time",
    "thread",
    "thread_new",
    "method",
    "class",
    "class_text",
    "method_name",
    "method_name_text",
    "object_new",
    "object_ref",
    "object_raw",
    "verbatim",
];

/// First byte of a raw id that does not fit in 32 bits; 8 bytes follow.
const WIDE: [u8; 4] = [0x80, 0, 0, 0];

/// The streams being written for one block.
#[derive(Default)]
pub struct Streams {
    /// One byte vector per stream.
    pub bytes: [Vec<u8>; COUNT],
}

impl Streams {
    /// Appends one byte.
    pub fn byte(&mut self, s: u8, b: u8) {
        self.bytes[usize::from(s)].push(b);
    }

    /// Appends an unsigned varint.
    pub fn u64(&mut self, s: u8, v: u64) {
        put_u64(&mut self.bytes[usize::from(s)], v);
    }

    /// Appends a zigzag varint.
    pub fn i64(&mut self, s: u8, v: i64) {
        self.u64(s, zigzag(v));
    }

    /// Appends a length-prefixed byte string.
    pub fn text(&mut self, s: u8, t: &[u8]) {
        self.u64(s, t.len() as u64);
        self.bytes[usize::from(s)].extend_from_slice(t);
    }

    /// Appends a raw id: 4 bytes big-endian when it fits in an `i32` (other than `i32::MIN`),
    /// else `80 00 00 00` and 8 bytes. Hash codes are random, so a varint would not help.
    pub fn raw(&mut self, s: u8, v: i64) {
        let out = &mut self.bytes[usize::from(s)];
        match i32::try_from(v) {
            Ok(n) if n != i32::MIN => out.extend_from_slice(&n.to_be_bytes()),
            _ => {
                out.extend_from_slice(&WIDE);
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
    }

    /// Total bytes written.
    pub fn len(&self) -> usize {
        self.bytes.iter().map(Vec::len).sum()
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties every stream.
    pub fn clear(&mut self) {
        self.bytes.iter_mut().for_each(Vec::clear);
    }
}

/// Read positions in the streams of one block.
pub struct Readers<'a> {
    cursors: [Cursor<'a>; COUNT],
}

impl<'a> Readers<'a> {
    /// Cursors over the sections of a block (`section(k)` = bytes of stream `k`).
    pub fn new(section: impl Fn(u8) -> &'a [u8]) -> Self {
        Readers {
            cursors: std::array::from_fn(|i| Cursor::new(section(i as u8), NAMES[i])),
        }
    }

    /// True when the kind stream is used up (the block is done).
    pub fn done(&self) -> bool {
        self.cursors[usize::from(KIND)].is_empty()
    }

    /// Names of streams with bytes left over.
    pub fn leftovers(&self) -> Vec<&'static str> {
        (0..COUNT)
            .filter(|&i| !self.cursors[i].is_empty())
            .map(|i| NAMES[i])
            .collect()
    }

    /// Next byte.
    pub fn byte(&mut self, s: u8) -> Result<u8, String> {
        self.cursors[usize::from(s)].byte()
    }

    /// Next unsigned varint.
    pub fn u64(&mut self, s: u8) -> Result<u64, String> {
        self.cursors[usize::from(s)].u64()
    }

    /// Next zigzag varint.
    pub fn i64(&mut self, s: u8) -> Result<i64, String> {
        self.cursors[usize::from(s)].i64()
    }

    /// Next length-prefixed byte string.
    pub fn text(&mut self, s: u8) -> Result<&'a [u8], String> {
        let n = self.u64(s)?;
        let n = usize::try_from(n)
            .map_err(|_| format!("stream `{}`: length too big", NAMES[usize::from(s)]))?;
        self.cursors[usize::from(s)].take(n)
    }

    /// Next raw id (see [`Streams::raw`]).
    pub fn raw(&mut self, s: u8) -> Result<i64, String> {
        let c = &mut self.cursors[usize::from(s)];
        let b = c.take(4)?;
        if b != WIDE {
            return Ok(i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])));
        }
        let b = c.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }
}
