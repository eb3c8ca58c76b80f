//! The model's two halves: call sites and sizes ([`SiteHalf`]), and addresses and the live
//! blocks ([`AddrHalf`]).
//!
//! Each half reads and writes streams of its own, and an encoder's address half needs nothing
//! from the site half (the record's own site and size are all it uses), so the two can run on
//! different threads over the same records (see `threads/encode_worker.rs`). A decoder runs the site half of a
//! record first: the address half needs the decoded site and size.

use crate::shared::allocation_model::packing::record_shapes::{Entry, FreeValues, ShapeReader};
use crate::shared::allocation_model::prediction::addresses::{self, AddrPredictor};
use crate::shared::allocation_model::prediction::sites::{SiteCaches, SITE_CACHE, SIZE_CACHE};
use crate::shared::allocation_model::{stream, Cursors, KindTable, ModelRecord, Shape, Streams};
use crate::shared::live_set::LiveSet;
use metatf::varint::{put_u64, zigzag, Cursor};

/// The model's read cursors, one per stream.
type Streamed<'a> = [Cursor<'a>; stream::COUNT];

/// The error of the per-record steps of a shaped decode: boxed, so that a step's result fits
/// in two registers (a `Result` holding a `String` is returned through memory and copied at
/// every `?`, which would be a tenth of a decode's instructions).
type Bad = Box<String>;

/// The site cache of each (previous site, kind), the size cache of each site, and the site
/// count.
#[derive(Debug, Default)]
pub struct SiteHalf {
    prev_site: u32,
    sites_seen: u32,
    sites: SiteCaches,
}

/// The live blocks and the address predictor.
#[derive(Debug, Default)]
pub struct AddrHalf {
    pub(in crate::internal::shared::allocation_model) live: LiveSet,
    addr: AddrPredictor,
    prev_alloc: u64,
    /// The address of the previous free of an unknown block: the next such free is coded
    /// against it, not against the previous allocation (each block starts a fresh model, so
    /// most of them free blocks of earlier blocks, often in address order).
    last_free_miss: Option<u64>,
}

/// Reads the fields of a record of `kind` (already read) with both halves: the site half
/// first, since the address half needs the decoded site and size. The kind's shape is asked
/// for once (a front end's kind table may be behind a `dyn`).
#[inline]
pub fn decode_record<K: KindTable + ?Sized>(
    sites: &mut SiteHalf,
    addrs: &mut AddrHalf,
    kinds: &K,
    kind: u8,
    c: &mut Cursors<'_>,
) -> Result<ModelRecord, String> {
    if let Some(shapes) = &mut c.shapes {
        // The shape `next_kind` read, as a batch decode reads it (a caller that names another
        // kind takes the path below, which asks the kind table).
        let e = shapes.current();
        if e.kind() == kind {
            return decode_entry(sites, addrs, kinds, &e, shapes, &mut c.c).map_err(|b| *b);
        }
    }
    let mut r = ModelRecord {
        kind,
        ..ModelRecord::default()
    };
    let shape = kinds.shape(kind);
    sites.decode(kinds, shape, &mut r, c)?;
    addrs.decode(kinds, shape, &mut r, c)?;
    Ok(r)
}

/// Decodes the records of a shaped block (layout `alloc-model-4`) onto the end of `out` until
/// the block ends or `out` holds `limit` records; true when the block has more. What
/// [`decode_record`] does for each, with each shape's fields and extra value worked out once
/// per shape instead of once per record, and no per-symbol choice between shapes and
/// streams. On an error, `out` holds the records before the bad one.
///
/// Records go [`CHUNK`] at a time: their shapes are read first, then the site half runs over
/// all of them, then the address half. The site half needs nothing from the address half and
/// each reads streams of its own, so this gives what record-by-record decoding gives, and
/// each loop keeps its own state in registers.
#[inline(always)]
pub fn decode_shaped<K: KindTable + ?Sized>(
    sites: &mut SiteHalf,
    addrs: &mut AddrHalf,
    kinds: &K,
    shapes: &mut ShapeReader<'_>,
    c: &mut Streamed<'_>,
    out: &mut Vec<ModelRecord>,
    limit: usize,
) -> Result<bool, Bad> {
    let mut entries = [Entry::BLANK; CHUNK];
    loop {
        let room = limit.saturating_sub(out.len()).min(CHUNK);
        if room == 0 {
            return Ok(!shapes.is_done());
        }
        let start = out.len();
        let chunk = site_chunk(sites, kinds, shapes, c, &mut entries[..room], out);
        let (entries, records) = (&entries[..chunk.sited], &mut out[start..]);
        let (done, bad_addr) = addrs.decode_chunk(kinds, entries, records, shapes.frees(), c);
        out.truncate(start + done);
        // The first bad record's error: an address error is in a record before any site
        // error (the address half ran only over records whose site half was good).
        if let Some(bad) = bad_addr.or(chunk.bad) {
            return Err(bad);
        }
        if chunk.read < room {
            return Ok(false);
        }
    }
}

/// Runs the site half of a shaped block (see [`decode_shaped`]) until the block ends or
/// `records` holds `limit` records, appending each record (its kind, site, size and extra
/// value) to `records` and its shape to `entries`; true when the block has more. The address
/// half then runs over them with [`AddrHalf::decode_chunk`] (on another thread). On an error,
/// `records` and `entries` hold the records before the bad one.
pub fn decode_sites<K: KindTable + ?Sized>(
    sites: &mut SiteHalf,
    kinds: &K,
    shapes: &mut ShapeReader<'_>,
    c: &mut Streamed<'_>,
    records: &mut Vec<ModelRecord>,
    entries: &mut Vec<Entry>,
    limit: usize,
) -> Result<bool, String> {
    loop {
        let room = limit.saturating_sub(records.len()).min(CHUNK);
        if room == 0 {
            return Ok(!shapes.is_done());
        }
        let start = records.len();
        entries.resize(start + room, Entry::BLANK);
        let chunk = site_chunk(sites, kinds, shapes, c, &mut entries[start..], records);
        entries.truncate(start + chunk.sited);
        records.truncate(start + chunk.sited);
        if let Some(bad) = chunk.bad {
            return Err(*bad);
        }
        if chunk.read < room {
            return Ok(false);
        }
    }
}

/// What [`site_chunk`] did.
struct SitedChunk {
    /// Shapes read.
    read: usize,
    /// Records whose site half was decoded: the first `sited` of them.
    sited: usize,
    /// The error of the first bad record (a bad site or size, or after the `read` records, a
    /// bad shape id).
    bad: Option<Bad>,
}

/// Reads the shapes of the next `entries.len()` records (fewer at the block's end) into
/// `entries`, appends the records with their kinds to `out`, and runs the site half over
/// them.
#[inline(always)]
fn site_chunk<K: KindTable + ?Sized>(
    sites: &mut SiteHalf,
    kinds: &K,
    shapes: &mut ShapeReader<'_>,
    c: &mut Streamed<'_>,
    entries: &mut [Entry],
    out: &mut Vec<ModelRecord>,
) -> SitedChunk {
    let (read, bad_id) = shapes.next_entries(kinds, entries);
    let entries = &entries[..read];
    // The records, with their kinds, go straight into `out` (one reserve, no per-record
    // push); the halves fill in the rest, and a bad record cuts them back.
    let start = out.len();
    out.extend(entries.iter().map(|e| ModelRecord {
        kind: e.kind(),
        ..ModelRecord::default()
    }));
    let (sited, bad_site) = sites.decode_chunk(entries, &mut out[start..], c);
    // A bad site comes before a bad shape id, which follows every shape read.
    SitedChunk {
        read,
        sited,
        bad: bad_site.or_else(|| bad_id.map(Into::into)),
    }
}

/// Records [`decode_shaped`] takes at a time: enough that each half's loop runs long, few
/// enough that their shapes and records stay in the first-level cache.
const CHUNK: usize = 128;

/// The address half of `records` (whose kind, site, size and extra value are decoded), of
/// shapes `entries`: how many were decoded, and the error of the next one, if any.
///
/// Not inlined (a call per chunk of [`CHUNK`] records): inlined into the batch loop, the
/// loop's own values (the shape reader, the output, the limit) take registers that the
/// per-record work then keeps on the stack, on every record.
#[inline(never)]
fn decode_addresses<K: KindTable + ?Sized, const NO_MAP: bool>(
    addrs: &mut AddrHalf,
    kinds: &K,
    entries: &[Entry],
    records: &mut [ModelRecord],
    frees: &mut FreeValues,
    c: &mut Streamed<'_>,
) -> (usize, Option<Bad>) {
    let n = entries.len().min(records.len());
    // Zipped, not indexed: two bounds checks a record fewer.
    for (i, (e, r)) in entries.iter().zip(records.iter_mut()).enumerate() {
        let shape = e.shape();
        if matches!(shape, Shape::Free | Shape::Realloc) {
            let freed = match frees.of(e, &mut c[stream::FREE as usize]) {
                Ok(v) => addrs.free::<K, NO_MAP>(kinds, v, r.site, c),
                Err(m) => Err(m.into()),
            };
            match freed {
                Ok(a) if shape == Shape::Free => r.addr = a,
                Ok(a) => r.old = a,
                Err(bad) => return (i, Some(bad)),
            }
        }
        if matches!(shape, Shape::Alloc | Shape::Realloc) {
            match addrs.alloc::<K, NO_MAP>(kinds, e.addr(), r.size, r.site, c) {
                Ok(a) => r.addr = a,
                Err(bad) => return (i, Some(bad)),
            }
        }
    }
    (n, None)
}

/// Reads the fields of a record of shape `e` (just read from `shapes`) with both halves.
#[inline(always)]
pub fn decode_entry<K: KindTable + ?Sized>(
    sites: &mut SiteHalf,
    addrs: &mut AddrHalf,
    kinds: &K,
    e: &Entry,
    shapes: &mut ShapeReader<'_>,
    c: &mut Streamed<'_>,
) -> Result<ModelRecord, Bad> {
    let mut r = ModelRecord {
        kind: e.kind(),
        ..ModelRecord::default()
    };
    let shape = e.shape();
    if shape == Shape::Bare {
        return Ok(r);
    }
    r.site = sites.site(r.kind, e.site(), c)?;
    let sized = matches!(shape, Shape::Alloc | Shape::Realloc);
    if sized {
        r.size = sites.size(r.site, e.size(), c)?;
    }
    if e.has_extra() {
        r.extra = c[stream::EXTRA as usize].u64()?;
    }
    if matches!(shape, Shape::Free | Shape::Realloc) {
        let v = shapes.free_of(e, &mut c[stream::FREE as usize])?;
        let freed = addrs.free::<K, false>(kinds, v, r.site, c)?;
        if shape == Shape::Free {
            r.addr = freed;
        } else {
            r.old = freed;
        }
    }
    if sized {
        r.addr = addrs.alloc::<K, false>(kinds, e.addr(), r.size, r.site, c)?;
    }
    Ok(r)
}

/// The site of a record of `kind` whose site symbol is `sym`, after a record at site `prev`
/// when `seen` sites were seen (counted up when this is the next new one): [`SiteHalf::site`]
/// with the half's two numbers passed in, so that a loop over many records keeps them in
/// registers.
#[inline(always)]
fn site_of(
    sites: &mut SiteCaches,
    prev: u32,
    seen: &mut u32,
    kind: u8,
    sym: u8,
    c: &mut Streamed<'_>,
) -> Result<u32, Bad> {
    let sym = usize::from(sym);
    let cache = sites.after(prev, kind);
    match cache.get(sym) {
        Some(s) => {
            cache.promote(sym);
            Ok(s)
        }
        None => {
            // A cached site was seen before (the cache takes sites from misses, which are at
            // most the count, and the count then passes them), so only a miss can be the
            // next new site: the count is checked here, not for every record.
            let site = site_miss(cache, sym, *seen, c)?;
            *seen += u32::from(site == *seen);
            Ok(site)
        }
    }
}

/// [`site_of`] for a site not in the cache (a new site, or an old one not seen lately), and
/// for a symbol naming no entry.
#[inline(never)]
fn site_miss(
    cache: &mut crate::shared::allocation_model::prediction::sites::SiteMtf,
    sym: usize,
    seen: u32,
    c: &mut Streamed<'_>,
) -> Result<u32, Bad> {
    if sym != SITE_CACHE {
        return Err(format!("site cache has no entry {sym}").into());
    }
    let id = c[stream::SITE_MISS as usize].u64()?;
    let id = u32::try_from(id)
        .ok()
        .filter(|&id| id <= seen)
        .ok_or_else(|| format!("site id {id} is beyond the {seen} seen"))?;
    cache.touch(id);
    Ok(id)
}

/// The site symbol of `site`, not at the front of `cache` (the front is checked inline): its
/// position, or a miss with the site id appended to `misses`; the cache is updated.
#[inline(never)]
fn site_symbol(
    cache: &mut crate::shared::allocation_model::prediction::sites::SiteMtf,
    site: u32,
    misses: &mut Vec<u8>,
) -> u8 {
    match cache.find(site) {
        Some(i) => {
            cache.promote(i);
            i as u8
        }
        None => {
            put_u64(misses, u64::from(site));
            cache.insert_new(site);
            SITE_CACHE as u8
        }
    }
}

/// [`site_symbol`] for a size and its site's size cache: inline, as the size cache of some
/// traces misses for nearly every record (memory-replay threads ask for sizes all over).
#[inline(always)]
fn size_symbol(
    sizes: &mut crate::shared::allocation_model::prediction::sites::SizeMtf,
    size: u64,
    misses: &mut Vec<u8>,
) -> u8 {
    match sizes.find(size) {
        Some(i) => {
            sizes.promote(i);
            i as u8
        }
        None => {
            put_u64(misses, size);
            sizes.insert_new(size);
            SIZE_CACHE as u8
        }
    }
}

impl SiteHalf {
    /// Back to a fresh half, keeping the memory of its tables.
    pub fn clear(&mut self) {
        self.prev_site = 0;
        self.sites_seen = 0;
        self.sites.clear();
    }

    /// Number of distinct sites seen so far.
    pub fn sites_seen(&self) -> u32 {
        self.sites_seen
    }

    /// Appends the kind, site, size and extra value of `r` to their streams. Inlined into the
    /// encoders' per-record loops: as a call, saving and restoring registers around it was a
    /// sixth of its instructions.
    #[inline(always)]
    pub fn encode<K: KindTable + ?Sized>(&mut self, kinds: &K, r: &ModelRecord, out: &mut Streams) {
        let o = &mut out.bytes;
        o[stream::KIND as usize].push(r.kind);
        let shape = kinds.shape(r.kind);
        if shape == Shape::Bare {
            return;
        }
        // The front entry of each cache is the commonest answer: checked inline, the rest of
        // the search and the misses out of line, so the common path needs few registers.
        let cache = self.sites.after(self.prev_site, r.kind);
        let sym = match cache.get(0) {
            Some(s) if s == r.site => 0,
            _ => site_symbol(cache, r.site, &mut o[stream::SITE_MISS as usize]),
        };
        o[stream::SITE as usize].push(sym);
        self.site_seen(r.site);
        if matches!(shape, Shape::Alloc | Shape::Realloc) {
            let sizes = self.sites.sizes(r.site);
            let sym = match sizes.get(0) {
                Some(s) if s == r.size => 0,
                _ => size_symbol(sizes, r.size, &mut o[stream::SIZE_MISS as usize]),
            };
            o[stream::SIZE as usize].push(sym);
        }
        if kinds.has_extra(r.kind) {
            put_u64(&mut o[stream::EXTRA as usize], r.extra);
        }
    }

    /// Reads the site, size and extra value of a record of kind `r.kind`, whose shape is
    /// `shape`, into `r`.
    #[inline]
    fn decode<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        shape: Shape,
        r: &mut ModelRecord,
        c: &mut Cursors<'_>,
    ) -> Result<(), String> {
        if shape == Shape::Bare {
            return Ok(());
        }
        let sym = c.site_symbol()?;
        r.site = self.site(r.kind, sym, &mut c.c).map_err(|b| *b)?;
        if matches!(shape, Shape::Alloc | Shape::Realloc) {
            let sym = c.size_symbol()?;
            r.size = self.size(r.site, sym, &mut c.c).map_err(|b| *b)?;
        }
        if kinds.has_extra(r.kind) {
            r.extra = c.at(stream::EXTRA).u64()?;
        }
        Ok(())
    }

    /// The site of a record of `kind` whose site symbol is `sym`.
    #[inline(always)]
    fn site(&mut self, kind: u8, sym: u8, c: &mut Streamed<'_>) -> Result<u32, Bad> {
        let site = site_of(
            &mut self.sites,
            self.prev_site,
            &mut self.sites_seen,
            kind,
            sym,
            c,
        )?;
        self.prev_site = site;
        Ok(site)
    }

    /// The size of a record at `site` whose size symbol is `sym`.
    #[inline(always)]
    fn size(&mut self, site: u32, sym: u8, c: &mut Streamed<'_>) -> Result<u64, Bad> {
        let sym = usize::from(sym);
        let sizes = self.sites.sizes(site);
        match sizes.get(sym) {
            Some(s) => {
                sizes.promote(sym);
                Ok(s)
            }
            None if sym == SIZE_CACHE => {
                let size = c[stream::SIZE_MISS as usize].u64()?;
                // The encoder writes a miss only for a size its cache lacks, so the search of
                // `touch` would find nothing (the size caches of some traces miss for most
                // records). In a damaged block the size may be cached already: it is then
                // cached twice, which decodes garbage but never panics.
                sizes.insert_new(size);
                Ok(size)
            }
            None => Err(format!("size cache has no entry {sym}").into()),
        }
    }

    /// The site, size and extra value of each of `records` (of shapes `entries`, with their
    /// kinds set, see [`decode_shaped`]): how many were decoded, and the error of the next
    /// one, if any. Not inlined, for the reason given at [`decode_addresses`].
    #[inline(never)]
    fn decode_chunk(
        &mut self,
        entries: &[Entry],
        records: &mut [ModelRecord],
        c: &mut Streamed<'_>,
    ) -> (usize, Option<Bad>) {
        // The previous site and the site count in locals for the loop, back in the half at
        // the end (also after an error: the records before it were decoded).
        let (mut prev, mut seen) = (self.prev_site, self.sites_seen);
        let n = entries.len().min(records.len());
        let mut end = (n, None);
        for i in 0..n {
            let (e, r) = (&entries[i], &mut records[i]);
            let shape = e.shape();
            if shape == Shape::Bare {
                continue;
            }
            let site = match site_of(&mut self.sites, prev, &mut seen, r.kind, e.site(), c) {
                Ok(site) => site,
                Err(bad) => {
                    end = (i, Some(bad));
                    break;
                }
            };
            r.site = site;
            prev = site;
            if matches!(shape, Shape::Alloc | Shape::Realloc) {
                match self.size(site, e.size(), c) {
                    Ok(size) => r.size = size,
                    Err(bad) => {
                        end = (i, Some(bad));
                        break;
                    }
                }
            }
            if e.has_extra() {
                match c[stream::EXTRA as usize].u64() {
                    Ok(v) => r.extra = v,
                    Err(m) => {
                        end = (i, Some(m.into()));
                        break;
                    }
                }
            }
        }
        (self.prev_site, self.sites_seen) = (prev, seen);
        end
    }

    /// Notes `site` as the latest (its cache entry was already touched).
    fn site_seen(&mut self, site: u32) {
        if site == self.sites_seen {
            self.sites_seen += 1;
        }
        self.prev_site = site;
    }
}

impl AddrHalf {
    /// The address half of `records`, of shapes `entries` (see [`decode_sites`]), their frees
    /// read by `frees`: how many were decoded, and the error of the next one, if any.
    #[inline(always)]
    pub fn decode_chunk<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        entries: &[Entry],
        records: &mut [ModelRecord],
        frees: &mut FreeValues,
        c: &mut Streamed<'_>,
    ) -> (usize, Option<Bad>) {
        // Whether the live set keeps an address map is tested once a chunk, not at every
        // allocation and free (a decoder of the current layouts keeps none).
        match self.live.keeps_no_map() {
            true => decode_addresses::<K, true>(self, kinds, entries, records, frees, c),
            false => decode_addresses::<K, false>(self, kinds, entries, records, frees, c),
        }
    }

    /// Back to a fresh half for a block of a file whose blocks start fresh models, keeping the
    /// memory of its tables.
    pub fn clear_for_block(&mut self) {
        self.live.clear();
        self.addr.clear();
        self.prev_alloc = 0;
        self.last_free_miss = None;
    }

    /// Starts fetching the live-block entry of `addr` (a hint only).
    #[inline]
    pub fn prefetch(&self, addr: u64) {
        self.live.prefetch(addr);
    }

    /// Appends the freed and allocated addresses of `r` to their streams.
    #[inline]
    pub fn encode<K: KindTable + ?Sized>(&mut self, kinds: &K, r: &ModelRecord, out: &mut Streams) {
        let shape = kinds.shape(r.kind);
        if shape == Shape::Bare {
            return;
        }
        let o = &mut out.bytes;
        if matches!(shape, Shape::Free | Shape::Realloc) {
            let freed = if shape == Shape::Free { r.addr } else { r.old };
            self.encode_free(kinds, freed, r.site, o);
        }
        if matches!(shape, Shape::Alloc | Shape::Realloc) {
            let class = kinds.size_class(r.size, r.site);
            let (sym, delta) = self.addr.classify_allocated(class, r.addr);
            let replaced = match r.addr {
                0 => None,
                a => self.live.insert_sized(a, r.size),
            };
            match replaced {
                // A block was still live at this address (a lost free): say so, with its rank,
                // so the decoder retires it without looking addresses up.
                Some(rank) => {
                    o[stream::ADDR as usize].push(sym | addresses::guess::RELIVE);
                    put_u64(&mut o[stream::RELIVE as usize], rank as u64);
                }
                None => o[stream::ADDR as usize].push(sym),
            }
            if sym == addresses::guess::MISS {
                put_u64(&mut o[stream::ADDR_MISS as usize], zigzag(delta));
            }
            self.prev_alloc = r.addr;
        }
    }

    /// Reads the freed and allocated addresses of `r` (of shape `shape`), whose kind, site and
    /// size are decoded.
    #[inline]
    fn decode<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        shape: Shape,
        r: &mut ModelRecord,
        c: &mut Cursors<'_>,
    ) -> Result<(), String> {
        if shape == Shape::Bare {
            return Ok(());
        }
        if matches!(shape, Shape::Free | Shape::Realloc) {
            let v = c.free_value()?;
            let freed = self
                .free::<K, false>(kinds, v, r.site, &mut c.c)
                .map_err(|b| *b)?;
            if shape == Shape::Free {
                r.addr = freed;
            } else {
                r.old = freed;
            }
        }
        if matches!(shape, Shape::Alloc | Shape::Realloc) {
            let sym = c.addr_symbol()?;
            r.addr = self
                .alloc::<K, false>(kinds, sym, r.size, r.site, &mut c.c)
                .map_err(|b| *b)?;
        }
        Ok(())
    }

    /// The address of a new block of `size` bytes at `site` whose address symbol is `sym`;
    /// the block becomes live. `NO_MAP`: the live set is known to keep no address map
    /// ([`LiveSet::prefetch_known`]).
    #[inline(always)]
    fn alloc<K: KindTable + ?Sized, const NO_MAP: bool>(
        &mut self,
        kinds: &K,
        sym: u8,
        size: u64,
        site: u32,
        c: &mut Streamed<'_>,
    ) -> Result<u64, Bad> {
        // An allocation at a live address (rare) goes out of line, so the common path keeps
        // no flag in a register.
        if sym & addresses::guess::RELIVE != 0 {
            return self.alloc_flagged(kinds, sym, size, site, c);
        }
        let delta = if sym == addresses::guess::MISS {
            c[stream::ADDR_MISS as usize].i64()?
        } else {
            0
        };
        let class = kinds.size_class(size, site);
        let a = self.addr.resolve_allocated(class, sym, delta)?;
        self.allocated::<NO_MAP>(a, size);
        Ok(a)
    }

    /// [`Self::alloc`] for a symbol with [`addresses::guess::RELIVE`] set: the live block at the
    /// address is retired first (its rank is in the relive stream).
    #[cold]
    #[inline(never)]
    fn alloc_flagged<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        sym: u8,
        size: u64,
        site: u32,
        c: &mut Streamed<'_>,
    ) -> Result<u64, Bad> {
        let sym = sym & !addresses::guess::RELIVE;
        let delta = if sym == addresses::guess::MISS {
            c[stream::ADDR_MISS as usize].i64()?
        } else {
            0
        };
        let class = kinds.size_class(size, site);
        let a = self.addr.resolve_allocated(class, sym, delta)?;
        self.retire_relive(a, &mut c[stream::RELIVE as usize])?;
        self.allocated::<false>(a, size);
        Ok(a)
    }

    /// A new block of `size` bytes is at `a` (its address symbol decoded): it becomes the
    /// previous allocation and, unless null, joins the live blocks.
    #[inline(always)]
    fn allocated<const NO_MAP: bool>(&mut self, a: u64, size: u64) {
        self.prev_alloc = a;
        if a != 0 {
            self.live.insert_known::<NO_MAP>(a, size);
        }
        // The next block is most likely carved right after this one: start fetching its
        // live-table entry now, so its insert does not wait for memory.
        self.live
            .prefetch_known::<NO_MAP>(self.addr.after_previous());
    }

    /// Where the delta of a free of an unknown block counts from.
    fn free_miss_base(&self) -> u64 {
        self.last_free_miss.unwrap_or(self.prev_alloc)
    }

    fn encode_free<K: KindTable + ?Sized>(
        &mut self,
        kinds: &K,
        addr: u64,
        site: u32,
        o: &mut [Vec<u8>; stream::COUNT],
    ) {
        if addr == 0 {
            put_u64(&mut o[stream::FREE as usize], 0);
            return;
        }
        match self.live.remove_sized(addr) {
            Some((rank, size)) => {
                put_u64(&mut o[stream::FREE as usize], rank as u64 + 2);
                self.freed(kinds, addr, size, site);
            }
            None => {
                put_u64(&mut o[stream::FREE as usize], 1);
                let d = addr.wrapping_sub(self.free_miss_base()) as i64;
                put_u64(&mut o[stream::FREE_MISS as usize], zigzag(d));
                self.last_free_miss = Some(addr);
            }
        }
    }

    /// The address freed by a record at `site` whose free value is `v` (`NO_MAP` as for
    /// [`Self::alloc`]).
    #[inline(always)]
    fn free<K: KindTable + ?Sized, const NO_MAP: bool>(
        &mut self,
        kinds: &K,
        v: u64,
        site: u32,
        c: &mut Streamed<'_>,
    ) -> Result<u64, Bad> {
        match v {
            0 => Ok(0),
            1 => {
                // A block that is not live: nothing to forget, no size class to free into.
                let d = c[stream::FREE_MISS as usize].i64()?;
                let addr = self.free_miss_base().wrapping_add(d as u64);
                self.last_free_miss = Some(addr);
                Ok(addr)
            }
            r => {
                let rank = usize::try_from(r - 2).unwrap_or(usize::MAX);
                let (addr, size) = self.live.remove_rank_sized(rank).ok_or_else(|| {
                    format!(
                        "free of live block {rank} but only {} live",
                        self.live.len()
                    )
                })?;
                self.freed(kinds, addr, size, site);
                // A freed block is the likeliest next one of its class (LIFO reuse).
                self.live.prefetch_known::<NO_MAP>(addr);
                Ok(addr)
            }
        }
    }

    /// Retires the live block that a flagged allocation at `addr` replaces: the rank comes from
    /// the relive stream, and the block there must be at `addr`.
    #[cold]
    fn retire_relive(&mut self, addr: u64, ranks: &mut Cursor<'_>) -> Result<(), String> {
        let rank = ranks.u64()?;
        let rank = usize::try_from(rank).unwrap_or(usize::MAX);
        let live = self.live.len();
        if addr == 0 {
            return Err("a null allocation is flagged as reusing a live block".to_string());
        }
        match self.live.remove_rank_sized(rank) {
            Some((a, _)) if a == addr => Ok(()),
            Some((a, _)) => Err(format!(
                "allocation at {addr:#x} is flagged as reusing live block {rank}, which is at {a:#x}"
            )),
            None => Err(format!(
                "allocation is flagged as reusing live block {rank} but only {live} live"
            )),
        }
    }

    /// A live block of `size` bytes at `addr` was freed by a record of `site`.
    fn freed<K: KindTable + ?Sized>(&mut self, kinds: &K, addr: u64, size: u64, site: u32) {
        // The freeing site's class: per-thread caches take the block where it is freed.
        self.addr.freed(kinds.size_class(size, site), addr);
    }
}
