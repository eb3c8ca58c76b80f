//! `validate` and `stats` over the corpus, checked against counts computed here independently.

mod et_support;

use std::collections::{BTreeMap, HashMap, HashSet};

use et_support::*;
use hatf::format::TraceFormat;
use hatf::internal::formats::et::{ET2, ET3};

fn all_traces() -> Vec<Trace> {
    let mut v: Vec<Trace> = trace_paths("et3-merlin")
        .iter()
        .map(|p| read_trace(p))
        .collect();
    v.extend(trace_paths("et2-java").iter().map(|p| read_trace(p)));
    v
}

fn records(text: &[u8]) -> impl Iterator<Item = (u64, Vec<String>)> + '_ {
    text.split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, l)| {
            let parts: Vec<String> = String::from_utf8_lossy(l)
                .split_whitespace()
                .map(str::to_string)
                .collect();
            (!parts.is_empty()).then_some((i as u64 + 1, parts))
        })
}

fn num(s: &str) -> u64 {
    s.parse().unwrap_or(u64::MAX)
}

/// Independent expectations: (death problems, id-0 allocations, clock regressions, exit problems).
fn expected_problem_lines(text: &[u8]) -> Vec<u64> {
    let bad: HashSet<u64> = bad_lines(text).into_iter().collect();
    let mut lines: Vec<u64> = bad.iter().copied().collect();
    let mut alive: HashMap<u64, bool> = HashMap::new();
    let mut max_time: Option<u64> = None;
    let mut stacks: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    for (n, p) in records(text) {
        if bad.contains(&n) || p[0].starts_with('#') {
            continue;
        }
        match p[0].as_str() {
            "N" | "A" => {
                if num(&p[1]) == 0 {
                    lines.push(n);
                } else {
                    alive.insert(num(&p[1]), true);
                }
            }
            "D" => {
                match alive.get_mut(&num(&p[1])) {
                    Some(a) if *a => *a = false,
                    _ => lines.push(n),
                }
                let t = num(&p[3]);
                if max_time.is_some_and(|m| t < m) {
                    lines.push(n);
                }
                max_time = Some(max_time.map_or(t, |m| m.max(t)));
            }
            "M" => stacks.entry(num(&p[3])).or_default().push((num(&p[1]), n)),
            "E" => {
                let st = stacks.entry(num(&p[2])).or_default();
                let m = num(&p[1]);
                match st.last() {
                    Some(&(top, _)) if top == m => {
                        st.pop();
                    }
                    None => lines.push(n),
                    Some(_) => {
                        lines.push(n);
                        if let Some(k) = st.iter().rposition(|&(x, _)| x == m) {
                            st.truncate(k);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    for st in stacks.values() {
        if let Some(&(_, at)) = st.last() {
            lines.push(at);
        }
    }
    lines.sort();
    lines
}

#[test]
fn validate_matches_independent_checks() {
    for t in all_traces() {
        let problems = hatf::format::problems(&ET3, &mut &t.text[..], "t")
            .expect("ET validates")
            .expect("reads");
        let got: Vec<u64> = problems.iter().map(|p| p.at.number()).collect();
        assert_eq!(got, expected_problem_lines(&t.text), "{}", t.path.display());
    }
}

#[test]
fn validate_reports_each_kind_of_problem() {
    let text = b"N 0 16 1 2 0 7\nN 5 16 1 2 0 7\nD 5 7 3\nD 5 7 4\nD 9 7 5\nD 6 7 1\nM 1 0 7\nE 2 7\nE 3 8\nM 4 0 7\nfoo\n";
    let problems = hatf::format::problems(&ET3, &mut &text[..], "t")
        .expect("some")
        .expect("ok");
    let by_line: BTreeMap<u64, &str> = problems
        .iter()
        .map(|p| (p.at.number(), p.message.as_str()))
        .collect();
    assert!(by_line[&1].contains("object id 0"));
    assert!(by_line[&4].contains("second time"));
    assert!(by_line[&5].contains("never allocated"));
    assert!(by_line[&6].contains("never allocated") || by_line[&6].contains("clock"));
    assert!(problems
        .iter()
        .any(|p| p.at.number() == 6 && p.message.contains("clock goes back")));
    assert!(by_line[&8].contains("innermost open method is 1"));
    assert!(by_line[&9].contains("no method open"));
    assert!(by_line[&10].contains("never exit"));
    assert!(by_line[&11].contains("does not parse"));
}

#[test]
fn stats_match_independent_counts() {
    for t in all_traces() {
        let report = ET2
            .stats(&mut &t.text[..], "t")
            .expect("ET has stats")
            .expect("reads");
        let j = &report.json;
        let bad: HashSet<u64> = bad_lines(&t.text).into_iter().collect();
        let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
        let mut bytes = 0u64;
        let mut threads: HashSet<u64> = HashSet::new();
        let mut clock = 0u64;
        let mut born: HashMap<u64, u64> = HashMap::new();
        let (mut deaths, mut max_life) = (0u64, 0u64);
        for (n, p) in records(&t.text) {
            if bad.contains(&n) || p[0].starts_with('#') {
                continue;
            }
            *kinds.entry(p[0].clone()).or_default() += 1;
            threads.insert(num(if p[0] == "D" {
                &p[2]
            } else {
                p.last().expect("fields")
            }));
            match p[0].as_str() {
                "N" | "A" => {
                    bytes += num(&p[2]);
                    born.insert(num(&p[1]), clock);
                }
                "M" | "E" => clock += 1,
                "D" => {
                    if let Some(b) = born.remove(&num(&p[1])) {
                        deaths += 1;
                        max_life = max_life.max(num(&p[3]).saturating_sub(b));
                    }
                }
                _ => {}
            }
        }
        let name = t.path.display().to_string();
        for (k, c) in &kinds {
            assert_eq!(j["records_by_kind"][k].as_u64(), Some(*c), "{name} {k}");
        }
        assert_eq!(
            j["records_by_kind"].as_object().map(|o| o.len()),
            Some(kinds.len()),
            "{name}"
        );
        assert_eq!(
            j["format_specific"]["bad_lines"].as_u64(),
            Some(bad.len() as u64),
            "{name}"
        );
        assert_eq!(j["bytes_allocated"].as_u64(), Some(bytes), "{name}");
        assert_eq!(j["threads"].as_u64(), Some(threads.len() as u64), "{name}");
        assert_eq!(
            j["format_specific"]["method_calls"].as_u64(),
            kinds.get("M").copied().or(Some(0)),
            "{name}"
        );
        assert_eq!(j["objects_freed"].as_u64(), Some(deaths), "{name}");
        assert_eq!(
            j["format_specific"]["lifetime_max"].as_u64(),
            Some(max_life),
            "{name}"
        );
        let hist: u64 = j["lifetimes"]["buckets"]
            .as_array()
            .expect("histogram")
            .iter()
            .map(|h| h["count"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(hist, deaths, "{name}");
        assert!(
            report
                .text
                .contains(&format!("bytes allocated     {bytes}")),
            "{name}"
        );
    }
}
