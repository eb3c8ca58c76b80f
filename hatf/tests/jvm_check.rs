//! `stats` and `validate` of JVM traces against counts the generator made itself.

mod jvm_support;

use hatf::format::TraceFormat;
use hatf::internal::formats::jvm::{JVM, JVM_ZIP};
use jvm_support::{trace, zip_of, Ends};

#[test]
fn stats_match_the_generators_counts() {
    let (text, counts) = trace(21, 20_000, 3, Ends::Mixed);
    let s = JVM
        .stats(&mut text.as_bytes(), "t")
        .expect("has stats")
        .expect("stats");
    let j = &s.json;
    assert_eq!(j["format_specific"]["lines"], counts.lines);
    assert_eq!(j["objects_allocated"], counts.allocated);
    assert_eq!(j["objects_freed"], counts.freed);
    for (k, n) in &counts.by_kind {
        assert_eq!(j["records_by_kind"][k], *n, "{k}");
    }
    for (t, n) in &counts.calls {
        assert_eq!(
            j["format_specific"]["thread_details"][t.to_string()]["method_calls"],
            *n,
            "thread {t}"
        );
    }
    let z = zip_of(&text, zip::CompressionMethod::Deflated, None);
    let sz = JVM_ZIP
        .stats(&mut z.as_slice(), "z")
        .expect("has stats")
        .expect("stats");
    assert_eq!(sz.json, s.json);
}

#[test]
fn a_generated_trace_validates_and_injected_faults_are_found() {
    let (text, _) = trace(22, 20_000, 3, Ends::Lf);
    let problems = hatf::format::problems(&JVM, &mut text.as_bytes(), "t")
        .expect("validates")
        .expect("ok");
    assert!(problems.is_empty(), "{problems:?}");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len();
    // A free of an object never allocated, an allocation of id 0, time going back, an exit of
    // a method that is not open, and a second free of an object.
    let of = lines
        .iter()
        .position(|l| l.starts_with("OF:"))
        .expect("a free");
    let again = lines[of].clone();
    let t: i64 = lines[n / 2].split(':').nth(1).unwrap().parse().unwrap();
    lines.insert(n / 2, format!("OF:{t}:X:424242"));
    lines.insert(n / 2 + 1, format!("OA:{t}:X:0"));
    lines.insert(n / 2 + 2, format!("CL:{}:Y", t - 1));
    lines.insert(n / 2 + 3, format!("MX:{t}:99:Nope:nope"));
    lines.insert(n / 2 + 4, again);
    let damaged = lines.join("\n") + "\n";
    let problems = hatf::format::problems(&JVM, &mut damaged.as_bytes(), "t")
        .expect("validates")
        .expect("ok");
    let at = |line: usize, word: &str| {
        problems
            .iter()
            .any(|p| p.at.number() == line as u64 && p.message.contains(word))
    };
    assert!(at(n / 2 + 1, "never allocated"), "{problems:?}");
    assert!(at(n / 2 + 2, "id 0"), "{problems:?}");
    assert!(at(n / 2 + 3, "time goes back"), "{problems:?}");
    assert!(at(n / 2 + 4, "no method open"), "{problems:?}");
    assert!(at(n / 2 + 5, "freed again"), "{problems:?}");
}

#[test]
fn unbalanced_calls_and_vm_order_are_reported() {
    let text = "VI:1\nVS:2\nMN:3:1:A:f:0\nMN:4:1:A:g:0\nMX:5:1:A:f\nVD:6\nTB:7:1\n";
    let problems = hatf::format::problems(&JVM, &mut text.as_bytes(), "t")
        .expect("validates")
        .expect("ok");
    let lines: Vec<u64> = problems.iter().map(|p| p.at.number()).collect();
    assert!(problems[0].message.contains("first record"), "{problems:?}");
    assert!(lines.contains(&5) && lines.contains(&7), "{problems:?}");
}
