//! `hatf stats` and `hatf validate` for JVM text traces.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;

use serde_json::json;

use super::line::{parse, Kind, Parsed, Record};
use crate::format::{At, FormatError, Problem, StatsReport};
use crate::shared::stats_schema::{
    Lifetimes, LiveAtEnd, LiveSeries, Stats, Tally, TopRow, SCHEMA, TOP,
};
use crate::shared::text::line_reader::for_each_line;

/// Calls `f(line, record or column and message)` for every line (line ends stripped).
fn for_each_record(
    input: &mut dyn Read,
    name: &str,
    mut f: impl FnMut(u64, Result<Record<'_>, (usize, String)>),
) -> Result<(), FormatError> {
    for_each_line(input, name, |n, text| {
        match parse(text) {
            Ok(Parsed::Canonical(r) | Parsed::Spelled(r)) => f(n, Ok(r)),
            Err(e) => f(n, Err((e.column, e.message))),
        }
        Ok(())
    })
}

#[derive(Default, serde::Serialize)]
struct ThreadStats {
    records: u64,
    method_calls: u64,
    frame_pops: u64,
    max_depth: usize,
}

/// Counts records by kind, objects allocated and freed, the live set over time, method calls,
/// allocated classes and threads, in the schema every format shares. The format records no
/// object sizes, so the byte counts are `null`.
pub fn stats(input: &mut dyn Read, name: &str) -> Result<StatsReport, FormatError> {
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut threads: BTreeMap<i64, ThreadStats> = BTreeMap::new();
    let mut depth: HashMap<i64, usize> = HashMap::new();
    let mut by_class: Tally<Vec<u8>> = Tally::default();
    let mut methods: Tally<Vec<u8>> = Tally::default();
    let mut live: HashSet<i64> = HashSet::new();
    let mut series = LiveSeries::new("records");
    let (mut lines, mut bad, mut records, mut allocated, mut freed, mut unknown) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut peak_objects = 0u64;
    let mut span: Option<(i64, i64)> = None;
    for_each_record(input, name, |_, r| {
        lines += 1;
        let Ok(r) = r else {
            bad += 1;
            return;
        };
        records += 1;
        *kinds.entry(r.kind.letters().to_string()).or_default() += 1;
        span = Some(span.map_or((r.time, r.time), |(a, b)| (a.min(r.time), b.max(r.time))));
        match r.kind {
            Kind::Oa => {
                allocated += 1;
                by_class.add(r.class, 0);
                live.insert(r.object);
                peak_objects = peak_objects.max(live.len() as u64);
            }
            Kind::Of => {
                if live.remove(&r.object) {
                    freed += 1;
                } else {
                    unknown += 1;
                }
            }
            Kind::Mn | Kind::Mx | Kind::Fp | Kind::Tb | Kind::Te => {
                let t = threads.entry(r.thread).or_default();
                t.records += 1;
                let d = depth.entry(r.thread).or_default();
                match r.kind {
                    Kind::Mn => {
                        t.method_calls += 1;
                        *d += 1;
                        t.max_depth = t.max_depth.max(*d);
                        let mut full = r.class.to_vec();
                        full.push(b'.');
                        full.extend_from_slice(r.method);
                        methods.add(full.as_slice(), 0);
                    }
                    Kind::Mx => *d = d.saturating_sub(1),
                    Kind::Fp => {
                        t.frame_pops += 1;
                        *d = d.saturating_sub(1);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        series.offer(records, live.len() as u64, None);
    })?;
    series.finish(records, live.len() as u64, None);
    let text_of = |c: &Vec<u8>| String::from_utf8_lossy(c).into_owned();
    let mut top_threads: Vec<(&i64, &ThreadStats)> = threads.iter().collect();
    top_threads.sort_by(|a, b| b.1.records.cmp(&a.1.records).then(a.0.cmp(b.0)));
    top_threads.truncate(TOP);
    let stats = Stats {
        schema: SCHEMA,
        format: "jvm".to_string(),
        records,
        records_by_kind: kinds,
        objects_allocated: allocated,
        objects_freed: freed,
        bytes_allocated: None,
        peak_live_bytes: None,
        peak_live_objects: Some(peak_objects),
        live_at_end: LiveAtEnd {
            objects: live.len() as u64,
            bytes: None,
        },
        frees_of_unknown_objects: unknown,
        size_histogram: Vec::new(),
        lifetimes: Lifetimes {
            unit: "none: the format's frees are not timed against allocations",
            buckets: Vec::new(),
        },
        live_over_time: series,
        top_sites_by_bytes: Vec::new(),
        top_sites_by_count: Vec::new(),
        threads: threads.len() as u64,
        top_threads: top_threads
            .iter()
            .map(|(t, s)| TopRow {
                name: t.to_string(),
                count: s.records,
                bytes: None,
            })
            .collect(),
        top_methods: methods.top(false, false, text_of),
        top_classes: by_class.top(false, false, text_of),
        format_specific: json!({
            "lines": lines,
            "bad_lines": bad,
            "time_first": span.map(|s| s.0),
            "time_last": span.map(|s| s.1),
            "thread_details": threads.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        }),
    };
    Ok(stats.report())
}

/// An open method: class name, method name, line of its entry.
type OpenFrame = (Vec<u8>, Vec<u8>, u64);

/// Checks the order of the VM events, time, method nesting per thread, and that every free is
/// of an allocated, not yet freed object with a non-zero id.
pub fn validate(input: &mut dyn Read, name: &str) -> Result<Vec<Problem>, FormatError> {
    let mut problems = Vec::new();
    let mut stacks: HashMap<i64, Vec<OpenFrame>> = HashMap::new();
    // Object id -> (class, line of allocation).
    let mut live: HashMap<i64, (Vec<u8>, u64)> = HashMap::new();
    let mut freed: HashMap<i64, u64> = HashMap::new();
    let mut last_time: Option<(i64, u64)> = None;
    let mut records = 0u64;
    let mut last_kind: Option<(Kind, u64)> = None;
    for_each_record(input, name, |n, r| {
        let mut report = |kind: &'static str, message: String| {
            problems.push(Problem {
                at: At::Line(n),
                kind,
                message,
            })
        };
        let r = match r {
            Ok(r) => r,
            Err((column, message)) => {
                report(
                    "bad-line",
                    format!("column {column}: line does not parse: {message}"),
                );
                return;
            }
        };
        records += 1;
        match (records, r.kind) {
            (1, Kind::Vs) | (2, Kind::Vi) => {}
            (1, _) => report("order", "the first record is not VS (VM start)".to_string()),
            (2, _) => report("order", "the second record is not VI (VM init)".to_string()),
            (_, Kind::Vs | Kind::Vi) => {
                report("order", format!("{} after the start", r.kind.letters()))
            }
            _ => {}
        }
        if let Some((Kind::Vd, at)) = last_kind {
            report("order", format!("record after VD (VM death) on line {at}"));
        }
        last_kind = Some((r.kind, n));
        if let Some((t, at)) = last_time {
            if r.time < t {
                report(
                    "time-goes-back",
                    format!("time goes back from {t} (line {at}) to {}", r.time),
                );
            }
        }
        if last_time.is_none_or(|(t, _)| r.time >= t) {
            last_time = Some((r.time, n));
        }
        match r.kind {
            Kind::Oa => {
                if r.object == 0 {
                    report("object-id-0", "allocation of object id 0".to_string());
                } else if let Some((_, at)) = live.get(&r.object) {
                    report(
                        "allocation-of-live",
                        format!(
                            "object {} allocated again while live (allocated on line {at})",
                            r.object
                        ),
                    );
                }
                freed.remove(&r.object);
                live.insert(r.object, (r.class.to_vec(), n));
            }
            Kind::Of => match live.remove(&r.object) {
                Some((class, at)) => {
                    if class != r.class {
                        report(
                            "class-mismatch",
                            format!(
                                "object {} freed as {} but allocated as {} (line {at})",
                                r.object,
                                String::from_utf8_lossy(r.class),
                                String::from_utf8_lossy(&class)
                            ),
                        );
                    }
                    freed.insert(r.object, n);
                }
                None => match freed.get(&r.object) {
                    Some(at) => report(
                        "double-free",
                        format!("object {} freed again (first on line {at})", r.object),
                    ),
                    None if r.object == 0 => {
                        report("object-id-0", "free of object id 0".to_string())
                    }
                    None => report(
                        "free-of-unknown",
                        format!("free of object {} that was never allocated", r.object),
                    ),
                },
            },
            Kind::Mn => {
                stacks
                    .entry(r.thread)
                    .or_default()
                    .push((r.class.to_vec(), r.method.to_vec(), n))
            }
            Kind::Mx | Kind::Fp => {
                let st = stacks.entry(r.thread).or_default();
                let name = format!(
                    "{}.{}",
                    String::from_utf8_lossy(r.class),
                    String::from_utf8_lossy(r.method)
                );
                match st.last() {
                    None => report(
                        "exit-without-entry",
                        format!(
                            "{} of {name} on thread {} with no method open",
                            r.kind.letters(),
                            r.thread
                        ),
                    ),
                    Some((c, m, _)) if c == r.class && m == r.method => {
                        st.pop();
                    }
                    Some((c, m, at)) => {
                        report("exit-mismatch", format!(
                            "{} of {name} on thread {}, but the innermost open method is {}.{} (entered on line {at})",
                            r.kind.letters(),
                            r.thread,
                            String::from_utf8_lossy(c),
                            String::from_utf8_lossy(m)
                        ));
                        if let Some(p) = st
                            .iter()
                            .rposition(|(c, m, _)| c == r.class && m == r.method)
                        {
                            st.truncate(p);
                        }
                    }
                }
            }
            _ => {}
        }
    })?;
    let mut open: Vec<_> = stacks.into_iter().filter(|(_, s)| !s.is_empty()).collect();
    open.sort_by_key(|(_, s)| s[0].2);
    for (thread, st) in open {
        if let Some((c, m, at)) = st.last() {
            problems.push(Problem {
                at: At::Line(*at),
                kind: "entry-without-exit",
                message: format!(
                    "{} method entries on thread {thread} never exit (innermost: {}.{} entered here)",
                    st.len(),
                    String::from_utf8_lossy(c),
                    String::from_utf8_lossy(m)
                ),
            });
        }
    }
    problems.sort_by_key(|p| p.at);
    Ok(problems)
}
