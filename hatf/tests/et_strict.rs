//! Strict mode: damaged traces are refused at their first bad line, with its position.

mod et_support;

use et_support::*;
use hatf::internal::formats::et::{ET2, ET3};

#[test]
fn damaged_et2_java_traces_are_refused_at_their_first_bad_line() {
    let paths = trace_paths("et2-java");
    for p in &paths {
        let t = read_trace(p);
        let expected = first_bad_line(&t.text).expect("the et2-java traces are damaged");
        let err = encode(&ET2, &t.text, "trace", false, None)
            .err()
            .unwrap_or_else(|| panic!("{} was accepted in strict mode", p.display()));
        assert_eq!(err.file, "trace");
        let line: u64 = err
            .position
            .split(':')
            .next()
            .and_then(|l| l.parse().ok())
            .unwrap_or_else(|| panic!("position `{}` has no line", err.position));
        assert_eq!(line, expected, "{}: {err}", p.display());
        // The message quotes the offending line.
        let text = String::from_utf8_lossy(&t.text);
        let bad = text.lines().nth(expected as usize - 1).unwrap_or_default();
        assert!(err.message.contains(bad), "{err}");
    }
}

#[test]
fn kept_bad_lines_are_counted() {
    let paths = trace_paths("et2-java");
    for p in &paths {
        let t = read_trace(p);
        let expected = bad_lines(&t.text).len() as u64;
        let (_, report) = encode(&ET2, &t.text, "trace", true, None).expect("keeps bad lines");
        assert_eq!(report.bad_lines, expected, "{}", p.display());
        assert!(expected > 0);
    }
}

#[test]
fn error_names_line_and_column() {
    let text = b"M 1 0 7\nE 1 7\nM 515 0 2018699554W 650023597 123 2018699554\n";
    let err = encode(&ET3, text, "t.txt", false, None).expect_err("glued record");
    assert_eq!(err.file, "t.txt");
    assert_eq!(err.position, "3:9");
    assert!(err.message.contains("2018699554W"), "{}", err.message);
    assert!(err.to_string().starts_with("t.txt:3:9: "));
}
