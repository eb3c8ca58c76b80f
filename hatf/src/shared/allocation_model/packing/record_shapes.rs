//! Layout `alloc-model-4`: the small symbols the model writes for a record (its kind, which
//! site, size and address guesses held, and a small free rank) stored as one *shape* id per
//! record instead of one byte in each of five streams.
//!
//! Why: traces repeat whole runs of records (a loop allocating and freeing the same objects
//! from the same sites). With one stream per symbol a general-purpose compressor has to find
//! each repetition once per stream and pays for its offset and length every time; with one id
//! per record it finds it once: at zstd level 3 the corpus's allocation traces are a third to
//! a half smaller as shapes with their table than as five streams apart. A trace has a few
//! hundred shapes, so the table costs next to nothing. The model itself is unchanged:
//! the encoder packs its streams at the end of a block and the decoder unpacks them before
//! running the model (docs/FORMAT.md §6.1).

use std::collections::HashMap;

use metatf::container::Block;

use crate::shared::allocation_model::{stream, KindTable, Shape, Streams};
use crate::shared::container::blocks;
use metatf::hash::FastState;
use metatf::varint::{put_u64, zigzag, Cursor};

/// Section holding the varint shape id of every record of the block, in record order.
pub const SHAPES: u8 = 11;
/// Section holding the definition of each shape, in the order of first use.
pub const SHAPE_TABLE: u8 = 12;
/// Free values (stream [`stream::FREE`]) below this are part of a record's shape. A shape
/// whose free symbol is this value says that the value is in the block's free stream, which
/// holds only those, each as the zigzag varint of its difference from the previous one (the
/// first from this value). Why the difference: a program that frees old blocks in about the
/// order it allocated them frees blocks of about the same rank one after the other, so at zstd
/// level 3 a free stream of differences is a quarter to three quarters smaller than one of values
/// on the corpus's allocation traces.
pub const FREE_IN_SHAPE: u64 = 16;

/// The model streams a shape replaces (the free stream keeps the large values).
const PACKED: [u8; 5] = [
    stream::KIND,
    stream::SITE,
    stream::SIZE,
    stream::ADDR,
    stream::FREE,
];

/// Which symbols a record of each shape carries, in the order a definition lists them.
fn carries(shape: Shape) -> (bool, bool, bool) {
    let site = shape != Shape::Bare;
    let free = matches!(shape, Shape::Free | Shape::Realloc);
    let sized = matches!(shape, Shape::Alloc | Shape::Realloc);
    (site, free, sized)
}

/// [`Packer::pack`]'s flags of what a kind's records carry (see [`carries`]).
const HAS_SITE: u8 = 1;
const HAS_FREE: u8 = 2;
const SIZED: u8 = 4;

/// The encoder's side: packs one block's streams into shapes, keeping its buffers. A block
/// is packed at once ([`Packer::pack`]) or in parts as its address streams come
/// ([`Packer::start`], [`Packer::pack_part`], [`Packer::finish`]): the same bytes either way,
/// since packing is one pass in record order.
#[derive(Debug, Default)]
pub struct Packer {
    /// Varint shape id per record.
    pub ids: Vec<u8>,
    /// Definitions of the block's shapes.
    pub table: Vec<u8>,
    /// Each free value too large for a shape, as a zigzag varint difference from the previous
    /// one ([`FREE_IN_SHAPE`]).
    pub free_rest: Vec<u8>,
    /// Shape key (kind and symbols, one byte each) → id.
    known: HashMap<u64, u32, FastState>,
    /// A direct-mapped cache in front of `known`: (key, id) at a slot chosen by the key's
    /// hash. A block has a few hundred shapes, so nearly every lookup hits, and a hit costs a
    /// multiply and one load where the map cost several (the packing runs on the encoder's
    /// busiest thread).
    recent: Vec<(u64, u32)>,
    /// What each kind's records carry ([`HAS_SITE`], [`HAS_FREE`], [`SIZED`]), asked of the
    /// kind table once per block rather than once per record (256 entries once started).
    carried: Vec<u8>,
    /// Records of the block packed so far (bytes of its kind stream).
    records: usize,
    /// Bytes of the block's site and size streams read so far.
    site_at: usize,
    size_at: usize,
    /// The previous free value too large for a shape.
    previous_free: u64,
}

/// Slots of [`Packer::recent`] (a power of two).
const RECENT: usize = 1 << 10;
/// A key no shape has (keys use five bytes).
const NO_KEY: u64 = u64::MAX;

/// The slot of `key` in [`Packer::recent`].
#[inline]
fn slot(key: u64) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - RECENT.trailing_zeros())) as usize
}

/// The error of a model stream with bytes no record read.
fn left_over(c: &Cursor<'_>) -> Result<(), String> {
    if c.is_empty() {
        return Ok(());
    }
    Err(format!(
        "internal error: {} bytes of a model stream left over after the block's last record",
        c.remaining()
    ))
}

impl Packer {
    /// Packs the kind, site, size, address and free streams of `s` (one block, written by the
    /// model for `kinds`); an error if the streams do not hold what the kinds say.
    pub fn pack<K: KindTable + ?Sized>(&mut self, kinds: &K, s: &Streams) -> Result<(), String> {
        self.start(kinds);
        let b = &s.bytes;
        self.pack_part(
            s,
            b[stream::KIND as usize].len(),
            &b[stream::ADDR as usize],
            &b[stream::FREE as usize],
        )?;
        self.finish(s)
    }

    /// Starts packing a block of records of `kinds`.
    pub fn start<K: KindTable + ?Sized>(&mut self, kinds: &K) {
        self.ids.clear();
        self.table.clear();
        self.free_rest.clear();
        self.known.clear();
        self.recent.clear();
        self.recent.resize(RECENT, (NO_KEY, 0));
        self.carried.clear();
        self.carried.extend((0..=u8::MAX).map(|kind| {
            let (site, free, sized) = carries(kinds.shape(kind));
            let flag = |carried: bool, flag: u8| if carried { flag } else { 0 };
            flag(site, HAS_SITE) | flag(free, HAS_FREE) | flag(sized, SIZED)
        }));
        self.records = 0;
        self.site_at = 0;
        self.size_at = 0;
        self.previous_free = FREE_IN_SHAPE;
    }

    /// Records of the started block packed so far.
    pub fn records(&self) -> usize {
        self.records
    }

    /// Packs the next `records` records of the started block: their kind, site and size
    /// symbols are the next ones of `s` (the block's streams, as far as they are written),
    /// their address and free symbols all of `addr` and `free`.
    pub fn pack_part(
        &mut self,
        s: &Streams,
        records: usize,
        addr: &[u8],
        free: &[u8],
    ) -> Result<(), String> {
        let b = &s.bytes;
        let kinds = self
            .records
            .checked_add(records)
            .and_then(|end| b[stream::KIND as usize].get(self.records..end))
            .ok_or_else(|| {
                format!(
                    "internal error: {records} records to pack after {} but the kind stream \
                     has {}",
                    self.records,
                    b[stream::KIND as usize].len()
                )
            })?;
        // As arrays, so that a kind or a slot needs no bounds check.
        let carried: &[u8; 256] = self
            .carried
            .as_slice()
            .try_into()
            .map_err(|_| "internal error: the packer was not started".to_string())?;
        let recent: &mut [(u64, u32); RECENT] = self
            .recent
            .as_mut_slice()
            .try_into()
            .map_err(|_| "internal error: the shape cache has the wrong size".to_string())?;
        let mut site = Cursor::starting_at(&b[stream::SITE as usize], self.site_at, "site");
        let mut size = Cursor::starting_at(&b[stream::SIZE as usize], self.size_at, "size");
        let mut addr = Cursor::new(addr, "addr");
        let mut free = Cursor::new(free, "free");
        let mut previous_free = self.previous_free;
        for &kind in kinds {
            let carries = carried[usize::from(kind)];
            // The shape's key is its definition, byte `i` of the key being byte `i` of the
            // definition (the kind, then the symbols the kind carries, in table order).
            let mut key = u64::from(kind);
            let mut n = 1;
            if carries & HAS_SITE != 0 {
                key |= u64::from(site.byte()?) << 8;
                n = 2;
            }
            if carries & HAS_FREE != 0 {
                let v = free.u64()?;
                let sym = if v < FREE_IN_SHAPE {
                    v
                } else {
                    put_u64(
                        &mut self.free_rest,
                        zigzag(v.wrapping_sub(previous_free) as i64),
                    );
                    previous_free = v;
                    FREE_IN_SHAPE
                };
                key |= sym << (8 * n);
                n += 1;
            }
            if carries & SIZED != 0 {
                key |= u64::from(size.byte()?) << (8 * n);
                key |= u64::from(addr.byte()?) << (8 * n + 8);
                n += 2;
            }
            let cached = &mut recent[slot(key)];
            let id = if cached.0 == key {
                cached.1
            } else {
                let next = self.known.len() as u32;
                let id = *self.known.entry(key).or_insert(next);
                if id == next {
                    self.table.extend_from_slice(&key.to_le_bytes()[..n]);
                }
                *cached = (key, id);
                id
            };
            if id < 0x80 {
                self.ids.push(id as u8);
            } else {
                put_u64(&mut self.ids, u64::from(id));
            }
        }
        self.records += records;
        self.site_at = site.position();
        self.size_at = size.position();
        self.previous_free = previous_free;
        // The part's address and free symbols are its records' alone.
        left_over(&addr)?;
        left_over(&free)
    }

    /// Ends the started block, whose streams are `s`: an error if some of its records or
    /// site and size symbols were not packed.
    pub fn finish(&self, s: &Streams) -> Result<(), String> {
        let b = &s.bytes;
        let kinds = b[stream::KIND as usize].len();
        if self.records != kinds {
            return Err(format!(
                "internal error: {} of the block's {kinds} records packed",
                self.records
            ));
        }
        left_over(&Cursor::starting_at(
            &b[stream::SITE as usize],
            self.site_at,
            "site",
        ))?;
        left_over(&Cursor::starting_at(
            &b[stream::SIZE as usize],
            self.size_at,
            "size",
        ))
    }

    /// The sections of a block: the model's streams of `s` that shapes do not replace, the
    /// free values too large for a shape, the shape ids and the shape table (empty ones
    /// included; the block writer leaves them out).
    pub fn sections<'a>(&'a self, s: &'a Streams) -> Vec<(u8, &'a [u8])> {
        let mut out: Vec<(u8, &[u8])> = s
            .bytes
            .iter()
            .enumerate()
            .filter(|(i, _)| !PACKED.contains(&(*i as u8)))
            .map(|(i, b)| (i as u8, b.as_slice()))
            .collect();
        out.push((stream::FREE, &self.free_rest));
        out.push((SHAPES, &self.ids));
        out.push((SHAPE_TABLE, &self.table));
        out
    }
}

/// One shape, as the decoder keeps it: what it appends to the kind, site, size and address
/// streams ([`BYTE_STREAMS`]), whether it appends anything to each, and what the kind table
/// says of its kind (asked once per shape, not once per record).
///
/// Eight bytes, aligned, so that the decoder takes a record's shape with one load.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(8))]
pub struct Entry {
    bytes: [u8; 4],
    /// The free symbol, up to [`FREE_IN_SHAPE`], or [`NO_FREE`].
    free: u8,
    /// The fields of the kind's records.
    shape: Shape,
    /// True when the kind's records carry an extra value.
    extra: bool,
    /// 1 where the shape has a byte for the size and address streams, else 0: the rebuild
    /// adds it to those streams' lengths, so it writes every record without a branch per
    /// symbol (see [`Entry::steps`]).
    sized: u8,
}

/// [`Entry::free`] of a shape without a free value.
const NO_FREE: u8 = u8::MAX;

impl Entry {
    /// A placeholder (a bare record of kind 0) for arrays that [`ShapeReader::next_entries`]
    /// fills.
    pub const BLANK: Entry = Entry {
        bytes: [0; 4],
        free: NO_FREE,
        shape: Shape::Bare,
        extra: false,
        sized: 0,
    };

    /// The record's kind code.
    #[inline]
    pub fn kind(&self) -> u8 {
        self.bytes[0]
    }

    /// The fields of the record's kind.
    #[inline]
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// True when the record carries an extra value.
    #[inline]
    pub fn has_extra(&self) -> bool {
        self.extra
    }

    /// The record's site symbol (0 for a shape without a site).
    #[inline]
    pub fn site(&self) -> u8 {
        self.bytes[1]
    }

    /// The record's size symbol (0 for a shape without a size).
    #[inline]
    pub fn size(&self) -> u8 {
        self.bytes[2]
    }

    /// The record's address symbol (0 for a shape without an address).
    #[inline]
    pub fn addr(&self) -> u8 {
        self.bytes[3]
    }

    /// How many bytes the record has in each of the kind, site, size and address streams.
    fn steps(&self) -> [u8; 4] {
        let site = u8::from(self.shape != Shape::Bare);
        [1, site, self.sized, self.sized]
    }
}

/// The streams of one byte per symbol that shapes replace, in [`Entry::bytes`] order.
const BYTE_STREAMS: [u8; 4] = [stream::KIND, stream::SITE, stream::SIZE, stream::ADDR];

/// Why [`Unpacker::unpack`] stopped: the streams hold the `records` records before the bad one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnpackError {
    /// Records unpacked before the bad one.
    pub records: usize,
    /// What was wrong.
    pub message: String,
}

/// Rebuilds a block's model streams from its shapes, keeping its buffers: for tools and tests
/// that want the streams themselves (decoders read the shapes in place, [`ShapeReader`]).
#[derive(Debug, Default)]
pub struct Unpacker {
    /// The rebuilt kind, site, size and address streams: buffers of at least one byte per
    /// record, kept from block to block, of which the first `lens` bytes are the streams.
    bufs: [Vec<u8>; 4],
    lens: [usize; 4],
    /// The rebuilt free stream.
    free: Vec<u8>,
}

impl Unpacker {
    /// Rebuilds the packed streams from a block's shape ids, shape table and large free values.
    /// On an error the streams hold the records before the bad one, so a decoder can give
    /// those back before reporting it.
    pub fn unpack<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        ids: &[u8],
        table: &[u8],
        free_rest: &[u8],
    ) -> Result<(), UnpackError> {
        self.lens = [0; 4];
        self.free.clear();
        // At most one record per byte of ids, so buffers of that many bytes never overflow.
        for buf in &mut self.bufs {
            if buf.len() < ids.len() {
                buf.resize(ids.len(), 0);
            }
        }
        let mut shapes = ShapeReader::new(ids, table);
        let mut free_rest = Cursor::new(free_rest, "free");
        let mut records = 0usize;
        let at = |records: usize, message: String| UnpackError { records, message };
        while let Some(kind) = shapes.next_kind(kinds) {
            kind.map_err(|m| at(records, m))?;
            let e = shapes.current;
            // Read everything the record needs before writing any of it, so that on an error
            // the streams end with the previous record.
            if e.free != NO_FREE {
                let v = shapes.free(&mut free_rest).map_err(|m| at(records, m))?;
                put_u64(&mut self.free, v);
            }
            let steps = e.steps();
            for (i, buf) in self.bufs.iter_mut().enumerate() {
                buf[self.lens[i]] = e.bytes[i];
                self.lens[i] += usize::from(steps[i]);
            }
            records += 1;
        }
        shapes.finish(&free_rest).map_err(|m| at(records, m))
    }

    /// The rebuilt stream `number` (one of the streams shapes replace; empty for the others).
    pub fn stream(&self, number: u8) -> &[u8] {
        if number == stream::FREE {
            return &self.free;
        }
        match BYTE_STREAMS.iter().position(|&n| n == number) {
            Some(i) => &self.bufs[i][..self.lens[i]],
            None => &[],
        }
    }

    /// Points the entries of `streams` that shapes replace at the rebuilt streams.
    pub fn put_in<'a>(&'a self, streams: &mut [&'a [u8]; stream::COUNT]) {
        for n in PACKED {
            streams[n as usize] = self.stream(n);
        }
    }
}

/// Reads a shaped block's symbols straight from its shapes, for [`crate::shared::allocation_model::Cursors`]: what the
/// decoders do. Rebuilding the streams first ([`Unpacker`]) would add a tenth to the decoding
/// thread's time; reading the current shape's bytes costs about what reading separate streams
/// would.
#[derive(Debug, Clone)]
pub struct ShapeReader<'a> {
    /// The shape ids and how far they are read (a slice and a position rather than a
    /// [`Cursor`], so the common one-byte id is read with one bounds check).
    ids: &'a [u8],
    ids_at: usize,
    table: Cursor<'a>,
    entries: Vec<Entry>,
    /// The shape of the record being decoded.
    current: Entry,
    /// The records' free values (see [`Self::free_of`]).
    frees: FreeValues,
}

/// How far a [`ShapeReader`] has read its block, with the shapes it has defined (see
/// [`ShapeReader::place`]).
#[derive(Debug)]
pub struct ShapePlace {
    ids_at: usize,
    table_at: usize,
    entries: Vec<Entry>,
}

/// Reads the free values of a shaped block's records (see [`ShapeReader::free_of`]). Apart
/// from [`ShapeReader`], so that a threaded decode can read the frees on the thread that runs
/// the address half while the caller's thread reads the shapes ahead of it.
#[derive(Debug, Clone)]
pub struct FreeValues {
    /// The previous free value too large for a shape (see [`FREE_IN_SHAPE`]).
    previous: u64,
}

impl Default for FreeValues {
    fn default() -> Self {
        FreeValues {
            previous: FREE_IN_SHAPE,
        }
    }
}

impl FreeValues {
    /// The free value of a record of shape `e`: the shape's symbol, or for [`FREE_IN_SHAPE`]
    /// the next difference of `free` (the block's stored free stream).
    #[inline]
    pub fn of(&mut self, e: &Entry, free: &mut Cursor<'_>) -> Result<u64, String> {
        match e.free {
            sym if u64::from(sym) < FREE_IN_SHAPE => Ok(u64::from(sym)),
            sym if u64::from(sym) == FREE_IN_SHAPE => {
                let delta = free.i64()?;
                // The encoder's wrapping difference, undone.
                self.previous = self.previous.wrapping_add(delta as u64);
                Ok(self.previous)
            }
            _ => Err("internal error: a free value asked of a shape without one".to_string()),
        }
    }

    /// After the block's last record: an error if `free` (its free stream) has bytes left.
    pub fn finish(free: &Cursor<'_>) -> Result<(), String> {
        nothing_left(free, "free stream")
    }
}

/// The error of a block's `what` (read by `c`) with bytes left after the last record.
fn nothing_left(c: &Cursor<'_>, what: &str) -> Result<(), String> {
    if c.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the {what} has {} bytes left after the block's last record",
        c.remaining()
    ))
}

impl<'a> ShapeReader<'a> {
    /// A reader of the shape ids `ids` and definitions `table` of one block.
    pub fn new(ids: &'a [u8], table: &'a [u8]) -> Self {
        ShapeReader {
            ids,
            ids_at: 0,
            table: Cursor::new(table, "shape-table"),
            entries: Vec::new(),
            current: Entry::BLANK,
            frees: FreeValues::default(),
        }
    }

    /// Moves to the next record's shape and returns its kind; `None` at the end of the block.
    #[inline]
    pub fn next_kind<K: KindTable + ?Sized>(&mut self, kinds: &K) -> Option<Result<u8, String>> {
        match self.next_entry(kinds) {
            Ok(Some(e)) => {
                // For the symbol getters below.
                self.current = e;
                Some(Ok(e.kind()))
            }
            Ok(None) => None,
            Err(m) => Some(Err(m)),
        }
    }

    /// Moves to the next record's shape and returns it; `None` at the end of the block. (The
    /// symbol getters below still answer for the shape [`Self::next_kind`] read last.)
    #[inline(always)]
    pub fn next_entry<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
    ) -> Result<Option<Entry>, String> {
        // Nearly every id is one byte and names a shape already defined.
        let at = self.ids_at;
        let Some(&b) = self.ids.get(at) else {
            return Ok(None);
        };
        // A byte of 0x80 or more starts an id of several bytes: a block of more than 128
        // shapes has many of two.
        let (i, len) = if b < 0x80 {
            (usize::from(b), 1)
        } else {
            match self.ids.get(at + 1) {
                Some(&b2) if b2 < 0x80 => (usize::from(b & 0x7f) | usize::from(b2) << 7, 2),
                _ => (usize::MAX, 0),
            }
        };
        if i < self.entries.len() {
            self.ids_at = at + len;
            return Ok(Some(self.entries[i]));
        }
        self.next_entry_slow(kinds).map(Some)
    }

    /// Reads the shapes of up to `into.len()` next records into `into`, in order: how many,
    /// and the error that stopped it early, if any (the records before it are good). Fewer
    /// and no error means the block's ids ended. What [`Self::next_entry`] does for each,
    /// in a loop of its own: a batch decode takes a run of shapes at once, so the per-record
    /// loop that follows reads them from an array instead of re-checking the id stream.
    #[inline]
    pub fn next_entries<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        into: &mut [Entry],
    ) -> (usize, Option<String>) {
        let mut n = 0;
        while n < into.len() {
            // The common case, as in `next_entry`: ids of one byte naming a known shape, read
            // with the stream position in a register.
            let ids = self.ids;
            let entries = &self.entries[..];
            let mut at = self.ids_at;
            while let (Some(slot), Some(&b)) = (into.get_mut(n), ids.get(at)) {
                // Ids of two bytes too (a block of more than 128 shapes has many), read as
                // `next_entry` reads them.
                let (i, len) = if b < 0x80 {
                    (usize::from(b), 1)
                } else {
                    match ids.get(at + 1) {
                        Some(&b2) if b2 < 0x80 => (usize::from(b & 0x7f) | usize::from(b2) << 7, 2),
                        _ => break,
                    }
                };
                match entries.get(i) {
                    Some(&e) => {
                        *slot = e;
                        n += 1;
                        at += len;
                    }
                    None => break,
                }
            }
            self.ids_at = at;
            if n == into.len() {
                break;
            }
            match self.next_entry(kinds) {
                Ok(Some(e)) => {
                    into[n] = e;
                    n += 1;
                }
                Ok(None) => break,
                Err(m) => return (n, Some(m)),
            }
        }
        (n, None)
    }

    /// [`Self::next_entry`] for a new shape, an id of several bytes, or a bad id.
    #[cold]
    #[inline(never)]
    fn next_entry_slow<K: KindTable + ?Sized>(&mut self, kinds: &K) -> Result<Entry, String> {
        let mut ids = Cursor::starting_at(self.ids, self.ids_at, "shapes");
        let id = ids.u64()?;
        self.ids_at = ids.position();
        match usize::try_from(id) {
            Ok(i) if i < self.entries.len() => Ok(self.entries[i]),
            Ok(i) if i == self.entries.len() => {
                let e = define(kinds, &mut self.table)?;
                self.entries.push(e);
                Ok(e)
            }
            _ => Err(format!(
                "shape {id} is not defined (the block has defined {} shapes so far, and a new \
                 one must be number {})",
                self.entries.len(),
                self.entries.len()
            )),
        }
    }

    /// The shape [`Self::next_kind`] read last.
    #[inline]
    pub fn current(&self) -> Entry {
        self.current
    }

    /// Records left: at most one per byte of shape ids.
    pub fn left(&self) -> usize {
        self.ids.len().saturating_sub(self.ids_at)
    }

    /// True when every record was read.
    pub fn is_done(&self) -> bool {
        self.ids_at >= self.ids.len()
    }

    /// The current record's site symbol.
    #[inline]
    pub fn site(&self) -> u8 {
        self.current.bytes[1]
    }

    /// The current record's size symbol.
    #[inline]
    pub fn size(&self) -> u8 {
        self.current.bytes[2]
    }

    /// The current record's address symbol.
    #[inline]
    pub fn addr(&self) -> u8 {
        self.current.bytes[3]
    }

    /// The current record's free value: the shape's symbol, or for [`FREE_IN_SHAPE`] the next
    /// difference of `free` (the block's stored free stream).
    #[inline]
    pub fn free(&mut self, free: &mut Cursor<'_>) -> Result<u64, String> {
        let e = self.current;
        self.free_of(&e, free)
    }

    /// The free value of a record of shape `e` (the current one): see [`Self::free`].
    #[inline]
    pub fn free_of(&mut self, e: &Entry, free: &mut Cursor<'_>) -> Result<u64, String> {
        self.frees.of(e, free)
    }

    /// How far this reader has read, for a reader of the same block on another thread to
    /// carry on from there ([`Self::carry_on`]).
    pub fn place(self) -> ShapePlace {
        ShapePlace {
            ids_at: self.ids_at,
            table_at: self.table.position(),
            entries: self.entries,
        }
    }

    /// Carries on from `place`, where a reader of `block` (this reader's block) stopped; the
    /// free values stay this reader's.
    pub fn carry_on(&mut self, block: &'a Block, place: ShapePlace) {
        self.ids_at = place.ids_at;
        let table = blocks::section(block, SHAPE_TABLE);
        self.table = Cursor::starting_at(table, place.table_at, "shape-table");
        self.entries = place.entries;
    }

    /// The reader of the records' free values.
    #[inline]
    pub fn frees(&mut self) -> &mut FreeValues {
        &mut self.frees
    }

    /// After the block's last record: an error if the table or `free` has bytes left.
    pub fn finish(&self, free: &Cursor<'_>) -> Result<(), String> {
        self.finish_table()?;
        FreeValues::finish(free)
    }

    /// After the block's last record: an error if the shape table has bytes left (the first
    /// check of [`Self::finish`]).
    pub fn finish_table(&self) -> Result<(), String> {
        nothing_left(&self.table, "shape table")
    }
}

/// Cursors over the model's streams of `block`: its sections and its shapes.
pub fn block_cursors(block: &Block) -> crate::shared::allocation_model::Cursors<'_> {
    let sections: [&[u8]; stream::COUNT] = std::array::from_fn(|i| blocks::section(block, i as u8));
    crate::shared::allocation_model::Cursors::shaped(
        sections,
        blocks::section(block, SHAPES),
        blocks::section(block, SHAPE_TABLE),
    )
}

/// The model's streams of `block`, rebuilt from its shapes in `unpacker`. When the shapes are
/// damaged, the streams end with the record before the damage and the error comes second, so
/// that a decoder gives back every good record before reporting it.
pub fn block_streams<'a, K: KindTable + ?Sized>(
    kinds: &K,
    block: &'a Block,
    unpacker: &'a mut Unpacker,
) -> ([&'a [u8]; stream::COUNT], Option<String>) {
    let mut sections: [&[u8]; stream::COUNT] =
        std::array::from_fn(|i| blocks::section(block, i as u8));
    let error = unpacker
        .unpack(
            kinds,
            blocks::section(block, SHAPES),
            blocks::section(block, SHAPE_TABLE),
            sections[stream::FREE as usize],
        )
        .err()
        .map(|e| e.message);
    unpacker.put_in(&mut sections);
    (sections, error)
}

/// Reads the next shape definition from `table`.
fn define<K: KindTable + ?Sized>(kinds: &K, table: &mut Cursor<'_>) -> Result<Entry, String> {
    let kind = table.byte()?;
    let shape = kinds.shape(kind);
    let (has_site, has_free, sized) = carries(shape);
    let mut e = Entry {
        bytes: [kind, 0, 0, 0],
        free: NO_FREE,
        sized: u8::from(sized),
        shape,
        extra: kinds.has_extra(kind),
    };
    if has_site {
        e.bytes[1] = table.byte()?;
    }
    if has_free {
        let sym = table.byte()?;
        if u64::from(sym) > FREE_IN_SHAPE {
            return Err(format!(
                "shape table: free symbol {sym} is larger than {FREE_IN_SHAPE}"
            ));
        }
        e.free = sym;
    }
    if sized {
        e.bytes[2] = table.byte()?;
        e.bytes[3] = table.byte()?;
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::memory_replay::model::ReplayKinds;
    use crate::formats::mtrace::model::{self as kinds, MtraceKinds};
    use crate::shared::allocation_model::{ModelRecord, State};

    /// Model streams of a synthetic block: allocations, frees of recent and of old blocks
    /// (free values past [`FREE_IN_SHAPE`]), bare records and a few sites.
    fn streams(seed: u64) -> Streams {
        let mut x = seed;
        let mut live: Vec<u64> = Vec::new();
        let mut state = State::for_block();
        let mut s = Streams::default();
        let mut sites = 0u32;
        for i in 0..4000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let site = ((x >> 33) % 9) as u32;
            let site = site.min(sites);
            if i % 97 != 0 {
                // Site ids are dense over the records that have one.
                sites = sites.max(site + 1);
            }
            let r = if i % 97 == 0 {
                ModelRecord {
                    kind: kinds::START,
                    ..ModelRecord::default()
                }
            } else if x.is_multiple_of(3) && !live.is_empty() {
                let k = (x >> 20) as usize % live.len();
                ModelRecord {
                    kind: kinds::FREE,
                    site,
                    addr: live.remove(k),
                    ..ModelRecord::default()
                }
            } else {
                let addr = 0x4000 + ((x >> 12) % 8192) * 32;
                live.retain(|&a| a != addr);
                live.push(addr);
                ModelRecord {
                    kind: kinds::MALLOC,
                    site,
                    size: (x >> 52) % 5 * 16,
                    addr,
                    ..ModelRecord::default()
                }
            };
            state.encode(&MtraceKinds, &r, &mut s);
        }
        s
    }

    fn packed_streams_equal(a: &Streams, b: &Unpacker) {
        for n in PACKED {
            assert!(
                a.bytes[n as usize] == b.stream(n),
                "stream {} differs",
                stream::NAMES[n as usize]
            );
        }
    }

    #[test]
    fn unpack_gives_back_the_streams() {
        for seed in [1, 2, 3] {
            let s = streams(seed);
            assert!(
                s.bytes[stream::FREE as usize]
                    .iter()
                    .any(|&b| u64::from(b) >= FREE_IN_SHAPE),
                "the test wants free values too large for a shape"
            );
            let mut p = Packer::default();
            p.pack(&MtraceKinds, &s).unwrap();
            assert!(!p.free_rest.is_empty());
            assert!(p.ids.len() < s.bytes[stream::KIND as usize].len() * 2);
            let mut u = Unpacker::default();
            u.unpack(&MtraceKinds, &p.ids, &p.table, &p.free_rest)
                .unwrap();
            packed_streams_equal(&s, &u);
            // The buffers are reused: a second block gives the same.
            p.pack(&MtraceKinds, &s).unwrap();
            u.unpack(&MtraceKinds, &p.ids, &p.table, &p.free_rest)
                .unwrap();
            packed_streams_equal(&s, &u);
        }
    }

    /// Where each record's address and free symbols end in `s`'s address and free streams.
    fn symbol_ends<K: KindTable>(kinds: &K, s: &Streams) -> Vec<(usize, usize)> {
        let mut addr = 0;
        let mut free = Cursor::new(&s.bytes[stream::FREE as usize], "free");
        let mut ends = vec![(0, 0)];
        for &kind in &s.bytes[stream::KIND as usize] {
            let (_, has_free, sized) = carries(kinds.shape(kind));
            if has_free {
                free.u64().unwrap();
            }
            addr += usize::from(sized);
            ends.push((addr, free.position()));
        }
        ends
    }

    /// Packs `s` in parts of `part` records, the address and free symbols of each part
    /// apart, as the split encoder does.
    fn pack_in_parts<K: KindTable>(kinds: &K, s: &Streams, part: usize) -> Packer {
        let ends = symbol_ends(kinds, s);
        let (addr, free) = (
            &s.bytes[stream::ADDR as usize],
            &s.bytes[stream::FREE as usize],
        );
        let mut p = Packer::default();
        p.start(kinds);
        let records = ends.len() - 1;
        let mut at = 0;
        while at < records {
            let to = (at + part).min(records);
            let (a, f) = (ends[at], ends[to]);
            // The streams as far as the caller wrote them: the kinds, sites and sizes of the
            // part's records and maybe some after.
            p.pack_part(s, to - at, &addr[a.0..f.0], &free[a.1..f.1])
                .unwrap();
            at = to;
        }
        assert_eq!(p.records(), records);
        p.finish(s).unwrap();
        p
    }

    #[test]
    fn packing_in_parts_of_any_size_gives_the_bytes_of_one_pack() {
        let mut blocks = vec![streams(1), streams(2)];
        blocks.push(replay_block(5, 30_000).0);
        for (i, s) in blocks.iter().enumerate() {
            let replay = i == 2;
            let mut whole = Packer::default();
            if replay {
                whole.pack(&ReplayKinds, s).unwrap();
            } else {
                whole.pack(&MtraceKinds, s).unwrap();
            }
            assert!(!whole.free_rest.is_empty());
            let records = s.bytes[stream::KIND as usize].len();
            for part in [1, 2, 7, 100, 4095, 4096, 4097, records, records + 1] {
                let p = if replay {
                    pack_in_parts(&ReplayKinds, s, part)
                } else {
                    pack_in_parts(&MtraceKinds, s, part)
                };
                assert_eq!(p.ids, whole.ids, "block {i}, parts of {part}");
                assert_eq!(p.table, whole.table, "block {i}, parts of {part}");
                assert_eq!(p.free_rest, whole.free_rest, "block {i}, parts of {part}");
            }
        }
    }

    #[test]
    fn parts_that_do_not_match_the_streams_are_internal_errors() {
        let s = streams(3);
        let ends = symbol_ends(&MtraceKinds, &s);
        let (addr, free) = (
            &s.bytes[stream::ADDR as usize],
            &s.bytes[stream::FREE as usize],
        );
        let records = ends.len() - 1;
        let mut p = Packer::default();
        // Not started.
        assert!(p.pack_part(&s, 1, &[], &[]).is_err());
        p.start(&MtraceKinds);
        // More records than the kind stream has.
        let e = p.pack_part(&s, records + 1, addr, free).unwrap_err();
        assert!(e.contains("internal error"), "{e}");
        // A part with a symbol too many.
        p.start(&MtraceKinds);
        let (a, f) = ends[10];
        let e = p.pack_part(&s, 10, &addr[..a + 1], &free[..f]).unwrap_err();
        assert!(e.contains("left over"), "{e}");
        // A block not packed to its end.
        p.start(&MtraceKinds);
        p.pack_part(&s, 10, &addr[..a], &free[..f]).unwrap();
        let e = p.finish(&s).unwrap_err();
        assert!(e.contains("10 of the block's"), "{e}");
    }

    #[test]
    fn realloc_and_site_only_shapes_round_trip() {
        // memory-replay kinds: 4 malloc, 5 free, 8 realloc, 9 thread_done.
        let mut s = Streams::default();
        let k = &mut s.bytes;
        k[stream::KIND as usize] = vec![4, 8, 9, 5, 8, 2];
        k[stream::SITE as usize] = vec![8, 0, 1, 0, 2];
        k[stream::SIZE as usize] = vec![4, 0, 4];
        k[stream::ADDR as usize] = vec![12, 9, 12 | 0x80];
        k[stream::FREE as usize] = vec![2, 1, 0x90, 0x01];
        let mut p = Packer::default();
        p.pack(&ReplayKinds, &s).unwrap();
        // 144 is too large for a shape: zigzag(144 - 16) = 256 goes to the free stream.
        assert_eq!(p.free_rest, vec![0x80, 0x02]);
        let mut u = Unpacker::default();
        u.unpack(&ReplayKinds, &p.ids, &p.table, &p.free_rest)
            .unwrap();
        packed_streams_equal(&s, &u);
    }

    /// The records `c` decodes, and the error that stopped it, if any.
    fn decode_all(
        mut c: crate::shared::allocation_model::Cursors<'_>,
    ) -> (Vec<ModelRecord>, Option<String>) {
        let mut state = State::for_decoding();
        let mut out = Vec::new();
        let end = state.decode_into(&MtraceKinds, &mut c, &mut out, usize::MAX);
        match end {
            Ok(more) => {
                assert!(!more);
                (out, c.finish().err())
            }
            Err(e) => (out, Some(e.message)),
        }
    }

    /// The streams of `s` as `p` packed them (the packed ones empty, the frees left over in
    /// theirs); checks that they and the streams as written both decode, to the same `n`
    /// records, and returns those records with the packed streams.
    fn decode_both<'a>(
        s: &'a Streams,
        p: &'a Packer,
        n: usize,
    ) -> (Vec<ModelRecord>, [&'a [u8]; stream::COUNT]) {
        let plain: [&[u8]; stream::COUNT] = std::array::from_fn(|i| s.bytes[i].as_slice());
        let mut shaped = plain;
        for k in PACKED {
            shaped[k as usize] = &[];
        }
        shaped[stream::FREE as usize] = &p.free_rest;
        let (want, e) = decode_all(crate::shared::allocation_model::Cursors::new(plain));
        assert_eq!((want.len(), e), (n, None));
        let (got, e) = decode_all(crate::shared::allocation_model::Cursors::shaped(
            shaped, &p.ids, &p.table,
        ));
        assert_eq!(e, None);
        assert!(got == want);
        (want, shaped)
    }

    #[test]
    fn shapes_read_in_place_give_the_records_of_the_streams() {
        for seed in [4, 5] {
            let s = streams(seed);
            let mut p = Packer::default();
            p.pack(&MtraceKinds, &s).unwrap();
            let (want, shaped) = decode_both(&s, &p, 4000);
            // Bytes left in the table, a bad id: errors, after the records before them.
            let mut table = p.table.clone();
            table.push(0);
            let (_, e) = decode_all(crate::shared::allocation_model::Cursors::shaped(
                shaped, &p.ids, &table,
            ));
            assert!(e.unwrap().contains("1 bytes left"));
            let mut ids = p.ids[..3].to_vec();
            ids.push(0x7f);
            let (got, e) = decode_all(crate::shared::allocation_model::Cursors::shaped(
                shaped, &ids, &p.table,
            ));
            assert!(e.unwrap().contains("shape 127 is not defined"));
            assert!(got[..] == want[..3]);
        }
    }

    #[test]
    fn ids_of_two_bytes_and_single_records_decode_as_batches() {
        // Frees of any of the 16 newest blocks and allocations guessed every way, from many
        // sites: hundreds of shapes, so many ids take two bytes.
        let mut state = State::for_block();
        let mut s = Streams::default();
        let mut sites = 0u32;
        let mut live: Vec<u64> = Vec::new();
        let mut x = 5u64;
        for _ in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let site = ((x >> 33) % 40) as u32;
            let site = site.min(sites);
            sites = sites.max(site + 1);
            let r = if x.is_multiple_of(3) && !live.is_empty() {
                let back = (x >> 20) as usize % live.len().min(16);
                ModelRecord {
                    kind: kinds::FREE,
                    site,
                    addr: live.remove(live.len() - 1 - back),
                    ..ModelRecord::default()
                }
            } else {
                let addr = 0x1000 + ((x >> 12) % 4096) * 32;
                live.retain(|&a| a != addr);
                live.push(addr);
                ModelRecord {
                    kind: kinds::MALLOC,
                    site,
                    size: (x >> 40) % 64,
                    addr,
                    ..ModelRecord::default()
                }
            };
            state.encode(&MtraceKinds, &r, &mut s);
        }
        let mut p = Packer::default();
        p.pack(&MtraceKinds, &s).unwrap();
        let long = p.ids.iter().filter(|&&b| b >= 0x80).count();
        assert!(long > 500, "{long} ids of two bytes");
        let (want, shaped) = decode_both(&s, &p, 20_000);
        // One record at a time (`next_kind`, then `State::decode`) gives the same.
        let mut c = crate::shared::allocation_model::Cursors::shaped(shaped, &p.ids, &p.table);
        let mut one = State::for_decoding();
        let mut singles = Vec::new();
        while let Some(kind) = c.next_kind(&MtraceKinds) {
            singles.push(one.decode(&MtraceKinds, kind.unwrap(), &mut c).unwrap());
        }
        assert!(singles == want);
        // A two-byte id that is not the shortest form of its value reads as that value.
        let ids = [0x80, 0x00];
        let (got, e) = decode_all(crate::shared::allocation_model::Cursors::shaped(
            shaped, &ids, &p.table,
        ));
        assert!(e.unwrap().contains("bytes left"));
        assert!(got[..] == want[..1]);
    }

    /// A xorshift generator started at `x`, for the damage below.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// The three packed streams of `p` with one to three changed bytes or a cut, anywhere in
    /// them.
    fn damaged(p: &Packer, next: &mut impl FnMut() -> u64) -> [Vec<u8>; 3] {
        let mut parts = [p.ids.clone(), p.table.clone(), p.free_rest.clone()];
        for _ in 0..1 + next() % 3 {
            let part = &mut parts[(next() % 3) as usize];
            if part.is_empty() {
                continue;
            }
            let at = (next() % part.len() as u64) as usize;
            if next().is_multiple_of(4) {
                part.truncate(at);
            } else {
                part[at] = next() as u8;
            }
        }
        parts
    }

    #[test]
    fn damaged_bytes_unpack_or_fail_without_panicking() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut p = Packer::default();
        p.pack(&MtraceKinds, &streams(11)).unwrap();
        let mut u = Unpacker::default();
        let (mut ok, mut failed) = (0, 0);
        for _ in 0..3000 {
            let parts = damaged(&p, &mut next);
            let [ids, table, free] = &parts;
            match u.unpack(&MtraceKinds, ids, table, free) {
                Ok(()) => {
                    ok += 1;
                    assert!(u.stream(stream::KIND).len() <= ids.len());
                }
                Err(e) => {
                    failed += 1;
                    assert!(e.records <= ids.len());
                    assert_eq!(u.stream(stream::KIND).len(), e.records);
                }
            }
        }
        assert!(ok > 100 && failed > 100, "{ok} unpacked, {failed} refused");
    }

    #[test]
    fn damaged_shapes_decode_in_place_or_fail_without_panicking() {
        // The decoders' path: the model reads the damaged shapes in place.
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let s = streams(12);
        let mut p = Packer::default();
        p.pack(&MtraceKinds, &s).unwrap();
        let mut plain: [&[u8]; stream::COUNT] = std::array::from_fn(|i| s.bytes[i].as_slice());
        for n in PACKED {
            plain[n as usize] = &[];
        }
        let (mut ok, mut failed) = (0, 0);
        for _ in 0..2000 {
            let parts = damaged(&p, &mut next);
            let [ids, table, free] = &parts;
            let mut sections = plain;
            sections[stream::FREE as usize] = free;
            let (records, e) = decode_all(crate::shared::allocation_model::Cursors::shaped(
                sections, ids, table,
            ));
            assert!(records.len() <= ids.len());
            match e {
                None => ok += 1,
                Some(_) => failed += 1,
            }
        }
        // Nearly every damage is noticed: a changed shape throws the model off.
        assert!(failed > 1500, "{ok} decoded, {failed} refused");
    }

    /// Model streams and shapes of a synthetic memory-replay block: every shape (bare
    /// verbatim lines, thread ends, mallocs, callocs with an extra value, frees of recent and
    /// old blocks, reallocs), new and repeated sites and sizes, and allocations at live
    /// addresses (flagged, with a relive rank).
    fn replay_block(seed: u64, n: usize) -> (Streams, Packer) {
        use crate::formats::memory_replay::model as rk;
        let mut x = seed;
        let mut live: Vec<u64> = Vec::new();
        let mut state = State::for_block();
        let mut s = Streams::default();
        let mut sites = 0u32;
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let site = ((x >> 33) % 12) as u32;
            let site = site.min(sites);
            let size = [16, 24, 40, 100, 4096][(x >> 45) as usize % 5] + (x >> 60) % 3;
            let addr = 0x8000 + ((x >> 12) % 3000) * 16;
            let r = match (x >> 8) % 16 {
                0 => ModelRecord {
                    kind: rk::VERBATIM,
                    ..ModelRecord::default()
                },
                1 => ModelRecord {
                    kind: rk::THREAD_DONE,
                    site,
                    ..ModelRecord::default()
                },
                2..=6 if !live.is_empty() => {
                    // Mostly recent blocks, now and then an old one, now and then no block.
                    let back = match (x >> 20) % 4 {
                        0 => (x >> 24) as usize % live.len(),
                        _ => (x >> 24) as usize % live.len().min(5),
                    };
                    let freed = if (x >> 30).is_multiple_of(23) {
                        0x7777_0000 + (x >> 40) % 64 * 8
                    } else {
                        live.remove(live.len() - 1 - back)
                    };
                    ModelRecord {
                        kind: rk::FREE,
                        site,
                        addr: freed,
                        ..ModelRecord::default()
                    }
                }
                7 | 8 if !live.is_empty() => {
                    let old = live.remove((x >> 24) as usize % live.len());
                    live.retain(|&a| a != addr);
                    live.push(addr);
                    ModelRecord {
                        kind: rk::REALLOC,
                        site,
                        old,
                        size,
                        addr,
                        ..ModelRecord::default()
                    }
                }
                k => {
                    // Allocations at a live address are kept live twice (a lost free).
                    if (x >> 50).is_multiple_of(7) {
                        live.retain(|&a| a != addr);
                    }
                    live.push(addr);
                    ModelRecord {
                        kind: if k == 9 { rk::CALLOC } else { rk::MALLOC },
                        site,
                        size,
                        addr,
                        extra: if k == 9 { (x >> 52) % 9 } else { 0 },
                        ..ModelRecord::default()
                    }
                }
            };
            if ReplayKinds.shape(r.kind) != Shape::Bare {
                sites = sites.max(site + 1);
            }
            state.encode(&ReplayKinds, &r, &mut s);
        }
        let mut p = Packer::default();
        p.pack(&ReplayKinds, &s).unwrap();
        (s, p)
    }

    /// A shaped block's sections: the model streams shapes do not replace and the large free
    /// values.
    fn shaped_sections<'a>(s: &'a Streams, free_rest: &'a [u8]) -> [&'a [u8]; stream::COUNT] {
        let mut sections: [&[u8]; stream::COUNT] = std::array::from_fn(|i| s.bytes[i].as_slice());
        for n in PACKED {
            sections[n as usize] = &[];
        }
        sections[stream::FREE as usize] = free_rest;
        sections
    }

    /// Decodes a block one record at a time (`next_kind`, then `State::decode`): the records,
    /// and the error that stopped it or that `finish` gives.
    fn decode_singles<K: KindTable>(
        kinds: &K,
        mut c: crate::shared::allocation_model::Cursors<'_>,
    ) -> (Vec<ModelRecord>, Option<String>) {
        let mut state = State::for_decoding();
        let mut out = Vec::new();
        while let Some(kind) = c.next_kind(kinds) {
            let r = kind.and_then(|kind| state.decode(kinds, kind, &mut c));
            match r {
                Ok(r) => out.push(r),
                Err(m) => return (out, Some(m)),
            }
        }
        (out, c.finish().err())
    }

    /// Decodes a block with `State::decode_into` in batches of `batch` records: the records,
    /// and the error that stopped it or that `finish` gives.
    fn decode_batches<K: KindTable>(
        kinds: &K,
        mut c: crate::shared::allocation_model::Cursors<'_>,
        batch: usize,
    ) -> (Vec<ModelRecord>, Option<String>) {
        let mut state = State::for_decoding();
        let mut out = Vec::new();
        loop {
            let before = out.len();
            match state.decode_into(kinds, &mut c, &mut out, before + batch) {
                Ok(true) => assert_eq!(out.len(), before + batch, "a full batch"),
                Ok(false) => return (out, c.finish().err()),
                Err(e) => {
                    assert_eq!(e.decoded, out.len() - before);
                    return (out, Some(e.message));
                }
            }
        }
    }

    #[test]
    fn batches_of_any_size_decode_what_single_records_decode() {
        let (s, p) = replay_block(21, 5000);
        // Every shape and stream is exercised.
        for n in [
            stream::SITE_MISS,
            stream::SIZE_MISS,
            stream::EXTRA,
            stream::RELIVE,
        ] {
            assert!(
                !s.bytes[n as usize].is_empty(),
                "{}",
                stream::NAMES[n as usize]
            );
        }
        assert!(!p.free_rest.is_empty());
        let sections = shaped_sections(&s, &p.free_rest);
        let cursors =
            || crate::shared::allocation_model::Cursors::shaped(sections, &p.ids, &p.table);
        let (want, e) = decode_singles(&ReplayKinds, cursors());
        assert_eq!((want.len(), e), (5000, None));
        for batch in [1, 2, 127, 128, 129, 1000, 2048, 5000, 6000] {
            let (got, e) = decode_batches(&ReplayKinds, cursors(), batch);
            assert_eq!(e, None, "batch {batch}");
            assert!(got == want, "batch {batch}");
        }
    }

    #[test]
    fn batches_read_two_byte_shape_ids_as_single_records_do() {
        // Enough records for more than 128 shapes, so that many ids take two bytes (the batch
        // reader's inner loop reads those itself).
        let (s, p) = replay_block(23, 40_000);
        let two_byte = p.ids.iter().filter(|&&b| b >= 0x80).count();
        assert!(two_byte > 1000, "only {two_byte} two-byte ids");
        let sections = shaped_sections(&s, &p.free_rest);
        let cursors =
            || crate::shared::allocation_model::Cursors::shaped(sections, &p.ids, &p.table);
        let (want, e) = decode_singles(&ReplayKinds, cursors());
        assert_eq!((want.len(), e), (40_000, None));
        for batch in [1, 128, 2048, 40_000] {
            let (got, e) = decode_batches(&ReplayKinds, cursors(), batch);
            assert_eq!(e, None, "batch {batch}");
            assert!(got == want, "batch {batch}");
        }
        // A two-byte id naming a shape not yet defined is refused after the good records, as
        // one at a time.
        let mut ids = p.ids.clone();
        let at = ids.iter().position(|&b| b >= 0x80).expect("a two-byte id");
        ids[at + 1] = 0x7f;
        let cursors = || crate::shared::allocation_model::Cursors::shaped(sections, &ids, &p.table);
        let want = decode_singles(&ReplayKinds, cursors());
        assert!(want.1.as_deref().is_some_and(|m| m.contains("not defined")));
        assert_eq!(decode_batches(&ReplayKinds, cursors(), 2048), want);
    }

    #[test]
    fn damaged_blocks_fail_in_batches_as_record_by_record() {
        // Damage anywhere (shape ids and table, the free values, the site, size, extra,
        // address, free-miss and relive streams): batch decoding must give back the same good
        // records and the same error as decoding one record at a time, whichever half of
        // which record of a run of records goes wrong first.
        let mut next = xorshift(0x5851_f42d_4c95_7f2d);
        let (s, p) = replay_block(22, 3000);
        let damageable = [
            stream::SITE_MISS,
            stream::SIZE_MISS,
            stream::ADDR_MISS,
            stream::FREE_MISS,
            stream::EXTRA,
            stream::RELIVE,
        ];
        let (mut ok, mut failed) = (0, 0);
        for round in 0..1500 {
            let mut streams = Streams::default();
            streams.bytes.clone_from(&s.bytes);
            let mut parts = [p.ids.clone(), p.table.clone(), p.free_rest.clone()];
            for _ in 0..1 + next() % 2 {
                let pick = (next() % 9) as usize;
                let part = match pick {
                    0..=2 => &mut parts[pick],
                    _ => &mut streams.bytes[damageable[pick - 3] as usize],
                };
                if part.is_empty() {
                    continue;
                }
                let at = (next() % part.len() as u64) as usize;
                match next() % 5 {
                    0 => part.truncate(at),
                    1 => part[at] ^= 0x80,
                    _ => part[at] = next() as u8,
                }
            }
            let [ids, table, free] = &parts;
            let sections = shaped_sections(&streams, free);
            let cursors = || crate::shared::allocation_model::Cursors::shaped(sections, ids, table);
            let want = decode_singles(&ReplayKinds, cursors());
            for batch in [1, 100, 2048] {
                let got = decode_batches(&ReplayKinds, cursors(), batch);
                assert!(
                    got.0 == want.0,
                    "round {round} batch {batch}: records differ"
                );
                assert_eq!(got.1, want.1, "round {round} batch {batch}");
            }
            match want.1 {
                None => ok += 1,
                Some(_) => failed += 1,
            }
        }
        assert!(ok > 50 && failed > 500, "{ok} decoded, {failed} refused");
    }

    #[test]
    fn damaged_shapes_are_errors_after_the_good_records() {
        let s = streams(7);
        let mut p = Packer::default();
        p.pack(&MtraceKinds, &s).unwrap();
        let mut u = Unpacker::default();
        // An id past the next new one.
        let mut ids = p.ids.clone();
        let records = 10;
        let cut = {
            let mut c = Cursor::new(&ids, "shapes");
            for _ in 0..records {
                c.u64().unwrap();
            }
            c.position()
        };
        ids.truncate(cut);
        ids.push(0x7f);
        let e = u
            .unpack(&MtraceKinds, &ids, &p.table, &p.free_rest)
            .unwrap_err();
        assert_eq!(e.records, records);
        assert!(
            e.message.contains("shape 127 is not defined"),
            "{}",
            e.message
        );
        assert_eq!(u.stream(stream::KIND).len(), records);
        // A table cut short, a free symbol out of range, bytes left over.
        let e = u
            .unpack(
                &MtraceKinds,
                &p.ids,
                &p.table[..p.table.len() - 1],
                &p.free_rest,
            )
            .unwrap_err();
        assert!(e.message.contains("shape-table"), "{}", e.message);
        let e = u
            .unpack(&MtraceKinds, &[0], &[kinds::FREE, 0, 17], &[])
            .unwrap_err();
        assert!(e.message.contains("free symbol 17"), "{}", e.message);
        let e = u
            .unpack(&MtraceKinds, &[0], &[kinds::START, 9], &[])
            .unwrap_err();
        assert!(e.message.contains("1 bytes left"), "{}", e.message);
        let e = u
            .unpack(&MtraceKinds, &[0], &[kinds::FREE, 0, 16], &[0xff; 10])
            .unwrap_err();
        assert!(e.message.contains("free"), "{}", e.message);
        assert_eq!(e.records, 0);
    }
}
