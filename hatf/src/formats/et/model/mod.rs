//! The prediction state shared by the encoder and the decoder of one block.
//!
//! Both sides run the same updates in the same order, so every prediction the encoder makes
//! (which object a reference names, which method an exit leaves, which class a witness shows)
//! the decoder makes too; only the difference from the prediction is stored.

pub mod live;
mod rank_list;
mod recent;
mod stack;
mod witnessed;

use super::line::{Kind, Record, MAX_FIELDS};
use super::sections::streams::{id, StreamError, StreamReader, StreamWriter};
use live::LiveSet;
use metatf::hash::FastMap;
use metatf::varint::{unzigzag, zigzag};
use recent::Recent;
use stack::CallStack;
use witnessed::{WitnessCache, Witnessed};

/// How the fields of a `U` record are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UOrder {
    /// `U holder field value thread` (the et2-java producer).
    HolderFieldValue,
    /// `U holder value field thread` (the ET3 producer; holder 0 for statics).
    HolderValueField,
}

impl UOrder {
    /// The byte stored at the start of each block.
    pub fn code(self) -> u8 {
        match self {
            UOrder::HolderFieldValue => 0,
            UOrder::HolderValueField => 1,
        }
    }

    /// Inverse of [`UOrder::code`].
    pub fn from_code(c: u8) -> Option<UOrder> {
        match c {
            0 => Some(UOrder::HolderFieldValue),
            1 => Some(UOrder::HolderValueField),
            _ => None,
        }
    }

    /// The name used in the container's properties and in docs.
    pub fn name(self) -> &'static str {
        match self {
            UOrder::HolderFieldValue => "holder field value thread",
            UOrder::HolderValueField => "holder value field thread",
        }
    }

    /// Positions (in the line) of holder, value and field.
    fn positions(self) -> (usize, usize, usize) {
        match self {
            UOrder::HolderFieldValue => (0, 2, 1),
            UOrder::HolderValueField => (0, 1, 2),
        }
    }
}

/// Votes on the `U` field order from one record: the field id is a small number, the object
/// ids are identity hash codes (large) or 0.
pub fn u_order_vote(r: &Record) -> Option<UOrder> {
    const SMALL: u64 = 1 << 16;
    let (a, b) = (r.fields[1], r.fields[2]);
    if a < SMALL && b >= SMALL {
        Some(UOrder::HolderFieldValue)
    } else if b < SMALL && a >= SMALL {
        Some(UOrder::HolderValueField)
    } else {
        None
    }
}

/// Kind codes of the `kind` stream.
pub mod code {
    /// `N` record.
    pub const N: u8 = 0;
    /// `A` record.
    pub const A: u8 = 1;
    /// `D` record with three fields.
    pub const D3: u8 = 2;
    /// `D` record with four fields (size last).
    pub const D4: u8 = 3;
    /// `U` record.
    pub const U: u8 = 4;
    /// `M` record.
    pub const M: u8 = 5;
    /// `E` record.
    pub const E: u8 = 6;
    /// `W` record.
    pub const W: u8 = 7;
    /// `T` record.
    pub const T: u8 = 8;
    /// `H` record.
    pub const H: u8 = 9;
    /// `X` record.
    pub const X: u8 = 10;
    /// Empty line.
    pub const BLANK: u8 = 11;
    /// `#` comment or a line of white space, text in the `text` stream.
    pub const COMMENT: u8 = 12;
    /// A record spelled differently from the canonical rendering, text in `text`.
    pub const SPELLED: u8 = 13;
    /// A line that does not parse (kept by `--keep-bad-lines`), text in `text`.
    pub const BAD: u8 = 14;
    /// The last line of the input, lacking its `\n`, text in `text`.
    pub const UNTERMINATED: u8 = 15;
}

/// Threads remembered in the move-to-front list.
const THREADS: usize = 64;
/// How far below the top of the stack an exit is looked for.
const EXIT_SEARCH: usize = 32;

#[derive(Clone, Copy)]
struct ObjInfo {
    size: u64,
    /// Where its allocation site is in `Model::site_list` ([`NO_SITE`] when not allocated in
    /// the block): an index, not the site's key, so that a witness reaches the site without a
    /// second table lookup.
    site: usize,
    class: Option<u64>,
}

/// [`ObjInfo::site`] of an object whose allocation the block has not seen.
const NO_SITE: usize = usize::MAX;

impl Default for ObjInfo {
    fn default() -> Self {
        ObjInfo {
            size: 0,
            site: NO_SITE,
            class: None,
        }
    }
}

/// What an allocation site allocated last time.
#[derive(Clone, Copy)]
struct SiteLast {
    size: u64,
    type_id: u64,
    length: u64,
}

/// What the model knows of an allocation site (a site number, and whether it is an `A` site).
#[derive(Clone, Copy, Default)]
struct Site {
    /// What it allocated last time.
    last: Option<SiteLast>,
    /// The class last witnessed for an object it allocated.
    class: Option<u64>,
}

/// [`Model::decode`] of a line stored as text (code [`code::BLANK`] to
/// [`code::UNTERMINATED`]).
///
/// Out of line, and told the code rather than whether a newline follows: inlined, the arms
/// of the text lines shared one call with that flag as a value, which the compiler set on
/// every line, of every kind, before the jump to its arm: an instruction on every line for
/// the few lines kept as text.
#[inline(never)]
fn text_line(c: u8, r: &mut StreamReader, sink: &mut impl RecordSink) {
    match c {
        code::BLANK => sink.text(&[], true),
        code::UNTERMINATED => sink.text(r.text(id::TEXT), false),
        _ => sink.text(r.text(id::TEXT), true),
    }
}

/// Where [`Model::decode`] hands each line it reads.
pub trait RecordSink {
    /// Takes one record.
    fn record(&mut self, r: &Record);

    /// Takes a line stored as text, followed by a `\n` when `newline` (all but an
    /// unterminated last line).
    fn text(&mut self, bytes: &[u8], newline: bool);
}

/// The per-block prediction state.
pub struct Model {
    u_order: UOrder,
    /// Every object seen, ordered by last use: references are coded as move-to-front ranks.
    recent: Recent,
    /// What is known of objects. A decoder's holds every object of `recent` (and maybe more):
    /// [`Recent::touch_allocated`] is told from it whether an allocated object may be there.
    info: FastMap<u64, ObjInfo>,
    /// The last witnesses, a cache in front of `info`.
    witnessed: WitnessCache,
    threads: Vec<u64>,
    /// Where each thread's call stack is in `stack_list`.
    stacks: FastMap<u64, usize>,
    stack_list: Vec<CallStack>,
    /// The thread of the stack used last, and where its stack is (`usize::MAX`, past the end
    /// of `stack_list`, for none: one test then tells both).
    last_stack: (u64, usize),
    /// Where each allocation site is in `site_list`.
    sites: FastMap<(u64, bool), usize>,
    site_list: Vec<Site>,
    last_death_time: u64,
    live: LiveSet,
    /// Every thread the encoder met in the block, for the container's index.
    seen_threads: std::collections::BTreeSet<u64>,
}

fn kind_code(r: &Record) -> u8 {
    match r.kind {
        Kind::N => code::N,
        Kind::A => code::A,
        Kind::D if r.len == 3 => code::D3,
        Kind::D => code::D4,
        Kind::U => code::U,
        Kind::M => code::M,
        Kind::E => code::E,
        Kind::W => code::W,
        Kind::T => code::T,
        Kind::H => code::H,
        Kind::X => code::X,
    }
}

impl Model {
    /// A fresh state for a block whose `U` records use `u_order`.
    pub fn new(u_order: UOrder) -> Model {
        Model::with_parts(u_order, WitnessCache::default(), Recent::default())
    }

    /// [`Model::new`] for decoding a block of `records` records: a small block gets a small
    /// witness cache, and the list of objects is kept for reading ranks
    /// ([`Recent::for_decoding`]). The predictions are those of [`Model::new`].
    pub fn for_decoding(u_order: UOrder, records: u64) -> Model {
        Model::with_parts(
            u_order,
            WitnessCache::for_records(records),
            Recent::for_decoding(),
        )
    }

    /// A fresh state with these (empty) witness cache and list of objects.
    fn with_parts(u_order: UOrder, witnessed: WitnessCache, recent: Recent) -> Model {
        Model {
            u_order,
            recent,
            info: FastMap::default(),
            witnessed,
            threads: Vec::new(),
            stacks: FastMap::default(),
            stack_list: Vec::new(),
            last_stack: (0, usize::MAX),
            sites: FastMap::default(),
            site_list: Vec::new(),
            last_death_time: 0,
            seen_threads: std::collections::BTreeSet::new(),
            live: LiveSet::default(),
        }
    }

    /// Makes this the fresh state [`Model::new`] makes, for another block, but keeping the
    /// tables' memory: tables made anew for each block would be page-faulted in again as they
    /// grew, block after block. The tables are only looked
    /// up, never walked, so how much room they have changes no prediction.
    pub fn reset(&mut self, u_order: UOrder) {
        let mut witnessed = std::mem::replace(&mut self.witnessed, WitnessCache::for_records(0));
        witnessed.clear();
        let recent = std::mem::take(&mut self.recent);
        let old = std::mem::replace(self, Model::with_parts(u_order, witnessed, recent));
        let Model {
            mut info,
            mut stacks,
            mut sites,
            mut site_list,
            mut live,
            ..
        } = old;
        self.recent.clear();
        info.clear();
        stacks.clear();
        sites.clear();
        site_list.clear();
        live.clear();
        self.info = info;
        self.stacks = stacks;
        self.sites = sites;
        self.site_list = site_list;
        self.live = live;
    }

    /// Marks `obj` as the most recently used object; returns its previous rank from the most
    /// recent (0 = it was already the most recent), or `None` when it is new.
    #[inline]
    fn touch(&mut self, obj: u64) -> Option<u64> {
        self.recent.touch(obj)
    }

    /// Reference code: 0 null; 1 an object not seen before in this block (its id follows in
    /// `raw_id`); 2 + r the object used r distinct objects ago (move-to-front rank).
    #[inline(always)]
    fn put_ref(&mut self, w: &mut StreamWriter, s: usize, obj: u64) {
        if obj == 0 {
            w.varint(s, 0);
            return;
        }
        match self.touch(obj) {
            Some(rank) => w.varint(s, 2 + rank),
            None => {
                w.varint(s, 1);
                w.raw_id(obj);
            }
        }
    }

    /// Reads a reference coded by [`Model::put_ref`] from stream `s` (0, null, for a code the
    /// list cannot answer, after telling `r`).
    #[inline(always)]
    fn get_ref(&mut self, r: &mut StreamReader, s: usize) -> u64 {
        let c = r.varint(s);
        // Most references are to one of the last few objects.
        if c >= 2 {
            if let Some(obj) = self.recent.take_front(c - 2) {
                return obj;
            }
        }
        if c == 0 {
            return 0;
        }
        self.get_other_ref(r, c)
    }

    /// [`Model::get_ref`] of a new object (code 1) or an older one than the array of recent
    /// objects holds.
    #[inline(never)]
    fn get_other_ref(&mut self, r: &mut StreamReader, c: u64) -> u64 {
        match c {
            0 => 0,
            1 => {
                // The encoder codes an object as new only when its list does not hold it. Its
                // entry (an empty one changes no prediction) says that the list now does.
                let obj = r.raw_id();
                self.info.entry(obj).or_default();
                self.recent.push_new(obj);
                obj
            }
            _ => {
                let rank = c - 2;
                let n = self.recent.count();
                if rank >= n {
                    r.fail(StreamError::new(format!(
                        "object reference of rank {rank}, but only {n} objects are known"
                    )));
                    return 0;
                }
                self.recent.take(rank).unwrap_or_else(|| {
                    r.fail(StreamError::new(format!(
                        "object reference of rank {rank} is stale"
                    )));
                    0
                })
            }
        }
    }

    /// The threads of the records encoded so far, ascending.
    pub fn threads_seen(&self) -> Vec<u64> {
        self.seen_threads.iter().copied().collect()
    }

    #[inline(always)]
    fn put_thread(&mut self, w: &mut StreamWriter, t: u64) {
        // Most records come from the thread of the record before.
        if self.threads.first() == Some(&t) {
            w.byte(id::THREAD, 0);
            return;
        }
        self.put_other_thread(w, t);
    }

    /// [`Model::put_thread`] of a thread other than the last one.
    #[inline(never)]
    fn put_other_thread(&mut self, w: &mut StreamWriter, t: u64) {
        match self.threads.iter().position(|&x| x == t) {
            Some(p) => {
                w.varint(id::THREAD, p as u64);
                self.threads.remove(p);
            }
            None => {
                // A thread in the list was added to the set when it entered the list.
                self.seen_threads.insert(t);
                w.varint(id::THREAD, self.threads.len() as u64);
                w.varint(id::THREAD_NEW, t);
                if self.threads.len() == THREADS {
                    self.threads.pop();
                }
            }
        }
        self.threads.insert(0, t);
    }

    #[inline(always)]
    fn get_thread(&mut self, r: &mut StreamReader) -> u64 {
        // Most records come from the thread of the record before.
        if r.zero_thread_code() {
            if let Some(&t) = self.threads.first() {
                return t;
            }
            return self.get_other_thread(r, 0);
        }
        let p = r.varint(id::THREAD);
        self.get_other_thread(r, p)
    }

    /// [`Model::get_thread`] of a thread other than the last one, whose code `p` was read.
    #[inline(never)]
    fn get_other_thread(&mut self, r: &mut StreamReader, p: u64) -> u64 {
        let t = if p < self.threads.len() as u64 {
            self.threads.remove(p as usize)
        } else if p == self.threads.len() as u64 {
            if self.threads.len() == THREADS {
                self.threads.pop();
            }
            r.varint(id::THREAD_NEW)
        } else {
            r.fail(StreamError::new(format!(
                "thread code {p}, but only {} threads are known",
                self.threads.len()
            )));
            return 0;
        };
        self.threads.insert(0, t);
        t
    }

    /// The call stack of `thread`. Most records come from the thread of the record before,
    /// whose stack is found without a table lookup.
    ///
    /// The fast path returns from the branch that tested the index, so that the test is also
    /// the index's bounds check (a join of both paths checked the index a second time).
    #[inline(always)]
    fn stack(&mut self, thread: u64) -> &mut CallStack {
        let (t, k) = self.last_stack;
        if t == thread && k < self.stack_list.len() {
            return &mut self.stack_list[k];
        }
        self.find_stack(thread)
    }

    /// The stack of `thread`, found in the table (a new one for a new thread).
    #[inline(never)]
    fn find_stack(&mut self, thread: u64) -> &mut CallStack {
        let fresh = self.stack_list.len();
        let k = *self.stacks.entry(thread).or_insert(fresh);
        if k == fresh {
            self.stack_list.push(CallStack::default());
        }
        self.last_stack = (thread, k);
        &mut self.stack_list[k]
    }

    #[inline(always)]
    fn push_call(&mut self, thread: u64, method: u64) {
        self.stack(thread).push(method);
    }

    /// A witness of `obj`: `choose` gets the class predicted for it (its last witnessed class,
    /// or else the last class witnessed for its allocation site) and returns the class, which
    /// becomes the prediction for the object and its site. No table lookup for an object in
    /// the cache of recent witnesses whose class stays the same, one otherwise.
    ///
    /// Inlined (a call, with its arguments and result through memory, would be a third of a
    /// decoded witness's instructions); the rest of the work is in
    /// [`Model::witness_uncached`].
    #[inline(always)]
    fn witness(&mut self, obj: u64, choose: impl FnOnce(Option<u64>) -> u64) -> u64 {
        if let Some(w) = self.witnessed.get(obj) {
            // The cache holds what `info` holds: the object's class was witnessed, so it is
            // the prediction.
            let class = choose(Some(w.class));
            return self.witness_cached(w, class);
        }
        self.witness_uncached(obj, choose)
    }

    /// [`Model::witness`] of the cached object `w` whose class is now `class`; returns it.
    #[inline(always)]
    fn witness_cached(&mut self, w: Witnessed, class: u64) -> u64 {
        if class != w.class {
            self.witness_changed(w, class);
        }
        if let Some(s) = self.site_list.get_mut(w.site) {
            s.class = Some(class);
        }
        class
    }

    /// The decoder's [`Model::witness`] of `obj` with class code `cc` (0: the predicted class,
    /// else the class plus 1).
    ///
    /// The cache is asked here, outside [`Model::witness`]: the closure that reads a class
    /// from a code and reports a missing prediction is built only on a miss (its captures,
    /// stored for the call to [`Model::witness_uncached`], were seven instructions on every
    /// witness).
    #[inline(always)]
    fn decode_witness(&mut self, r: &mut StreamReader, obj: u64, cc: u64) -> u64 {
        match self.witnessed.get(obj) {
            Some(w) => {
                let class = if cc == 0 { w.class } else { cc.wrapping_sub(1) };
                self.witness_cached(w, class)
            }
            None => self.decode_witness_uncached(r, obj, cc),
        }
    }

    /// [`Model::decode_witness`] of an object not in the cache.
    #[inline(never)]
    fn decode_witness_uncached(&mut self, r: &mut StreamReader, obj: u64, cc: u64) -> u64 {
        self.witness_uncached(obj, |predicted| match (cc, predicted) {
            (0, Some(p)) => p,
            (0, None) => {
                r.fail(StreamError::new(format!(
                    "witness of object {obj} has no predicted class"
                )));
                0
            }
            _ => cc.wrapping_sub(1),
        })
    }

    /// [`Model::witness`] of a cached object `w` whose class became `class`.
    #[inline(never)]
    fn witness_changed(&mut self, w: Witnessed, class: u64) {
        if let Some(info) = self.info.get_mut(&w.obj) {
            info.class = Some(class);
        }
        self.witnessed.put(Witnessed { class, ..w });
    }

    /// [`Model::witness`] of an object not in the cache.
    #[inline(never)]
    fn witness_uncached(&mut self, obj: u64, choose: impl FnOnce(Option<u64>) -> u64) -> u64 {
        let info = self.info.entry(obj).or_default();
        let site = self.site_list.get_mut(info.site);
        let predicted = match (info.class, &site) {
            (Some(c), _) => Some(c),
            (None, Some(s)) => s.class,
            (None, None) => None,
        };
        let class = choose(predicted);
        info.class = Some(class);
        if let Some(s) = site {
            s.class = Some(class);
        }
        self.witnessed.put(Witnessed {
            obj,
            class,
            site: info.site,
        });
        class
    }

    /// Writes one record into the streams (its kind code included).
    ///
    /// Inlined into the encoder's loop, where the record just read stays in registers instead
    /// of being stored for the call and loaded again.
    #[inline(always)]
    pub fn encode(&mut self, rec: &Record, w: &mut StreamWriter) {
        w.byte(id::KIND, kind_code(rec));
        let f = &rec.fields;
        match rec.kind {
            Kind::N | Kind::A => {
                let (obj, size, type_id, site, length, thread) =
                    (f[0], f[1], f[2], f[3], f[4], f[5]);
                w.raw_id(obj);
                self.touch(obj);
                self.live.allocate(obj);
                let k = self.site_index((site, rec.kind == Kind::A));
                w.varint(id::ALLOC_SITE, site);
                let mut hits = 0u8;
                if let Some(last) = &self.site_list[k].last {
                    hits |= u8::from(last.size == size);
                    hits |= u8::from(last.type_id == type_id) << 1;
                    hits |= u8::from(last.length == length) << 2;
                }
                w.byte(id::ALLOC_HITS, hits);
                if hits & 1 == 0 {
                    w.varint(id::ALLOC_SIZE, size);
                }
                if hits & 2 == 0 {
                    w.varint(id::ALLOC_TYPE, type_id);
                }
                if hits & 4 == 0 {
                    w.varint(id::ALLOC_LENGTH, length);
                }
                self.after_alloc(obj, k, size, type_id, length);
                self.put_thread(w, thread);
            }
            Kind::D => {
                // Rank among live objects (oldest first) + 1, or 0 and a plain reference.
                match self.live.kill(f[0]) {
                    Some(rank) => w.varint(id::D_OBJECT, rank + 1),
                    None => {
                        w.varint(id::D_OBJECT, 0);
                        self.put_ref(w, id::D_OTHER, f[0]);
                    }
                }
                self.put_thread(w, f[1]);
                let dt = f[2].wrapping_sub(self.last_death_time) as i64;
                w.varint(id::D_TIME, zigzag(dt));
                self.last_death_time = f[2];
                if rec.len == 4 {
                    let predicted = self.info.get(&f[0]).map_or(0, |i| i.size);
                    w.varint(id::D_SIZE, zigzag(f[3].wrapping_sub(predicted) as i64));
                }
            }
            Kind::U => {
                let (h, v, fl) = self.u_order.positions();
                self.put_ref(w, id::U_HOLDER, f[h]);
                self.put_ref(w, id::U_VALUE, f[v]);
                w.varint(id::U_FIELD, f[fl]);
                self.put_thread(w, f[3]);
            }
            Kind::M => {
                w.varint(id::M_METHOD, f[0]);
                self.put_ref(w, id::M_RECEIVER, f[1]);
                self.put_thread(w, f[2]);
                self.push_call(f[2], f[0]);
            }
            Kind::E => {
                self.put_thread(w, f[1]);
                let st = self.stack(f[1]);
                let found = st.find(f[0], EXIT_SEARCH);
                match found {
                    Some(depth) => {
                        w.varint(id::E_CODE, depth as u64 + 1);
                        st.truncate(st.len() - depth - 1);
                    }
                    None => {
                        w.varint(id::E_CODE, 0);
                        w.varint(id::E_MISS, f[0]);
                    }
                }
            }
            Kind::W => {
                self.put_ref(w, id::W_OBJECT, f[0]);
                let class = f[1];
                self.witness(f[0], |predicted| {
                    match predicted {
                        Some(p) if p == class => w.varint(id::W_CLASS, 0),
                        _ => w.varint(id::W_CLASS, class.wrapping_add(1)),
                    }
                    class
                });
                self.put_thread(w, f[2]);
            }
            Kind::T | Kind::H | Kind::X => {
                w.varint(id::X_METHOD, f[0]);
                self.put_ref(w, id::X_OBJECT, f[1]);
                self.put_ref(w, id::X_OBJECT, f[2]);
                self.put_thread(w, f[3]);
            }
        }
    }

    /// Where the site `key` is in `site_list` (a new entry for a new site).
    #[inline]
    fn site_index(&mut self, key: (u64, bool)) -> usize {
        let fresh = self.site_list.len();
        let k = *self.sites.entry(key).or_insert(fresh);
        if k == fresh {
            self.site_list.push(Site::default());
        }
        k
    }

    /// Remembers an allocation of `obj` at the site at `site` in `site_list`; returns whether
    /// `info` already held the object.
    fn after_alloc(&mut self, obj: u64, site: usize, size: u64, type_id: u64, length: u64) -> bool {
        self.site_list[site].last = Some(SiteLast {
            size,
            type_id,
            length,
        });
        let old = self.info.insert(
            obj,
            ObjInfo {
                size,
                site,
                class: None,
            },
        );
        // Its class is no longer known.
        self.witnessed.forget(obj);
        old.is_some()
    }

    /// Reads one line whose kind code `c` was already read from the `kind` stream, and hands
    /// it to `sink`: a record the model decodes, or a line stored as text.
    ///
    /// A damaged block's problems do not stop the decode here: they are reported to `r`
    /// ([`StreamReader::fail`]; the caller checks [`StreamReader::failed`]), and the line is
    /// then garbage or missing. Every value is taken as it comes, so garbage costs no more
    /// than a damaged stream's values would.
    ///
    /// Inlined into the decoder's loop (its one caller), where the record stays in registers
    /// instead of being returned through memory; the sink is called (and inlined) in the branch
    /// of each kind, where the record's kind and length are constants. The line codes are
    /// matched here with the record codes, in one jump table.
    #[inline(always)]
    pub fn decode(&mut self, c: u8, r: &mut StreamReader, sink: &mut impl RecordSink) {
        let mut f = [0u64; MAX_FIELDS];
        let mut done = |kind: Kind, len: usize, fields: [u64; MAX_FIELDS]| {
            sink.record(&Record { kind, len, fields });
        };
        match c {
            code::N | code::A => {
                let kind = if c == code::N { Kind::N } else { Kind::A };
                let obj = r.raw_id();
                self.live.allocate(obj);
                let site = r.varint(id::ALLOC_SITE);
                let k = self.site_index((site, kind == Kind::A));
                let hits = r.byte(id::ALLOC_HITS);
                let last = self.site_list[k].last;
                if hits != 0 && last.is_none() || hits > 7 {
                    r.fail(StreamError::new(format!(
                        "allocation prediction flags {hits} for site {site}, which has no history"
                    )));
                    return;
                }
                let size = match last {
                    Some(l) if hits & 1 != 0 => l.size,
                    _ => r.varint(id::ALLOC_SIZE),
                };
                let type_id = match last {
                    Some(l) if hits & 2 != 0 => l.type_id,
                    _ => r.varint(id::ALLOC_TYPE),
                };
                let length = match last {
                    Some(l) if hits & 4 != 0 => l.length,
                    _ => r.varint(id::ALLOC_LENGTH),
                };
                // The object is put in front here, after `info` (updated anyway) told whether
                // the list may hold it. (Only a damaged block's garbage, after its first
                // problem, differs from the encoder's order of updates.)
                let known = self.after_alloc(obj, k, size, type_id, length);
                self.recent.touch_allocated(obj, known);
                let thread = self.get_thread(r);
                f[..6].copy_from_slice(&[obj, size, type_id, site, length, thread]);
                done(kind, 6, f);
            }
            code::D3 | code::D4 => {
                f[0] = match r.varint(id::D_OBJECT) {
                    0 => {
                        let obj = self.get_ref(r, id::D_OTHER);
                        if self.live.kill(obj).is_some() {
                            r.fail(StreamError::new(format!(
                                "death of live object {obj} coded as a plain reference"
                            )));
                            return;
                        }
                        obj
                    }
                    k => match self.live.kill_rank(k - 1) {
                        Some(obj) => obj,
                        None => {
                            r.fail(StreamError::new(format!(
                                "death of live object number {}, which does not exist",
                                k - 1
                            )));
                            return;
                        }
                    },
                };
                f[1] = self.get_thread(r);
                let dt = unzigzag(r.varint(id::D_TIME));
                f[2] = self.last_death_time.wrapping_add(dt as u64);
                self.last_death_time = f[2];
                if c == code::D4 {
                    let predicted = self.info.get(&f[0]).map_or(0, |i| i.size);
                    f[3] = predicted.wrapping_add(unzigzag(r.varint(id::D_SIZE)) as u64);
                    done(Kind::D, 4, f);
                } else {
                    done(Kind::D, 3, f);
                }
            }
            code::U => {
                let (h, v, fl) = self.u_order.positions();
                f[h] = self.get_ref(r, id::U_HOLDER);
                f[v] = self.get_ref(r, id::U_VALUE);
                f[fl] = r.varint(id::U_FIELD);
                f[3] = self.get_thread(r);
                done(Kind::U, 4, f);
            }
            code::M => {
                f[0] = r.varint(id::M_METHOD);
                f[1] = self.get_ref(r, id::M_RECEIVER);
                f[2] = self.get_thread(r);
                self.push_call(f[2], f[0]);
                done(Kind::M, 3, f);
            }
            code::E => {
                f[1] = self.get_thread(r);
                let e = r.varint(id::E_CODE);
                let st = self.stack(f[1]);
                if e == 0 {
                    f[0] = r.varint(id::E_MISS);
                } else {
                    let depth = (e - 1) as usize;
                    let exit = if depth < EXIT_SEARCH {
                        st.exit(depth)
                    } else {
                        None
                    };
                    f[0] = match exit {
                        Some(m) => m,
                        None => {
                            let len = st.len();
                            r.fail(StreamError::new(format!(
                                "method exit {depth} frames down a stack of {len}"
                            )));
                            return;
                        }
                    };
                }
                done(Kind::E, 2, f);
            }
            code::W => {
                f[0] = self.get_ref(r, id::W_OBJECT);
                let cc = r.varint(id::W_CLASS);
                f[1] = self.decode_witness(r, f[0], cc);
                f[2] = self.get_thread(r);
                done(Kind::W, 3, f);
            }
            code::T | code::H | code::X => {
                f[0] = r.varint(id::X_METHOD);
                f[1] = self.get_ref(r, id::X_OBJECT);
                f[2] = self.get_ref(r, id::X_OBJECT);
                f[3] = self.get_thread(r);
                let kind = match c {
                    code::T => Kind::T,
                    code::H => Kind::H,
                    _ => Kind::X,
                };
                done(kind, 4, f);
            }
            code::BLANK..=code::UNTERMINATED => text_line(c, r, sink),
            other => r.fail(StreamError::new(format!("unknown record code {other}"))),
        }
    }
}
