//! What a terminal sees: no binary data from a decode, and progress only for runs longer than
//! about a second.

mod support;

use support::{bin, corpus, hatf, in_terminal, sample};

#[test]
fn a_decode_whose_original_is_binary_is_refused_on_a_terminal_but_text_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.mtrace"), sample()).unwrap();
    hatf()
        .current_dir(dir.path())
        .args(["encode", "--level", "1", "s.mtrace", "-o", "s.hatf"])
        .assert()
        .success();
    let bin = bin();
    let Some(shown) = in_terminal(
        &format!("{} decode -c s.hatf | head -c 0; {0} decode -c s.hatf --records 0..3; echo \"exit=$?\"", bin.display()),
        dir.path(),
    ) else {
        return;
    };
    let first_line = String::from_utf8_lossy(&sample())
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        shown.contains(&first_line) && shown.contains("exit=0"),
        "{shown}"
    );
    let Some(trace) = corpus("malloc/malloc-bench/traces/grep.trace.gz") else {
        return;
    };
    std::fs::copy(&trace, dir.path().join("grep.trace.gz")).unwrap();
    hatf()
        .current_dir(dir.path())
        .args(["encode", "--level", "1", "grep.trace.gz", "-o", "grep.hatf"])
        .assert()
        .success();
    let Some(shown) = in_terminal(
        &format!("{} decode -c grep.hatf; echo \"exit=$?\"", bin.display()),
        dir.path(),
    ) else {
        return;
    };
    assert!(
        shown.contains("refusing to write binary data to a terminal") && shown.contains("exit=2"),
        "{shown}"
    );
    // Nothing of the gzip stream (magic 1f 8b) reached the terminal.
    assert!(!shown.contains('\u{8b}') && shown.len() < 2000, "{shown:?}");
}

#[test]
fn progress_shows_after_about_a_second_and_not_before() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("s.mtrace");
    std::fs::write(&text, sample()).unwrap();
    let bin = bin();
    // A quick run: no progress line at all.
    let Some(quick) = in_terminal(
        &format!(
            "{} encode -o quick.hatf < s.mtrace; echo \"exit=$?\"",
            bin.display()
        ),
        dir.path(),
    ) else {
        return;
    };
    assert!(
        quick.contains("exit=0") && !quick.contains("encoding"),
        "{quick}"
    );
    // A run that waits two seconds for the rest of its input: the bar appears meanwhile.
    let Some(slow) = in_terminal(
        &format!(
            "(head -c 100000 s.mtrace; sleep 2; tail -c +100001 s.mtrace) | {} encode --from mtrace -o slow.hatf; echo \"exit=$?\"",
            bin.display()
        ),
        dir.path(),
    ) else {
        return;
    };
    assert!(
        slow.contains("exit=0") && slow.contains("encoding"),
        "{slow}"
    );
    let back = hatf()
        .arg("decode")
        .arg(dir.path().join("slow.hatf"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(back == sample());
}

#[test]
fn a_memory_replay_zip_decode_is_refused_on_a_terminal_and_goes_to_a_file_without_c() {
    let Some(zip) = corpus("malloc/android/systemui.zip") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    hatf()
        .current_dir(dir.path())
        .arg("encode")
        .arg(&zip)
        .args(["-o", "systemui.hatf"])
        .assert()
        .success();
    let bin = bin();
    let Some(shown) = in_terminal(
        &format!(
            "{0} decode -c systemui.hatf; echo \"exit=$?\"; {0} decode systemui.hatf; echo \"exit=$?\"",
            bin.display()
        ),
        dir.path(),
    ) else {
        return;
    };
    assert!(
        shown.contains("refusing to write binary data to a terminal") && shown.contains("exit=2"),
        "{shown}"
    );
    // Nothing of the zip (its `PK` header) reached the terminal.
    assert!(
        !shown.contains("PK\u{3}\u{4}") && shown.len() < 2000,
        "{shown:?}"
    );
    // Without -c the zip is written to a file named after the input, byte for byte.
    assert!(shown.contains("exit=0"), "{shown}");
    let back = std::fs::read(dir.path().join("systemui")).unwrap();
    assert!(back == std::fs::read(&zip).unwrap());
}

/// What a terminal shows while `hatf ARGS` reads `input` through a pipe that stalls for two
/// seconds after its first `first` bytes.
fn stalled(dir: &std::path::Path, input: &str, first: usize, args: &str) -> Option<String> {
    in_terminal(
        &format!(
            "(head -c {first} {input}; sleep 2; tail -c +{} {input}) | {} {args} > /dev/null; echo \"exit=$?\"",
            first + 1,
            bin().display()
        ),
        dir,
    )
}

#[test]
fn stats_validate_compare_and_decode_show_progress_when_they_run_long() {
    let dir = tempfile::tempdir().unwrap();
    // A short trace, so that only the stall makes the runs long.
    let text: String = String::from_utf8(sample())
        .unwrap()
        .lines()
        .take(2000)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.path().join("s.mtrace"), &text).unwrap();
    hatf()
        .current_dir(dir.path())
        .args(["encode", "s.mtrace", "-o", "s.hatf"])
        .assert()
        .success();
    for (args, input, first, verb) in [
        ("stats -", "s.mtrace", 20_000, "reading"),
        ("validate -", "s.mtrace", 20_000, "reading"),
        ("compare -", "s.mtrace", 20_000, "comparing"),
        ("decode - -o out.mtrace", "s.hatf", 2_000, "decoding"),
    ] {
        let Some(shown) = stalled(dir.path(), input, first, args) else {
            return;
        };
        assert!(shown.contains(verb), "hatf {args}: {shown}");
        // validate exits 1 for the leaks of a cut trace; the others succeed.
        assert!(
            shown.contains("exit=0") || (args.starts_with("validate") && shown.contains("exit=1")),
            "hatf {args}: {shown}"
        );
    }
    assert!(std::fs::read(dir.path().join("out.mtrace")).unwrap() == text.as_bytes());
}
