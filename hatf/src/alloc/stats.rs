//! `hatf stats` for allocation traces: counts by kind, bytes, peak live set, lifetimes and
//! per-thread numbers, computed in one pass over the events.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use serde_json::json;

use crate::alloc::event::{AllocEvent, AllocKind};
use crate::format::StatsReport;

/// Running statistics; feed events with [`AllocStats::add`], then call [`AllocStats::report`].
#[derive(Debug, Default)]
pub struct AllocStats {
    events: u64,
    by_kind: BTreeMap<&'static str, u64>,
    bytes_allocated: u64,
    live: HashMap<u64, (u64, u64)>,
    live_bytes: u64,
    peak_bytes: u64,
    peak_objects: u64,
    /// Lifetimes in events, bucketed by powers of two: bucket k holds [2^k, 2^(k+1)).
    lifetimes: BTreeMap<u32, u64>,
    frees_of_unknown: u64,
    per_thread: BTreeMap<u64, (u64, u64)>,
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
    /// Accounts for one event.
    pub fn add(&mut self, e: &AllocEvent) {
        let now = self.events;
        self.events += 1;
        *self.by_kind.entry(kind_name(e.kind)).or_default() += 1;
        let t = self.per_thread.entry(e.thread).or_default();
        t.0 += 1;
        match e.kind {
            AllocKind::Malloc | AllocKind::Calloc | AllocKind::Memalign => {
                t.1 += e.size;
                self.bytes_allocated += e.size;
                self.born(e.address, e.size, now);
            }
            AllocKind::Realloc => {
                t.1 += e.size;
                self.bytes_allocated += e.size;
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
                self.live_bytes -= size;
                let life = now - birth;
                *self
                    .lifetimes
                    .entry(63 - life.max(1).leading_zeros())
                    .or_default() += 1;
            }
            None => self.frees_of_unknown += 1,
        }
    }

    /// The table and JSON for `hatf stats`.
    pub fn report(&self, format: &str) -> StatsReport {
        let mut text = String::new();
        let _ = writeln!(text, "format            {format}");
        let _ = writeln!(text, "events            {}", self.events);
        for (k, n) in &self.by_kind {
            let _ = writeln!(text, "  {k:<15} {n}");
        }
        let _ = writeln!(text, "bytes allocated   {}", self.bytes_allocated);
        let _ = writeln!(text, "peak live bytes   {}", self.peak_bytes);
        let _ = writeln!(text, "peak live objects {}", self.peak_objects);
        let _ = writeln!(
            text,
            "live at end       {} objects, {} bytes",
            self.live.len(),
            self.live_bytes
        );
        let _ = writeln!(text, "frees of unknown blocks {}", self.frees_of_unknown);
        let _ = writeln!(text, "lifetime (events) objects");
        for (k, n) in &self.lifetimes {
            let _ = writeln!(text, "  [{}, {}) {n}", 1u64 << k, 1u128 << (k + 1));
        }
        if self.per_thread.len() > 1 || self.per_thread.keys().any(|&t| t != 0) {
            let _ = writeln!(text, "thread     events  bytes allocated");
            for (t, (n, b)) in &self.per_thread {
                let _ = writeln!(text, "  {t:<8} {n:>8} {b}");
            }
        }
        let json = json!({
            "format": format,
            "events": self.events,
            "by_kind": self.by_kind,
            "bytes_allocated": self.bytes_allocated,
            "peak_live_bytes": self.peak_bytes,
            "peak_live_objects": self.peak_objects,
            "live_at_end_objects": self.live.len(),
            "live_at_end_bytes": self.live_bytes,
            "frees_of_unknown_blocks": self.frees_of_unknown,
            "lifetime_log2_buckets": self.lifetimes.iter()
                .map(|(k, n)| json!({"from": 1u64 << k, "count": n})).collect::<Vec<_>>(),
            "per_thread": self.per_thread.iter()
                .map(|(t, (n, b))| json!({"thread": t, "events": n, "bytes_allocated": b}))
                .collect::<Vec<_>>(),
        });
        StatsReport { text, json }
    }
}

/// The statistics of a text trace of `format`, from the events `for_each_event` reads from
/// `input` (named `input_name` in errors): what every allocation format's `stats` is.
pub fn of_events(
    format: &str,
    for_each_event: crate::alloc::hatf10_dtd::ForEachEvent,
    input: &mut dyn std::io::Read,
    input_name: &str,
) -> Result<StatsReport, crate::format::FormatError> {
    let mut s = AllocStats::default();
    for_each_event(input, input_name, &mut |e| s.add(&e))?;
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
    fn peak_and_lifetimes_follow_the_events() {
        let mut s = AllocStats::default();
        s.add(&ev(AllocKind::Malloc, 0x10, 100));
        s.add(&ev(AllocKind::Malloc, 0x20, 50));
        s.add(&ev(AllocKind::Free, 0x10, 0));
        s.add(&ev(AllocKind::Free, 0x99, 0));
        let r = s.report("t");
        assert_eq!(r.json["peak_live_bytes"], 150);
        assert_eq!(r.json["peak_live_objects"], 2);
        assert_eq!(r.json["frees_of_unknown_blocks"], 1);
        assert_eq!(r.json["live_at_end_bytes"], 50);
        assert_eq!(r.json["lifetime_log2_buckets"][0]["from"], 2);
        assert_eq!(r.json["by_kind"]["free"], 2);
    }
}
