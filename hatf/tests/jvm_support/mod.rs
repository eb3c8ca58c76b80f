//! A generator of realistic JVM traces (no real one is public): several threads with nested
//! calls on receivers, allocations with constructor calls, frees in random order, exceptions.
//! It also counts what it wrote, independently of the library, for the stats and validate tests.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write;

/// xorshift64*: deterministic, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Line ends of a generated trace.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ends {
    Lf,
    CrLf,
    Mixed,
}

/// What the generator wrote.
#[derive(Default, Debug)]
pub struct Counts {
    pub lines: u64,
    pub by_kind: BTreeMap<String, u64>,
    pub allocated: u64,
    pub freed: u64,
    /// thread id -> method entries.
    pub calls: BTreeMap<i64, u64>,
}

const CLASSES: [&str; 8] = [
    "java/lang/String",
    "java/util/ArrayList",
    "java/util/HashMap$Node",
    "org/example/Point",
    "org/example/Tree$Node",
    "[C",
    "java/lang/StringBuilder",
    "org/example/Main",
];

const METHODS: [(&str, &str); 10] = [
    ("org/example/Main", "run"),
    ("org/example/Tree$Node", "insert"),
    ("org/example/Tree$Node", "balance"),
    ("java/util/ArrayList", "add"),
    ("java/util/ArrayList", "grow"),
    ("java/util/HashMap", "put"),
    ("java/util/HashMap", "hash"),
    ("java/lang/String", "hashCode"),
    ("org/example/Point", "distance"),
    ("java/lang/StringBuilder", "append"),
];

pub struct Gen {
    rng: Rng,
    text: String,
    time: i64,
    ends: Ends,
    pub counts: Counts,
    next_id: std::collections::HashSet<i64>,
}

impl Gen {
    fn line(&mut self, kind: &str, rest: &str) {
        // The system timer: microseconds, several records per tick.
        if self.rng.chance(40) {
            self.time += 1 + self.rng.below(30) as i64;
        }
        let _ = write!(self.text, "{kind}:{}{rest}", self.time);
        let crlf = match self.ends {
            Ends::Lf => false,
            Ends::CrLf => true,
            Ends::Mixed => self.rng.chance(50),
        };
        self.text.push_str(if crlf { "\r\n" } else { "\n" });
        self.counts.lines += 1;
        *self.counts.by_kind.entry(kind.to_string()).or_default() += 1;
    }

    fn fresh_id(&mut self) -> i64 {
        loop {
            // identityHashCode: a random 31-bit number, never 0.
            let id = 1 + self.rng.below((1 << 31) - 1) as i64;
            if self.next_id.insert(id) {
                return id;
            }
        }
    }
}

/// A trace of about `steps` events on `threads` threads.
pub fn trace(seed: u64, steps: usize, threads: usize, ends: Ends) -> (String, Counts) {
    let mut g = Gen {
        rng: Rng::new(seed),
        text: String::new(),
        time: 1_000_000 + (seed % 1000) as i64,
        ends,
        counts: Counts::default(),
        next_id: Default::default(),
    };
    // The seed: VS is always the first event and VI the second.
    g.line("VS", "");
    g.line("VI", "");
    for c in CLASSES {
        g.line("CL", &format!(":{c}"));
    }
    let tids: Vec<i64> = (0..threads).map(|k| 1 + k as i64 * 7).collect();
    let mut stacks: Vec<Vec<(usize, i64)>> = vec![Vec::new(); threads];
    let mut live: Vec<(i64, usize)> = Vec::new();
    for &t in &tids {
        g.line("TB", &format!(":{t}"));
    }
    let mut t = 0usize;
    for _ in 0..steps {
        // Threads switch rarely.
        if g.rng.chance(3) {
            t = g.rng.below(threads as u64) as usize;
        }
        let tid = tids[t];
        let depth = stacks[t].len();
        let r = g.rng.below(100);
        if r < 30 || depth == 0 {
            // Call: often on the caller's receiver, on a new object's constructor, or static.
            let m = if depth > 0 && g.rng.chance(60) {
                (stacks[t][depth - 1].0 + 1 + g.rng.below(2) as usize) % METHODS.len()
            } else {
                g.rng.below(METHODS.len() as u64) as usize
            };
            let recv = match g.rng.below(4) {
                0 => 0,
                1 if depth > 0 => stacks[t][depth - 1].1,
                _ if !live.is_empty() => {
                    live[live.len() - 1 - g.rng.below(live.len().min(8) as u64) as usize].0
                }
                _ => 0,
            };
            let (c, n) = METHODS[m];
            g.line("MN", &format!(":{tid}:{c}:{n}:{recv}"));
            *g.counts.calls.entry(tid).or_default() += 1;
            stacks[t].push((m, recv));
        } else if r < 60 {
            let (m, _) = stacks[t].pop().unwrap_or((0, 0));
            let (c, n) = METHODS[m];
            let kind = if g.rng.chance(2) { "FP" } else { "MX" };
            g.line(kind, &format!(":{tid}:{c}:{n}"));
        } else if r < 85 {
            let k = g.rng.below(CLASSES.len() as u64) as usize;
            let id = g.fresh_id();
            g.line("OA", &format!(":{}:{id}", CLASSES[k]));
            g.counts.allocated += 1;
            live.push((id, k));
            if g.rng.chance(50) {
                g.line("MN", &format!(":{tid}:{}:<init>:{id}", CLASSES[k]));
                g.line("MX", &format!(":{tid}:{}:<init>", CLASSES[k]));
                *g.counts.calls.entry(tid).or_default() += 1;
            }
        } else if !live.is_empty() {
            // Young objects die first, mostly.
            let window = if g.rng.chance(80) { 16 } else { 1 << 20 };
            let back = g.rng.below(live.len().min(window) as u64) as usize;
            let (id, k) = live.remove(live.len() - 1 - back);
            g.line("OF", &format!(":{}:{id}", CLASSES[k]));
            g.counts.freed += 1;
        }
    }
    for (k, st) in stacks.iter_mut().enumerate() {
        while let Some((m, _)) = st.pop() {
            let (c, n) = METHODS[m];
            g.line("MX", &format!(":{}:{c}:{n}", tids[k]));
        }
        g.line("TE", &format!(":{}", tids[k]));
    }
    g.line("VD", "");
    (g.text, g.counts)
}

/// A zip holding `text` as its member `trace` (plus a small second member), written by the
/// `zip` crate with the given method and level.
pub fn zip_of(text: &str, method: zip::CompressionMethod, level: Option<i64>) -> Vec<u8> {
    use std::io::Write as _;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(method)
        .compression_level(level);
    w.start_file("trace", opts).expect("start trace");
    w.write_all(text.as_bytes()).expect("write trace");
    w.start_file("README", opts).expect("start readme");
    w.write_all(b"recorded by a test generator\n")
        .expect("write readme");
    w.finish().expect("finish zip").into_inner()
}
