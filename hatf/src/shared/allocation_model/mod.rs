//! The `auto` model shared by every allocation front end: predicts each field of a record from
//! what came before and stores only which prediction held (a small symbol) or, when none did,
//! the residual. Each kind of symbol goes to its own stream so a general compressor sees
//! uniform data. The exact layout is in `docs/FORMAT.md §6.1`.

pub mod packing;
pub mod prediction;
pub mod threads;

use crate::shared::live_set::LiveSet;
use metatf::varint::Cursor;
use prediction::site_and_address::{AddrHalf, SiteHalf};

/// Stream numbers the model writes (front ends use numbers from [`FIRST_FORMAT_STREAM`] on).
pub mod stream {
    /// One byte per record: the front end's kind code.
    pub const KIND: u8 = 0;
    /// One byte per record with a site: position in the site cache of its context, or 8 = miss.
    pub const SITE: u8 = 1;
    /// Varint site id for each site miss.
    pub const SITE_MISS: u8 = 2;
    /// One byte per sized record: position in the site's size cache, or 4 = miss.
    pub const SIZE: u8 = 3;
    /// Varint size for each size miss.
    pub const SIZE_MISS: u8 = 4;
    /// One byte per allocated address: which guess held (see `prediction::addresses::guess`).
    pub const ADDR: u8 = 5;
    /// Zigzag varint delta from the after-previous guess, for each address miss.
    pub const ADDR_MISS: u8 = 6;
    /// Varint per freed address: 0 = null, 1 = not a live block (see FREE_MISS), r+2 = the
    /// r-th newest live block.
    pub const FREE: u8 = 7;
    /// Zigzag varint delta from the previous allocated address, for frees of unknown blocks.
    pub const FREE_MISS: u8 = 8;
    /// Varint per record with an extra value (calloc count, alignment).
    pub const EXTRA: u8 = 9;
    /// For each allocation at an address that was still live (its
    /// address symbol has [`crate::shared::allocation_model::prediction::addresses::guess::RELIVE`] set), the varint rank of that live
    /// block, counted from the newest, before the new block was added.
    pub const RELIVE: u8 = 10;
    /// How many streams the model uses.
    pub const COUNT: usize = 11;
    /// Names, for errors and size reports.
    pub const NAMES: [&str; COUNT] = [
        "kind",
        "site",
        "site-miss",
        "size",
        "size-miss",
        "addr",
        "addr-miss",
        "free",
        "free-miss",
        "extra",
        "relive",
    ];
}

/// First stream number front ends may use for their own streams.
pub const FIRST_FORMAT_STREAM: u8 = 16;

/// Which fields a record kind carries, as far as the model is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Nothing but the kind (markers, verbatim lines).
    Bare,
    /// A site (call site or thread) only.
    Site,
    /// A new block: site, size, address.
    Alloc,
    /// A freed block: site, address.
    Free,
    /// Free of `old` and a new block: site, old address, size, address.
    Realloc,
}

/// One record as the model sees it. Fields the shape does not carry are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModelRecord {
    /// The front end's kind code (< 256).
    pub kind: u8,
    /// Call site or thread id; ids are dense and a new one is exactly one more than the largest
    /// seen so far.
    pub site: u32,
    /// Requested size.
    pub size: u64,
    /// Block address (new block for allocations, freed block for frees).
    pub addr: u64,
    /// Freed block of a realloc.
    pub old: u64,
    /// Extra value when the kind has one.
    pub extra: u64,
}

/// What a front end tells the model about its kind codes.
pub trait KindTable {
    /// The fields of records of `kind`.
    fn shape(&self, kind: u8) -> Shape;
    /// True when records of `kind` carry an extra value.
    fn has_extra(&self, kind: u8) -> bool;
    /// The reuse class of a block of `size` bytes allocated or freed at `site` (default:
    /// glibc's chunk sizes, shared by all sites).
    fn size_class(&self, size: u64, _site: u32) -> prediction::addresses::Class {
        prediction::addresses::Class::glibc(size)
    }
    /// True when the front end's text is quick to print and write, so that in a threaded
    /// decode the thread that writes it has time to run the model's site half as well
    /// (`threads/shaped_decode.rs`). False (the default) keeps the whole model on the worker: mtrace's
    /// writing thread is the busier one, and the site half on it would slow its decode.
    fn sites_ahead(&self) -> bool {
        false
    }
}

/// Prediction state; the encoder and the decoder hold identical copies.
#[derive(Debug, Default)]
pub struct State {
    sites: SiteHalf,
    addrs: AddrHalf,
}

/// The model's output streams for one block.
#[derive(Debug, Default)]
pub struct Streams {
    /// Indexed by the numbers in [`stream`].
    pub bytes: [Vec<u8>; stream::COUNT],
}

impl Streams {
    /// Empties every stream, keeping capacity.
    pub fn clear(&mut self) {
        for s in &mut self.bytes {
            s.clear();
        }
    }
}

/// Read cursors over one block's model streams.
#[derive(Debug, Clone)]
pub struct Cursors<'a> {
    c: [Cursor<'a>; stream::COUNT],
    /// Layout `alloc-model-4`: the shapes that hold the kind, site, size, address and small
    /// free symbols in place of their streams.
    shapes: Option<packing::record_shapes::ShapeReader<'a>>,
}

impl<'a> Cursors<'a> {
    /// Cursors over `sections[i]` for each model stream (missing streams read as empty).
    pub fn new(sections: [&'a [u8]; stream::COUNT]) -> Self {
        Cursors {
            c: std::array::from_fn(|i| Cursor::new(sections[i], stream::NAMES[i])),
            shapes: None,
        }
    }

    /// Cursors over a shaped block (layout `alloc-model-4`): its shape ids and shape table, and
    /// `sections[i]` for the model streams shapes do not replace (`sections[FREE]` is the
    /// block's stored free stream of large values).
    pub fn shaped(sections: [&'a [u8]; stream::COUNT], ids: &'a [u8], table: &'a [u8]) -> Self {
        let mut c = Cursors::new(sections);
        c.shapes = Some(packing::record_shapes::ShapeReader::new(ids, table));
        c
    }

    #[inline]
    fn at(&mut self, s: u8) -> &mut Cursor<'a> {
        &mut self.c[s as usize]
    }

    /// Reads the next kind code, or `None` at the end of the block.
    #[inline]
    pub fn next_kind<K: KindTable + ?Sized>(&mut self, kinds: &K) -> Option<Result<u8, String>> {
        match &mut self.shapes {
            Some(s) => s.next_kind(kinds),
            None => self.at(stream::KIND).next_byte().map(Ok),
        }
    }

    /// Kind codes left to read: an upper bound on the records left in the block.
    pub fn kinds_left(&self) -> usize {
        match &self.shapes {
            Some(s) => s.left(),
            None => self.c[stream::KIND as usize].remaining(),
        }
    }

    /// True when every record of the block was read.
    pub fn is_done(&self) -> bool {
        match &self.shapes {
            Some(s) => s.is_done(),
            None => self.c[stream::KIND as usize].is_empty(),
        }
    }

    /// After the block's last record: an error if a shaped block has table or free-stream
    /// bytes left over.
    pub fn finish(&self) -> Result<(), String> {
        match &self.shapes {
            Some(s) => s.finish(&self.c[stream::FREE as usize]),
            None => Ok(()),
        }
    }

    /// The current record's site symbol.
    #[inline]
    fn site_symbol(&mut self) -> Result<u8, String> {
        match &self.shapes {
            Some(s) => Ok(s.site()),
            None => self.at(stream::SITE).byte(),
        }
    }

    /// The current record's size symbol.
    #[inline]
    fn size_symbol(&mut self) -> Result<u8, String> {
        match &self.shapes {
            Some(s) => Ok(s.size()),
            None => self.at(stream::SIZE).byte(),
        }
    }

    /// The current record's address symbol.
    #[inline]
    fn addr_symbol(&mut self) -> Result<u8, String> {
        match &self.shapes {
            Some(s) => Ok(s.addr()),
            None => self.at(stream::ADDR).byte(),
        }
    }

    /// The current record's free value.
    #[inline]
    fn free_value(&mut self) -> Result<u64, String> {
        match &mut self.shapes {
            Some(s) => s.free(&mut self.c[stream::FREE as usize]),
            None => self.at(stream::FREE).u64(),
        }
    }
}

/// Why [`State::decode_into`] stopped: the error and how many records it had appended before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchError {
    /// Records appended to the batch before the failing one.
    pub decoded: usize,
    /// What was wrong.
    pub message: String,
}

impl State {
    /// A fresh state for encoding one block (`alloc-model-4`): frees of blocks it does not
    /// know are coded against the previous one, and allocations at live addresses are flagged.
    pub fn for_block() -> Self {
        State::default()
    }

    /// A fresh state for decoding one block: it finds live blocks by rank alone, since
    /// allocations at live addresses are flagged.
    pub fn for_decoding() -> Self {
        let mut s = State::default();
        s.addrs.live = LiveSet::by_rank_only();
        s
    }

    /// Makes this state what it was at the start of a block of a file whose blocks each start
    /// a fresh model, keeping the memory of its tables: allocating and faulting in the tables
    /// again for every block would be a tenth of a decode.
    pub fn restart_for_block(&mut self) {
        self.sites.clear();
        self.addrs.clear_for_block();
    }

    /// Number of distinct sites seen so far.
    pub fn sites_seen(&self) -> u32 {
        self.sites.sites_seen()
    }

    /// Starts fetching the live-block entry of `addr`, the address of a record that will be
    /// encoded a few records from now: an encoder knows its coming records, and a lookup whose
    /// table line is not in the cache was most of the model's time. A hint only.
    #[inline]
    pub fn prefetch_block(&self, addr: u64) {
        self.addrs.prefetch(addr);
    }

    /// Appends `r` to the streams and updates the state.
    pub fn encode<K: KindTable + ?Sized>(&mut self, kinds: &K, r: &ModelRecord, out: &mut Streams) {
        self.sites.encode(kinds, r, out);
        self.addrs.encode(kinds, r, out);
    }

    /// The two halves, to run on different threads (see [`halves`]).
    pub fn split(self) -> (SiteHalf, AddrHalf) {
        (self.sites, self.addrs)
    }

    /// Reads the fields of a record of `kind` (already read with [`Cursors::next_kind`]).
    #[inline]
    pub fn decode<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        kind: u8,
        c: &mut Cursors<'_>,
    ) -> Result<ModelRecord, String> {
        prediction::site_and_address::decode_record(
            &mut self.sites,
            &mut self.addrs,
            kinds,
            kind,
            c,
        )
    }

    /// Decodes records from `c` onto the end of `out` until the block's kind stream ends or
    /// `out` holds `limit` records: the library's batch decoding into typed records. Returns
    /// true when the block has more records.
    pub fn decode_into<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        c: &mut Cursors<'_>,
        out: &mut Vec<ModelRecord>,
        limit: usize,
    ) -> Result<bool, BatchError> {
        let start = out.len();
        out.reserve(limit.saturating_sub(start).min(c.kinds_left()));
        if let Some(shapes) = &mut c.shapes {
            let (sites, addrs) = (&mut self.sites, &mut self.addrs);
            return prediction::site_and_address::decode_shaped(
                sites, addrs, kinds, shapes, &mut c.c, out, limit,
            )
            .map_err(|message| BatchError {
                decoded: out.len() - start,
                message: *message,
            });
        }
        while out.len() < limit {
            let kind = match c.next_kind(kinds) {
                None => return Ok(false),
                Some(Ok(kind)) => kind,
                Some(Err(message)) => {
                    return Err(BatchError {
                        decoded: out.len() - start,
                        message,
                    })
                }
            };
            match self.decode(kinds, kind, c) {
                Ok(r) => out.push(r),
                Err(message) => {
                    return Err(BatchError {
                        decoded: out.len() - start,
                        message,
                    })
                }
            }
        }
        Ok(!c.is_done())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::mtrace::model::{self as kinds, MtraceKinds};
    use metatf::varint::put_u64;

    /// Records with allocations, frees of live and unknown blocks and a few sites.
    fn records(seed: u64) -> Vec<ModelRecord> {
        let mut x = seed;
        let mut live: Vec<u64> = Vec::new();
        let mut out = Vec::new();
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let site = ((x >> 30) % 7) as u32;
            let site = site.min(out.len() as u32);
            if x.is_multiple_of(3) && !live.is_empty() {
                let i = (x >> 20) as usize % live.len();
                out.push(ModelRecord {
                    kind: kinds::FREE,
                    site,
                    addr: live.swap_remove(i),
                    ..ModelRecord::default()
                });
            } else {
                let addr = 0x10_0000 + ((x >> 12) % 4096) * 16;
                live.push(addr);
                out.push(ModelRecord {
                    kind: kinds::MALLOC,
                    site,
                    size: (x >> 50) % 300,
                    addr,
                    ..ModelRecord::default()
                });
            }
        }
        out
    }

    /// [`records`] with site ids made dense, as the model requires of its input (a new site is
    /// one more than the largest seen).
    fn dense_records(seed: u64) -> Vec<ModelRecord> {
        let mut seen = 0u32;
        let mut out = records(seed);
        for r in &mut out {
            r.site = r.site.min(seen);
            seen = seen.max(r.site + 1);
        }
        out
    }

    /// Encodes `records` with `enc`, decodes them with `dec`; the decoded records or the error.
    fn round_trip(
        mut enc: State,
        mut dec: State,
        records: &[ModelRecord],
    ) -> (Streams, Result<Vec<ModelRecord>, BatchError>) {
        let mut streams = Streams::default();
        for r in records {
            enc.encode(&MtraceKinds, r, &mut streams);
        }
        let sections: [&[u8]; stream::COUNT] = std::array::from_fn(|i| &streams.bytes[i][..]);
        let mut c = Cursors::new(sections);
        let mut out = Vec::new();
        let decoded = dec
            .decode_into(&MtraceKinds, &mut c, &mut out, usize::MAX)
            .map(|_| out);
        (streams, decoded)
    }

    #[test]
    fn allocations_at_live_addresses_are_flagged_and_decode_by_rank() {
        let recs = dense_records(3);
        let (streams, decoded) = round_trip(State::for_block(), State::for_decoding(), &recs);
        assert_eq!(decoded.expect("decodes"), recs);
        // The generated addresses collide, so the flags and ranks are exercised.
        let flagged = streams.bytes[stream::ADDR as usize]
            .iter()
            .filter(|&&b| b & prediction::addresses::guess::RELIVE != 0)
            .count();
        assert!(flagged > 100, "only {flagged} flagged allocations");
        assert!(!streams.bytes[stream::RELIVE as usize].is_empty());
    }

    #[test]
    fn a_wrong_relive_rank_is_an_error() {
        let recs = dense_records(4);
        let mut enc = State::for_block();
        let mut streams = Streams::default();
        for r in &recs {
            enc.encode(&MtraceKinds, r, &mut streams);
        }
        // Every rank one more: each names another block (or none), never a panic.
        let mut ranks = Vec::new();
        let mut c = Cursor::new(&streams.bytes[stream::RELIVE as usize], "relive");
        while !c.is_empty() {
            put_u64(&mut ranks, c.u64().expect("rank") + 1);
        }
        streams.bytes[stream::RELIVE as usize] = ranks;
        let sections: [&[u8]; stream::COUNT] = std::array::from_fn(|i| &streams.bytes[i][..]);
        let mut c = Cursors::new(sections);
        let mut out = Vec::new();
        let err = State::for_decoding()
            .decode_into(&MtraceKinds, &mut c, &mut out, usize::MAX)
            .expect_err("a wrong rank is noticed");
        assert!(
            err.message.contains("reusing live block"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_restarted_state_codes_as_a_fresh_one() {
        let mut used = State::for_block();
        let mut scratch = Streams::default();
        for r in records(1) {
            used.encode(&MtraceKinds, &r, &mut scratch);
        }
        used.restart_for_block();
        let (mut a, mut b) = (Streams::default(), Streams::default());
        let mut fresh = State::for_block();
        for r in records(2) {
            used.encode(&MtraceKinds, &r, &mut a);
            fresh.encode(&MtraceKinds, &r, &mut b);
        }
        assert_eq!(a.bytes, b.bytes);
    }
}
