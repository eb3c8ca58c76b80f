//! `hatf stats` for allocation traces: counts by kind, bytes, sizes, the live set over time and
//! at its peak, lifetimes, call sites and threads, computed in one pass over the events in
//! memory bounded by the live set, the distinct call sites and the threads.

use std::collections::{BTreeMap, HashMap};

use crate::format::StatsReport;
use crate::shared::allocation::event::{AllocEvent, AllocKind};
use crate::shared::allocation::placed::{ForEachPlacedEvent, Place};
use crate::shared::stats_schema::{
    Lifetimes, LiveAtEnd, LiveSeries, Log2Histogram, Stats, Tally, SCHEMA,
};

/// Running statistics; feed events with [`AllocStats::add`], then call [`AllocStats::report`].
#[derive(Debug)]
pub struct AllocStats {
    events: u64,
    by_kind: BTreeMap<&'static str, u64>,
    allocated: u64,
    freed: u64,
    bytes_allocated: u64,
    /// Live block → (size, event of its birth).
    live: HashMap<u64, (u64, u64)>,
    live_bytes: u64,
    peak_bytes: u64,
    peak_objects: u64,
    /// Lifetimes in events.
    lifetimes: Log2Histogram,
    sizes: Log2Histogram,
    frees_of_unknown: u64,
    threads: Tally<u64>,
    sites: Tally<Vec<u8>>,
    series: LiveSeries,
}

impl Default for AllocStats {
    fn default() -> Self {
        AllocStats {
            events: 0,
            by_kind: BTreeMap::new(),
            allocated: 0,
            freed: 0,
            bytes_allocated: 0,
            live: HashMap::new(),
            live_bytes: 0,
            peak_bytes: 0,
            peak_objects: 0,
            lifetimes: Log2Histogram::default(),
            sizes: Log2Histogram::default(),
            frees_of_unknown: 0,
            threads: Tally::default(),
            sites: Tally::default(),
            series: LiveSeries::new("events"),
        }
    }
}

fn kind_name(k: AllocKind) -> &'static str {
    match k {
        AllocKind::Malloc => "malloc",
        AllocKind::Calloc => "calloc",
        AllocKind::Memalign => "memalign",
        AllocKind::Free => "free",
        AllocKind::Realloc => "realloc",
        AllocKind::CreateThread => "create-thread",
        AllocKind::DestroyThread => "destroy-thread",
    }
}

impl AllocStats {
    /// Accounts for one event of a format without call sites.
    pub fn add(&mut self, e: &AllocEvent) {
        self.add_placed(None, e);
    }

    /// Accounts for one event and its call site, if the trace names one.
    pub fn add_placed(&mut self, site: Option<&[u8]>, e: &AllocEvent) {
        let now = self.events;
        self.events += 1;
        *self.by_kind.entry(kind_name(e.kind)).or_default() += 1;
        let allocates = matches!(
            e.kind,
            AllocKind::Malloc | AllocKind::Calloc | AllocKind::Memalign | AllocKind::Realloc
        );
        let bytes = if allocates { e.size } else { 0 };
        self.threads.add(&e.thread, bytes);
        if allocates {
            self.allocated += 1;
            self.bytes_allocated = self.bytes_allocated.wrapping_add(e.size);
            self.sizes.add(e.size);
            if let Some(site) = site {
                self.sites.add(site, e.size);
            }
        }
        match e.kind {
            AllocKind::Malloc | AllocKind::Calloc | AllocKind::Memalign => {
                self.born(e.address, e.size, now)
            }
            AllocKind::Realloc => {
                if e.old_address != 0 {
                    self.died(e.old_address, now);
                }
                self.born(e.address, e.size, now);
            }
            AllocKind::Free => {
                if e.address != 0 {
                    self.died(e.address, now);
                }
            }
            AllocKind::CreateThread | AllocKind::DestroyThread => {}
        }
        self.series
            .offer(self.events, self.live.len() as u64, Some(self.live_bytes));
    }

    fn born(&mut self, addr: u64, size: u64, now: u64) {
        if addr == 0 {
            return;
        }
        if let Some((old, _)) = self.live.insert(addr, (size, now)) {
            self.live_bytes -= old;
        }
        self.live_bytes += size;
        self.peak_bytes = self.peak_bytes.max(self.live_bytes);
        self.peak_objects = self.peak_objects.max(self.live.len() as u64);
    }

    fn died(&mut self, addr: u64, now: u64) {
        match self.live.remove(&addr) {
            Some((size, birth)) => {
                self.freed += 1;
                self.live_bytes -= size;
                self.lifetimes.add(now - birth);
            }
            None => self.frees_of_unknown += 1,
        }
    }

    /// The table and JSON for `hatf stats`, in the schema every format shares.
    pub fn report(&self, format: &str) -> StatsReport {
        self.stats(format).report()
    }

    /// The numbers, in the schema every format shares.
    pub fn stats(&self, format: &str) -> Stats {
        let mut series = self.series.clone();
        series.finish(self.events, self.live.len() as u64, Some(self.live_bytes));
        let site = |s: &Vec<u8>| String::from_utf8_lossy(s).into_owned();
        Stats {
            schema: SCHEMA,
            format: format.to_string(),
            records: self.events,
            records_by_kind: self
                .by_kind
                .iter()
                .map(|(k, n)| (k.to_string(), *n))
                .collect(),
            objects_allocated: self.allocated,
            objects_freed: self.freed,
            bytes_allocated: Some(self.bytes_allocated),
            peak_live_bytes: Some(self.peak_bytes),
            peak_live_objects: Some(self.peak_objects),
            live_at_end: LiveAtEnd {
                objects: self.live.len() as u64,
                bytes: Some(self.live_bytes),
            },
            frees_of_unknown_objects: self.frees_of_unknown,
            size_histogram: self.sizes.buckets(),
            lifetimes: Lifetimes {
                unit: "events",
                buckets: self.lifetimes.buckets(),
            },
            live_over_time: series,
            top_sites_by_bytes: self.sites.top(true, true, site),
            top_sites_by_count: self.sites.top(false, true, site),
            threads: self.threads.len() as u64,
            top_threads: self.threads.top(false, true, |t| t.to_string()),
            top_methods: Vec::new(),
            top_classes: Vec::new(),
            format_specific: serde_json::json!({ "distinct_call_sites": self.sites.len() }),
        }
    }
}

/// The statistics of a text trace of `format`, from the events `for_each` reads from `input`
/// (named `input_name` in errors): what every allocation format's `stats` is.
pub fn of_events(
    format: &str,
    for_each: ForEachPlacedEvent,
    input: &mut dyn std::io::Read,
    input_name: &str,
) -> Result<StatsReport, crate::format::FormatError> {
    let mut s = AllocStats::default();
    for_each(input, input_name, &mut |p: Place<'_>, e| {
        s.add_placed(p.site, &e)
    })?;
    Ok(s.report(format))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: AllocKind, address: u64, size: u64) -> AllocEvent {
        AllocEvent {
            size,
            address,
            ..AllocEvent::new(kind)
        }
    }

    #[test]
    fn peak_lifetimes_sizes_and_sites_follow_the_events() {
        let mut s = AllocStats::default();
        s.add_placed(Some(b"a"), &ev(AllocKind::Malloc, 0x10, 100));
        s.add_placed(Some(b"b"), &ev(AllocKind::Malloc, 0x20, 50));
        s.add_placed(Some(b"b"), &ev(AllocKind::Malloc, 0x30, 3));
        s.add(&ev(AllocKind::Free, 0x10, 0));
        s.add(&ev(AllocKind::Free, 0x99, 0));
        let r = s.report("t");
        assert_eq!(r.json["schema"], SCHEMA);
        assert_eq!(r.json["peak_live_bytes"], 153);
        assert_eq!(r.json["peak_live_objects"], 3);
        assert_eq!(r.json["frees_of_unknown_objects"], 1);
        assert_eq!(r.json["live_at_end"]["bytes"], 53);
        assert_eq!(r.json["lifetimes"]["buckets"][0]["from"], 2);
        assert_eq!(r.json["records_by_kind"]["free"], 2);
        assert_eq!(r.json["top_sites_by_bytes"][0]["name"], "a");
        assert_eq!(r.json["top_sites_by_count"][0]["name"], "b");
        assert_eq!(r.json["top_sites_by_count"][0]["bytes"], 53);
        let sizes = &r.json["size_histogram"];
        assert_eq!(sizes[0]["from"], 2);
        assert_eq!(sizes[0]["count"], 1);
        let points = r.json["live_over_time"]["points"].as_array().unwrap();
        assert_eq!(points.last().unwrap()["bytes"], 53);
        assert_eq!(points.last().unwrap()["at"], 5);
    }
}
