//! The one shape of `hatf stats` for every format: the same JSON keys for allocation, Elephant
//! Tracks and JVM traces (a number a format cannot know is `null`, a list it cannot fill is
//! empty), and one table rendered from them. The keys are documented in the README.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hash::Hash;

use serde::Serialize;

use crate::format::StatsReport;

/// The schema's name, the first key of every report, changed when a key changes meaning.
pub const SCHEMA: &str = "hatf-stats/1";

/// How many rows the `top_*` lists keep.
pub const TOP: usize = 10;

/// One bucket of a power-of-two histogram: values in `[from, 2 * from)` (`from` 0 holds 0).
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    /// Smallest value of the bucket.
    pub from: u64,
    /// How many values fell in it.
    pub count: u64,
}

/// A histogram over power-of-two buckets.
#[derive(Debug, Clone, Default)]
pub struct Log2Histogram {
    counts: Vec<u64>,
}

impl Log2Histogram {
    /// Counts `value`.
    pub fn add(&mut self, value: u64) {
        let b = (64 - value.leading_zeros()) as usize;
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
    }

    /// The buckets, empty ones within the range included.
    pub fn buckets(&self) -> Vec<Bucket> {
        let first = self.counts.iter().position(|&c| c != 0).unwrap_or(0);
        self.counts
            .iter()
            .enumerate()
            .skip(first)
            .map(|(b, &count)| Bucket {
                from: if b == 0 { 0 } else { 1u64 << (b - 1) },
                count,
            })
            .collect()
    }
}

/// One sample of the live set.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LivePoint {
    /// When, in the series' unit.
    pub at: u64,
    /// Objects live then.
    pub objects: u64,
    /// Bytes live then; `null` when the format records no sizes.
    pub bytes: Option<u64>,
}

/// Most samples a series keeps; it keeps between half as many and this many.
const MAX_POINTS: usize = 512;

/// The live set over time, sampled at evenly spaced times in bounded memory: when the samples
/// fill up, every other one is dropped and the spacing doubles, so a trace of any length gives
/// between 256 and 512 points.
#[derive(Debug, Clone, Serialize)]
pub struct LiveSeries {
    /// What `at` counts (events, records, ...).
    pub unit: &'static str,
    /// The samples, in time order; the last is the end of the trace.
    pub points: Vec<LivePoint>,
    #[serde(skip)]
    step: u64,
}

impl LiveSeries {
    /// An empty series whose times count `unit`.
    pub fn new(unit: &'static str) -> Self {
        LiveSeries {
            unit,
            points: Vec::new(),
            step: 1,
        }
    }

    /// Offers the live set after time `at` (times must not go back); kept when `at` falls on
    /// the current spacing.
    pub fn offer(&mut self, at: u64, objects: u64, bytes: Option<u64>) {
        if !at.is_multiple_of(self.step) {
            return;
        }
        self.points.push(LivePoint { at, objects, bytes });
        if self.points.len() >= MAX_POINTS {
            self.step *= 2;
            let step = self.step;
            self.points.retain(|p| p.at % step == 0);
        }
    }

    /// Adds the final state at time `at` unless it was just sampled.
    pub fn finish(&mut self, at: u64, objects: u64, bytes: Option<u64>) {
        if self.points.last().is_none_or(|p| p.at != at) {
            self.points.push(LivePoint { at, objects, bytes });
        }
    }
}

/// A row of a `top_*` list: a name (a call site, thread, method or class) and its counts.
#[derive(Debug, Clone, Serialize)]
pub struct TopRow {
    /// What is counted: a call site, thread id, method or class, as the trace names it (or
    /// resolved through its name files).
    pub name: String,
    /// How many records, events or calls.
    pub count: u64,
    /// Bytes allocated; `null` when the format records no sizes.
    pub bytes: Option<u64>,
}

/// Counts per key, reduced to the largest [`TOP`] by a chosen measure.
#[derive(Debug, Clone)]
pub struct Tally<K> {
    /// Key → (count, bytes).
    pub counts: HashMap<K, (u64, u64)>,
}

impl<K> Default for Tally<K> {
    fn default() -> Self {
        Tally {
            counts: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq + Ord + Clone> Tally<K> {
    /// Counts one occurrence of `key` with `bytes` (the key is copied only the first time).
    pub fn add<Q>(&mut self, key: &Q, bytes: u64)
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(c) = self.counts.get_mut(key) {
            c.0 += 1;
            c.1 = c.1.wrapping_add(bytes);
        } else {
            self.counts.insert(key.to_owned(), (1, bytes));
        }
    }

    /// How many distinct keys.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The [`TOP`] keys with the most bytes (`by_bytes`) or the highest count, ties by key.
    pub fn top(&self, by_bytes: bool, sized: bool, name: impl Fn(&K) -> String) -> Vec<TopRow> {
        let mut rows: Vec<(&K, &(u64, u64))> = self.counts.iter().collect();
        let measure = |c: &(u64, u64)| if by_bytes { (c.1, c.0) } else { (c.0, c.1) };
        rows.sort_by(|a, b| measure(b.1).cmp(&measure(a.1)).then_with(|| a.0.cmp(b.0)));
        rows.truncate(TOP);
        rows.into_iter()
            .map(|(k, &(count, bytes))| TopRow {
                name: name(k),
                count,
                bytes: sized.then_some(bytes),
            })
            .collect()
    }
}

/// The lifetime histogram and what its unit is.
#[derive(Debug, Clone, Serialize)]
pub struct Lifetimes {
    /// What a lifetime is measured in.
    pub unit: &'static str,
    /// Objects by lifetime, power-of-two buckets.
    pub buckets: Vec<Bucket>,
}

/// The live set at the end of the trace.
#[derive(Debug, Clone, Serialize)]
pub struct LiveAtEnd {
    /// Objects never freed.
    pub objects: u64,
    /// Their bytes; `null` when the format records no sizes.
    pub bytes: Option<u64>,
}

/// `hatf stats` of any format (see the module documentation).
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The trace's format.
    pub format: String,
    /// Records (events of an allocation trace, records of an ET or JVM trace).
    pub records: u64,
    /// Records by kind, as the format names its kinds.
    pub records_by_kind: BTreeMap<String, u64>,
    /// Objects (blocks) allocated, reallocations counted as allocations.
    pub objects_allocated: u64,
    /// Objects freed (or dead).
    pub objects_freed: u64,
    /// Bytes allocated; `null` without sizes.
    pub bytes_allocated: Option<u64>,
    /// Most bytes live at once; `null` without sizes or frees.
    pub peak_live_bytes: Option<u64>,
    /// Most objects live at once; `null` when the trace records no frees.
    pub peak_live_objects: Option<u64>,
    /// What is live at the end.
    pub live_at_end: LiveAtEnd,
    /// Frees (deaths) of objects never allocated.
    pub frees_of_unknown_objects: u64,
    /// Allocations by requested size, power-of-two buckets (empty without sizes).
    pub size_histogram: Vec<Bucket>,
    /// Lifetimes of freed objects.
    pub lifetimes: Lifetimes,
    /// The live set over time.
    pub live_over_time: LiveSeries,
    /// Call sites with the most bytes allocated (empty when the format has no call sites).
    pub top_sites_by_bytes: Vec<TopRow>,
    /// Call sites with the most allocations.
    pub top_sites_by_count: Vec<TopRow>,
    /// How many threads.
    pub threads: u64,
    /// Threads with the most records.
    pub top_threads: Vec<TopRow>,
    /// Methods called most often (ET and JVM traces).
    pub top_methods: Vec<TopRow>,
    /// Classes (ET: allocating classes; JVM: allocated classes) allocated most often.
    pub top_classes: Vec<TopRow>,
    /// Numbers only this format has.
    pub format_specific: serde_json::Value,
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn table(text: &mut String, title: &str, rows: &[TopRow], what: &str) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(text, "{title}");
    for r in rows {
        let bytes = r.bytes.map(|b| format!("  {b} bytes")).unwrap_or_default();
        let _ = writeln!(text, "  {:>12} {what}{bytes}  {}", r.count, r.name);
    }
}

impl Stats {
    /// The table `hatf stats` prints and the JSON of `--json`.
    pub fn report(&self) -> StatsReport {
        let mut t = String::new();
        let _ = writeln!(t, "format              {}", self.format);
        let _ = writeln!(t, "records             {}", self.records);
        for (k, n) in &self.records_by_kind {
            let _ = writeln!(t, "  {k:<17} {n}");
        }
        let _ = writeln!(t, "objects allocated   {}", self.objects_allocated);
        let _ = writeln!(t, "objects freed       {}", self.objects_freed);
        let _ = writeln!(t, "bytes allocated     {}", opt(self.bytes_allocated));
        let _ = writeln!(t, "peak live bytes     {}", opt(self.peak_live_bytes));
        let _ = writeln!(t, "peak live objects   {}", opt(self.peak_live_objects));
        let _ = writeln!(
            t,
            "live at end         {} objects, {} bytes",
            self.live_at_end.objects,
            opt(self.live_at_end.bytes)
        );
        let _ = writeln!(t, "frees of unknown    {}", self.frees_of_unknown_objects);
        if !self.size_histogram.is_empty() {
            let _ = writeln!(t, "size (bytes)        allocations");
            for b in &self.size_histogram {
                let _ = writeln!(t, "  >= {:<15} {}", b.from, b.count);
            }
        }
        if !self.lifetimes.buckets.is_empty() {
            let _ = writeln!(t, "lifetime ({})", self.lifetimes.unit);
            for b in &self.lifetimes.buckets {
                let _ = writeln!(t, "  >= {:<15} {}", b.from, b.count);
            }
        }
        table(
            &mut t,
            "top call sites by bytes",
            &self.top_sites_by_bytes,
            "allocations",
        );
        table(
            &mut t,
            "top call sites by count",
            &self.top_sites_by_count,
            "allocations",
        );
        let _ = writeln!(t, "threads             {}", self.threads);
        table(&mut t, "top threads", &self.top_threads, "records");
        table(&mut t, "top methods", &self.top_methods, "calls");
        table(&mut t, "top classes", &self.top_classes, "allocations");
        let _ = writeln!(
            t,
            "live over time      {} points (--csv prints them, --plot draws them)",
            self.live_over_time.points.len()
        );
        let json = serde_json::to_value(self).unwrap_or_default();
        StatsReport { text: t, json }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_powers_of_two() {
        let mut h = Log2Histogram::default();
        for v in [0, 1, 2, 3, 4, 100] {
            h.add(v);
        }
        let b: Vec<(u64, u64)> = h.buckets().iter().map(|b| (b.from, b.count)).collect();
        assert_eq!(
            b,
            [
                (0, 1),
                (1, 1),
                (2, 2),
                (4, 1),
                (8, 0),
                (16, 0),
                (32, 0),
                (64, 1)
            ]
        );
    }

    #[test]
    fn series_stays_bounded_and_evenly_spaced() {
        let mut s = LiveSeries::new("events");
        for at in 0..100_000u64 {
            s.offer(at, at, None);
        }
        s.finish(100_000, 7, None);
        assert!(s.points.len() >= MAX_POINTS / 2 && s.points.len() <= MAX_POINTS + 1);
        let gap = s.points[1].at - s.points[0].at;
        assert!(s
            .points
            .windows(2)
            .take(s.points.len() - 2)
            .all(|w| w[1].at - w[0].at == gap));
        assert_eq!(s.points.last().map(|p| p.objects), Some(7));
    }

    #[test]
    fn tally_ranks_by_bytes_or_count() {
        let mut t: Tally<String> = Tally::default();
        t.add("a", 1000);
        t.add("b", 1);
        t.add("b", 1);
        let by_bytes = t.top(true, true, |k| k.to_string());
        let by_count = t.top(false, true, |k| k.to_string());
        assert_eq!(by_bytes[0].name, "a");
        assert_eq!(by_count[0].name, "b");
        assert_eq!(by_count[0].bytes, Some(2));
    }
}
