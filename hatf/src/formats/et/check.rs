//! `hatf stats` and `hatf validate` for Elephant Tracks text traces.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use serde_json::json;

use super::line::{classify, Kind, Line, Record};
use super::model::UOrder;
use super::sections::names::Names;
use crate::format::{At, FormatError, Problem, StatsReport};
use crate::shared::stats_schema::{
    Lifetimes, LiveAtEnd, LiveSeries, Log2Histogram, Stats, Tally, SCHEMA,
};
use crate::shared::text::line_reader::for_each_raw_line;

/// The thread field of a record: last, except in `D` where it is the second.
pub fn thread_of(r: &Record) -> u64 {
    match r.kind {
        Kind::D => r.fields[1],
        _ => r.fields[r.len - 1],
    }
}

/// Calls `f(line_number, parsed)` for every line of the input. Only the `\n` is taken off:
/// [`classify`] reads a `\r` as part of the line's spelling (a record spelled otherwise than
/// the encoder prints it, or white space), as the encoder does.
fn for_each_line(
    input: &mut dyn Read,
    input_name: &str,
    mut f: impl FnMut(u64, Line),
) -> Result<(), FormatError> {
    for_each_raw_line(input, input_name, |number, raw| {
        f(number, classify(raw.strip_suffix(b"\n").unwrap_or(raw)));
        Ok(())
    })
    .map(|_| ())
}

/// Checks method nesting per thread, deaths, object id 0 and the death clock.
pub fn validate(input: &mut dyn Read, input_name: &str) -> Result<Vec<Problem>, FormatError> {
    let mut problems = Vec::new();
    let mut stacks: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    // Object id -> (line of allocation, line of death if dead).
    let mut objects: HashMap<u64, (u64, Option<u64>)> = HashMap::new();
    let mut last_time: Option<(u64, u64)> = None;
    for_each_line(input, input_name, |n, line| {
        let mut report = |kind: &'static str, message: String| {
            problems.push(Problem {
                at: At::Line(n),
                kind,
                message,
            })
        };
        let r = match line {
            Line::Canonical(r) | Line::Spelled(r) => r,
            Line::Bad { column, reason } => {
                report(
                    "bad-line",
                    format!("column {column}: line does not parse: {reason}"),
                );
                return;
            }
            Line::Blank | Line::Comment | Line::WhiteSpace => return,
        };
        let f = r.fields;
        match r.kind {
            Kind::N | Kind::A => {
                if f[0] == 0 {
                    report(
                        "object-id-0",
                        "allocation of object id 0 (reserved for null)".to_string(),
                    );
                } else {
                    objects.insert(f[0], (n, None));
                }
            }
            Kind::D => {
                match objects.get_mut(&f[0]) {
                    None => report(
                        "death-of-unknown",
                        format!("death of object {} that was never allocated", f[0]),
                    ),
                    Some((_, Some(first))) => report(
                        "second-death",
                        format!(
                            "object {} dies a second time (first death on line {first})",
                            f[0]
                        ),
                    ),
                    Some((_, dead)) => *dead = Some(n),
                }
                if let Some((t, at)) = last_time {
                    if f[2] < t {
                        report(
                            "clock-goes-back",
                            format!("death clock goes back from {t} (line {at}) to {}", f[2]),
                        );
                    }
                }
                if last_time.is_none_or(|(t, _)| f[2] >= t) {
                    last_time = Some((f[2], n));
                }
            }
            Kind::M => stacks.entry(f[2]).or_default().push((f[0], n)),
            Kind::E => {
                let st = stacks.entry(f[1]).or_default();
                match st.last() {
                    None => report(
                        "exit-without-entry",
                        format!(
                            "exit of method {} on thread {} with no method open",
                            f[0], f[1]
                        ),
                    ),
                    Some(&(m, _)) if m == f[0] => {
                        st.pop();
                    }
                    Some(&(m, at)) => {
                        report("exit-mismatch", format!(
                            "exit of method {} on thread {}, but the innermost open method is {m} (entered on line {at})",
                            f[0], f[1]
                        ));
                        // Resynchronise: an exception may have unwound the frames above.
                        if let Some(p) = st.iter().rposition(|&(x, _)| x == f[0]) {
                            st.truncate(p);
                        }
                    }
                }
            }
            _ => {}
        }
    })?;
    let mut open: Vec<_> = stacks.into_iter().filter(|(_, s)| !s.is_empty()).collect();
    open.sort_by_key(|(_, s)| s[0].1);
    for (thread, st) in open {
        let &(m, at) = st.last().unwrap_or(&(0, 0));
        problems.push(Problem {
            at: At::Line(at),
            kind: "entry-without-exit",
            message: format!(
                "{} method entries on thread {thread} never exit (innermost: method {m} entered here)",
                st.len()
            ),
        });
    }
    problems.sort_by_key(|p| p.at);
    Ok(problems)
}

/// Counts records by kind, bytes allocated and their sizes, the live set over time, object
/// lifetimes, method calls and threads, in the schema every format shares.
///
/// Lifetimes are measured on the ET3 logical clock: the number of `M` and `E` records before
/// the allocation, against the time field of the `D` record. Objects are live from their `N`
/// or `A` record to their `D` record, so a trace without `D` records never frees any.
///
/// Methods (from `M` records) and the classes allocated in (the type of `N` and `A` records)
/// are named through `names` where it knows them, and shown by id otherwise.
pub fn stats(
    input: &mut dyn Read,
    input_name: &str,
    _order: UOrder,
    names: &Names,
) -> Result<StatsReport, FormatError> {
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let (mut lines, mut blank, mut comments, mut bad, mut respelled) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut records, mut allocated, mut freed) = (0u64, 0u64, 0u64);
    let mut bytes_allocated = 0u64;
    let mut clock = 0u64;
    // Live object -> (clock at its birth, size).
    let mut born: HashMap<u64, (u64, u64)> = HashMap::new();
    let (mut live_bytes, mut peak_bytes, mut peak_objects) = (0u64, 0u64, 0u64);
    let mut lifetimes = Log2Histogram::default();
    let mut sizes = Log2Histogram::default();
    let mut series = LiveSeries::new("records");
    let mut methods: Tally<u64> = Tally::default();
    let mut classes: Tally<u64> = Tally::default();
    let mut threads: Tally<u64> = Tally::default();
    let (mut life_sum, mut life_max, mut life_n, mut deaths_unknown) = (0u128, 0u64, 0u64, 0u64);
    for_each_line(input, input_name, |_, line| {
        lines += 1;
        let r = match line {
            Line::Canonical(r) => r,
            Line::Spelled(r) => {
                respelled += 1;
                r
            }
            Line::Blank | Line::WhiteSpace => {
                blank += 1;
                return;
            }
            Line::Comment => {
                comments += 1;
                return;
            }
            Line::Bad { .. } => {
                bad += 1;
                return;
            }
        };
        records += 1;
        *kinds
            .entry((r.kind.letter() as char).to_string())
            .or_default() += 1;
        let f = r.fields;
        let allocates = matches!(r.kind, Kind::N | Kind::A);
        threads.add(&thread_of(&r), if allocates { f[1] } else { 0 });
        match r.kind {
            Kind::N | Kind::A => {
                allocated += 1;
                bytes_allocated = bytes_allocated.wrapping_add(f[1]);
                sizes.add(f[1]);
                classes.add(&f[2], f[1]);
                if let Some((_, old)) = born.insert(f[0], (clock, f[1])) {
                    live_bytes = live_bytes.wrapping_sub(old);
                }
                live_bytes = live_bytes.wrapping_add(f[1]);
                peak_bytes = peak_bytes.max(live_bytes);
                peak_objects = peak_objects.max(born.len() as u64);
            }
            Kind::M => {
                clock += 1;
                methods.add(&f[0], 0);
            }
            Kind::E => clock += 1,
            Kind::D => match born.remove(&f[0]) {
                Some((b, size)) => {
                    freed += 1;
                    live_bytes = live_bytes.wrapping_sub(size);
                    let l = f[2].saturating_sub(b);
                    life_sum += u128::from(l);
                    life_max = life_max.max(l);
                    life_n += 1;
                    lifetimes.add(l);
                }
                None => deaths_unknown += 1,
            },
            _ => {}
        }
        series.offer(records, born.len() as u64, Some(live_bytes));
    })?;
    series.finish(records, born.len() as u64, Some(live_bytes));
    let mean = if life_n == 0 {
        0.0
    } else {
        life_sum as f64 / life_n as f64
    };
    let method_calls: u64 = methods.counts.values().map(|c| c.0).sum();
    let stats = Stats {
        schema: SCHEMA,
        format: "et".to_string(),
        records,
        records_by_kind: kinds,
        objects_allocated: allocated,
        objects_freed: freed,
        bytes_allocated: Some(bytes_allocated),
        peak_live_bytes: Some(peak_bytes),
        peak_live_objects: Some(peak_objects),
        live_at_end: LiveAtEnd {
            objects: born.len() as u64,
            bytes: Some(live_bytes),
        },
        frees_of_unknown_objects: deaths_unknown,
        size_histogram: sizes.buckets(),
        lifetimes: Lifetimes {
            unit: "method entries and exits (ET3 logical clock)",
            buckets: lifetimes.buckets(),
        },
        live_over_time: series,
        top_sites_by_bytes: Vec::new(),
        top_sites_by_count: Vec::new(),
        threads: threads.len() as u64,
        top_threads: threads.top(false, true, |t| t.to_string()),
        top_methods: methods.top(false, false, |&m| match names.method(m) {
            Some(name) => name.to_string(),
            None => format!("method {m}"),
        }),
        top_classes: classes.top(false, true, |&c| match names.class(c) {
            Some(name) => name.to_string(),
            None => format!("class {c}"),
        }),
        format_specific: json!({
            "lines": lines,
            "blank_lines": blank,
            "comment_lines": comments,
            "bad_lines": bad,
            "respelled_records": respelled,
            "method_calls": method_calls,
            "distinct_methods": methods.len(),
            "lifetime_mean": mean,
            "lifetime_max": life_max,
        }),
    };
    Ok(stats.report())
}
