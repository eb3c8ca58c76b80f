//! The prediction model: what encoder and decoder both know before each record, and how a record
//! becomes stream symbols (and back). Both sides make the same state updates in the same order;
//! `docs/FORMAT.md §6.3` spells them out.

use std::collections::HashMap;

use super::line::{Kind, Record};
use super::streams::*;
use super::tables::{code, entry, Table, CANDIDATES};
use crate::shared::allocation_model::prediction::recent_values::Mtf;
use crate::shared::live_set::LiveSet;

/// Context key of "no method open on the current thread".
const NO_METHOD: u32 = u32::MAX;

/// A recently used set of table entries, the candidates of a code.
type Recent = Mtf<u32, CANDIDATES>;

#[derive(Debug, Clone, Copy)]
struct Frame {
    method: u32,
    receiver: i64,
}

/// Everything the model has learnt so far; carried from block to block.
#[derive(Default)]
pub struct Model {
    time: i64,
    classes: Table<Vec<u8>>,
    method_names: Table<Vec<u8>>,
    /// (class, method name) pairs.
    methods: Table<(u32, u32)>,
    threads: Table<i64>,
    current: Option<u32>,
    /// Open frames per thread number.
    stacks: Vec<Vec<Frame>>,
    /// Per calling method (or [`NO_METHOD`]), the methods it called lately.
    callees: HashMap<u32, Recent>,
    /// Per allocating method (or [`NO_METHOD`]), the classes it allocated lately.
    alloc_classes: HashMap<u32, Recent>,
    /// Objects allocated or used as receivers, most recent first; frees leave it.
    live: LiveSet,
    /// Class of each allocated object that was not freed yet.
    object_class: HashMap<i64, u32>,
}

fn candidates(recent: Option<&Recent>) -> ([u32; CANDIDATES], usize) {
    let mut a = [0u32; CANDIDATES];
    let mut n = 0;
    if let Some(r) = recent {
        while let Some(v) = r.get(n) {
            a[n] = v;
            n += 1;
        }
    }
    (a, n)
}

fn missing(what: &str, id: u32) -> String {
    format!("{what} {id} is not in the table")
}

impl Model {
    /// A model that has seen nothing.
    pub fn new() -> Self {
        Model::default()
    }

    /// The method open on top of the current thread's stack, the context of an allocation.
    fn context(&self) -> u32 {
        self.current
            .and_then(|t| self.stacks.get(t as usize)?.last())
            .map_or(NO_METHOD, |f| f.method)
    }

    fn top(&self, thread: u32) -> Option<Frame> {
        self.stacks.get(thread as usize)?.last().copied()
    }

    /// Leaves method `m` on `thread`: pops it, or unwinds to it when frames above it were left
    /// without an exit record; an exit of a method not open changes nothing.
    fn leave(&mut self, thread: u32, m: u32) {
        if let Some(st) = self.stacks.get_mut(thread as usize) {
            if let Some(p) = st.iter().rposition(|f| f.method == m) {
                st.truncate(p);
            }
        }
    }

    fn new_thread(&mut self, id: i64) -> u32 {
        self.stacks.push(Vec::new());
        self.threads.add(id)
    }

    /// Encodes one record.
    pub fn encode(&mut self, r: &Record<'_>, s: &mut Streams) {
        s.i64(TIME, r.time.wrapping_sub(self.time));
        self.time = r.time;
        match r.kind {
            Kind::Vs | Kind::Vi | Kind::Vd => {}
            Kind::Cl => {
                self.put_class(&[], r.class, s);
            }
            Kind::Oa => {
                let ctx = self.context();
                let (c, n) = candidates(self.alloc_classes.get(&ctx));
                let class = self.put_class(&c[..n], r.class, s);
                self.alloc_classes.entry(ctx).or_default().touch(class);
                s.raw(OBJECT_NEW, r.object);
                self.live.insert(r.object as u64);
                self.object_class.insert(r.object, class);
            }
            Kind::Of => {
                let known = self.object_class.remove(&r.object);
                let code = match (r.object, self.live.remove(r.object as u64)) {
                    (0, _) => 0,
                    (_, Some(rank)) => rank as u64 + 3,
                    (_, None) => {
                        s.raw(OBJECT_RAW, r.object);
                        1
                    }
                };
                s.u64(OBJECT_REF, code);
                let (c, n) = match known {
                    Some(k) => ([k; CANDIDATES], 1),
                    None => ([0; CANDIDATES], 0),
                };
                self.put_class(&c[..n], r.class, s);
            }
            Kind::Tb | Kind::Te => {
                self.put_thread(r.thread, s);
            }
            Kind::Mn => {
                let t = self.put_thread(r.thread, s);
                let caller = self.top(t);
                let key = caller.map_or(NO_METHOD, |f| f.method);
                let (c, n) = candidates(self.callees.get(&key));
                let m = self.put_method(&c[..n], r.class, r.method, s);
                self.callees.entry(key).or_default().touch(m);
                let code = if r.object == 0 {
                    0
                } else if caller.is_some_and(|f| f.receiver == r.object) {
                    self.live.insert(r.object as u64);
                    2
                } else {
                    let rank = self.live.remove(r.object as u64);
                    self.live.insert(r.object as u64);
                    match rank {
                        Some(rank) => rank as u64 + 3,
                        None => {
                            s.raw(OBJECT_RAW, r.object);
                            1
                        }
                    }
                };
                s.u64(OBJECT_REF, code);
                self.stacks[t as usize].push(Frame {
                    method: m,
                    receiver: r.object,
                });
            }
            Kind::Mx | Kind::Fp => {
                let t = self.put_thread(r.thread, s);
                let top = self.top(t).map(|f| f.method);
                let m = match top {
                    Some(m) => self.put_method(&[m], r.class, r.method, s),
                    None => self.put_method(&[], r.class, r.method, s),
                };
                self.leave(t, m);
            }
        }
    }

    /// Decodes one record of `kind` and appends its text (without a line end) to `out`.
    pub fn decode(
        &mut self,
        kind: Kind,
        s: &mut Readers<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let time = self.time.wrapping_add(s.i64(TIME)?);
        self.time = time;
        let mut thread = 0i64;
        let mut class = None;
        let mut method = None;
        let mut object = 0i64;
        match kind {
            Kind::Vs | Kind::Vi | Kind::Vd => {}
            Kind::Cl => class = Some(self.get_class(&[], s)?),
            Kind::Oa => {
                let ctx = self.context();
                let (c, n) = candidates(self.alloc_classes.get(&ctx));
                let k = self.get_class(&c[..n], s)?;
                self.alloc_classes.entry(ctx).or_default().touch(k);
                object = s.raw(OBJECT_NEW)?;
                self.live.insert(object as u64);
                self.object_class.insert(object, k);
                class = Some(k);
            }
            Kind::Of => {
                object = match s.u64(OBJECT_REF)? {
                    0 => {
                        self.live.remove(0);
                        0
                    }
                    1 => {
                        let id = s.raw(OBJECT_RAW)?;
                        if self.live.remove(id as u64).is_some() {
                            return Err(format!("raw reference to object {id}, which is live"));
                        }
                        id
                    }
                    2 => return Err("a free cannot name the caller's receiver".to_string()),
                    r => self
                        .live
                        .remove_rank((r - 3) as usize)
                        .ok_or_else(|| format!("no live object of rank {}", r - 3))?
                        as i64,
                };
                let (c, n) = match self.object_class.remove(&object) {
                    Some(k) => ([k; CANDIDATES], 1),
                    None => ([0; CANDIDATES], 0),
                };
                class = Some(self.get_class(&c[..n], s)?);
            }
            Kind::Tb | Kind::Te => {
                let t = self.get_thread(s)?;
                thread = self.thread_id(t)?;
            }
            Kind::Mn => {
                let t = self.get_thread(s)?;
                thread = self.thread_id(t)?;
                let caller = self.top(t);
                let key = caller.map_or(NO_METHOD, |f| f.method);
                let (c, n) = candidates(self.callees.get(&key));
                let m = self.get_method(&c[..n], s)?;
                self.callees.entry(key).or_default().touch(m);
                object = match s.u64(OBJECT_REF)? {
                    0 => 0,
                    1 => s.raw(OBJECT_RAW)?,
                    2 => caller
                        .map(|f| f.receiver)
                        .filter(|&r| r != 0)
                        .ok_or("receiver code 2 without a caller's receiver")?,
                    r => self
                        .live
                        .remove_rank((r - 3) as usize)
                        .ok_or_else(|| format!("no live object of rank {}", r - 3))?
                        as i64,
                };
                if object != 0 {
                    self.live.insert(object as u64);
                }
                self.stacks[t as usize].push(Frame {
                    method: m,
                    receiver: object,
                });
                method = Some(m);
            }
            Kind::Mx | Kind::Fp => {
                let t = self.get_thread(s)?;
                thread = self.thread_id(t)?;
                let m = match self.top(t) {
                    Some(f) => self.get_method(&[f.method], s)?,
                    None => self.get_method(&[], s)?,
                };
                self.leave(t, m);
                method = Some(m);
            }
        }
        let mut class_name: &[u8] = b"";
        let mut method_name: &[u8] = b"";
        if let Some(m) = method {
            let &(c, n) = self.methods.get(m).ok_or_else(|| missing("method", m))?;
            class = Some(c);
            method_name = self
                .method_names
                .get(n)
                .ok_or_else(|| missing("method name", n))?;
        }
        if let Some(c) = class {
            class_name = self.classes.get(c).ok_or_else(|| missing("class", c))?;
        }
        super::line::render(
            &Record {
                kind,
                time,
                thread,
                class: class_name,
                method: method_name,
                object,
            },
            out,
        );
        Ok(())
    }

    fn thread_id(&self, t: u32) -> Result<i64, String> {
        self.threads
            .get(t)
            .copied()
            .ok_or_else(|| missing("thread", t))
    }

    fn put_thread(&mut self, id: i64, s: &mut Streams) -> u32 {
        let cur = self.current.and_then(|t| Some(t).zip(self.threads.get(t)));
        let t = match (cur, self.threads.id(&id)) {
            (Some((t, &v)), _) if v == id => {
                s.u64(THREAD, 0);
                t
            }
            (_, Some(t)) => {
                s.u64(THREAD, u64::from(t) + 2);
                t
            }
            (_, None) => {
                s.u64(THREAD, 1);
                s.i64(THREAD_NEW, id);
                self.new_thread(id)
            }
        };
        self.current = Some(t);
        t
    }

    fn get_thread(&mut self, s: &mut Readers<'_>) -> Result<u32, String> {
        let t = match s.u64(THREAD)? {
            0 => self.current.ok_or("thread code 0 before any thread")?,
            1 => {
                let id = s.i64(THREAD_NEW)?;
                self.new_thread(id)
            }
            k => {
                let t = k - 2;
                if t >= self.threads.len() as u64 {
                    return Err(format!(
                        "thread code {k} is past the {} known",
                        self.threads.len()
                    ));
                }
                t as u32
            }
        };
        self.current = Some(t);
        Ok(t)
    }

    fn put_class(&mut self, candidates: &[u32], name: &[u8], s: &mut Streams) -> u32 {
        let id = self.classes.id(name);
        s.u64(CLASS, code(candidates, id));
        id.unwrap_or_else(|| {
            s.text(CLASS_TEXT, name);
            self.classes.add(name.to_vec())
        })
    }

    fn get_class(&mut self, candidates: &[u32], s: &mut Readers<'_>) -> Result<u32, String> {
        let c = s.u64(CLASS)?;
        Ok(match entry(candidates, c, self.classes.len(), "class")? {
            Some(k) => k,
            None => {
                let name = s.text(CLASS_TEXT)?;
                self.classes.add(name.to_vec())
            }
        })
    }

    fn put_method(
        &mut self,
        candidates: &[u32],
        class: &[u8],
        name: &[u8],
        s: &mut Streams,
    ) -> u32 {
        let c = self.classes.id(class);
        let n = self.method_names.id(name);
        let id = c.zip(n).and_then(|p| self.methods.id(&p));
        s.u64(METHOD, code(candidates, id));
        if let Some(m) = id {
            return m;
        }
        let c = self.put_class(&[], class, s);
        let n = match n {
            Some(n) => {
                s.u64(METHOD_NAME, u64::from(n) + 1);
                n
            }
            None => {
                s.u64(METHOD_NAME, 0);
                s.text(METHOD_NAME_TEXT, name);
                self.method_names.add(name.to_vec())
            }
        };
        self.methods.add((c, n))
    }

    fn get_method(&mut self, candidates: &[u32], s: &mut Readers<'_>) -> Result<u32, String> {
        let m = s.u64(METHOD)?;
        if let Some(m) = entry(candidates, m, self.methods.len(), "method")? {
            return Ok(m);
        }
        let c = self.get_class(&[], s)?;
        let n = match s.u64(METHOD_NAME)? {
            0 => {
                let name = s.text(METHOD_NAME_TEXT)?;
                self.method_names.add(name.to_vec())
            }
            k => {
                let n = k - 1;
                if n >= self.method_names.len() as u64 {
                    return Err(format!(
                        "method name code {k} is past the {} known",
                        self.method_names.len()
                    ));
                }
                n as u32
            }
        };
        Ok(self.methods.add((c, n)))
    }
}
