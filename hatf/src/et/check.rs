//! `hatf stats` and `hatf validate` for Elephant Tracks text traces.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read};

use serde_json::json;

use super::line::{classify, Kind, Line, Record};
use super::model::UOrder;
use crate::format::{At, FormatError, Problem, StatsReport};

/// The thread field of a record: last, except in `D` where it is the second.
pub fn thread_of(r: &Record) -> u64 {
    match r.kind {
        Kind::D => r.fields[1],
        _ => r.fields[r.len - 1],
    }
}

/// Calls `f(line_number, parsed)` for every line of the input.
fn for_each_line(
    input: &mut dyn Read,
    input_name: &str,
    mut f: impl FnMut(u64, Line),
) -> Result<(), FormatError> {
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut buf = Vec::new();
    let mut number = 0u64;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| FormatError {
                file: input_name.to_string(),
                position: format!("{}:1", number + 1),
                message: format!("cannot read: {e}"),
            })?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        f(number, classify(line));
    }
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

/// Lifetime histogram buckets: `[0]`, `[1]`, `[2,4)`, `[4,8)`, ... in logical clock ticks.
fn bucket(lifetime: u64) -> usize {
    (64 - lifetime.leading_zeros()) as usize
}

#[derive(Default, serde::Serialize)]
struct ThreadStats {
    records: u64,
    allocations: u64,
    bytes_allocated: u64,
    method_calls: u64,
}

/// Counts records by kind, bytes allocated, object lifetimes and method calls, per thread too.
///
/// Lifetimes are measured on the ET3 logical clock: the number of `M` and `E` records before
/// the allocation, against the time field of the `D` record.
pub fn stats(
    input: &mut dyn Read,
    input_name: &str,
    _order: UOrder,
) -> Result<StatsReport, FormatError> {
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let (mut lines, mut blank, mut comments, mut bad, mut respelled) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut bytes_allocated = 0u64;
    let mut clock = 0u64;
    let mut born: HashMap<u64, u64> = HashMap::new();
    let mut hist = vec![0u64; 65];
    let mut methods: HashMap<u64, u64> = HashMap::new();
    let mut threads: BTreeMap<u64, ThreadStats> = BTreeMap::new();
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
        *kinds
            .entry((r.kind.letter() as char).to_string())
            .or_default() += 1;
        let t = threads.entry(thread_of(&r)).or_default();
        t.records += 1;
        let f = r.fields;
        match r.kind {
            Kind::N | Kind::A => {
                bytes_allocated = bytes_allocated.wrapping_add(f[1]);
                t.allocations += 1;
                t.bytes_allocated = t.bytes_allocated.wrapping_add(f[1]);
                born.insert(f[0], clock);
            }
            Kind::M => {
                clock += 1;
                t.method_calls += 1;
                *methods.entry(f[0]).or_default() += 1;
            }
            Kind::E => clock += 1,
            Kind::D => match born.remove(&f[0]) {
                Some(b) => {
                    let l = f[2].saturating_sub(b);
                    life_sum += u128::from(l);
                    life_max = life_max.max(l);
                    life_n += 1;
                    hist[bucket(l)] += 1;
                }
                None => deaths_unknown += 1,
            },
            _ => {}
        }
    })?;
    let mean = if life_n == 0 {
        0.0
    } else {
        life_sum as f64 / life_n as f64
    };
    let last = hist.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
    let histogram: Vec<_> = hist[..last]
        .iter()
        .enumerate()
        .map(|(b, &c)| {
            let lo = if b == 0 { 0 } else { 1u64 << (b - 1) };
            json!({"from": lo, "count": c})
        })
        .collect();
    let mut top: Vec<_> = methods.iter().map(|(&m, &c)| (c, m)).collect();
    top.sort_by(|a, b| b.cmp(a));
    top.truncate(10);
    let json = json!({
        "lines": lines,
        "records": kinds,
        "blank_lines": blank,
        "comment_lines": comments,
        "bad_lines": bad,
        "respelled_records": respelled,
        "bytes_allocated": bytes_allocated,
        "lifetimes": {
            "unit": "method entries and exits (ET3 logical clock)",
            "count": life_n,
            "mean": mean,
            "max": life_max,
            "histogram": histogram,
            "deaths_of_unknown_objects": deaths_unknown,
            "never_died": born.len(),
        },
        "method_calls": methods.values().sum::<u64>(),
        "distinct_methods": methods.len(),
        "top_methods": top.iter().map(|&(c, m)| json!({"method": m, "calls": c})).collect::<Vec<_>>(),
        "threads": threads.iter().map(|(id, t)| json!({
            "thread": id, "records": t.records, "allocations": t.allocations,
            "bytes_allocated": t.bytes_allocated, "method_calls": t.method_calls,
        })).collect::<Vec<_>>(),
    });
    let mut text = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(text, "lines            {lines}");
    for (k, c) in &kinds {
        let _ = writeln!(text, "  {k} records      {c}");
    }
    let _ = writeln!(
        text,
        "  blank lines    {blank}\n  comments       {comments}\n  bad lines      {bad}"
    );
    let _ = writeln!(text, "bytes allocated  {bytes_allocated}");
    let _ = writeln!(
        text,
        "lifetimes        {life_n} deaths, mean {mean:.2}, max {life_max} (clock: method entries+exits)"
    );
    for h in &histogram {
        let _ = writeln!(text, "  >= {:<10} {}", h["from"], h["count"]);
    }
    let _ = writeln!(
        text,
        "method calls     {} ({} distinct methods)",
        methods.values().sum::<u64>(),
        methods.len()
    );
    let _ = writeln!(text, "threads          {}", threads.len());
    for (id, t) in &threads {
        let _ = writeln!(
            text,
            "  {id:<12} {} records, {} allocations, {} bytes, {} calls",
            t.records, t.allocations, t.bytes_allocated, t.method_calls
        );
    }
    Ok(StatsReport { text, json })
}
