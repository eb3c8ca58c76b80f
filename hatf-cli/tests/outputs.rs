//! Where output goes: names made from the input, several inputs, the input never overwritten,
//! devices without --force, errors naming the output, the summary line, the record count.

mod support;

use predicates::str::contains;
use support::{bin, hatf, in_terminal, partials, sample};

#[test]
fn on_a_terminal_one_input_is_written_to_a_file_named_after_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.mtrace"), sample()).unwrap();
    let bin = bin();
    let Some(shown) = in_terminal(
        &format!(
            "{0} encode --level 1 s.mtrace && {0} decode -o back.mtrace s.mtrace.hatf; echo \"exit=$?\"",
            bin.display()
        ),
        dir.path(),
    ) else {
        return;
    };
    assert!(shown.contains("exit=0"), "{shown}");
    // On a terminal the summary line is printed without -v.
    assert!(
        shown.contains("s.mtrace: ") && shown.contains("bytes, s.mtrace.hatf) in "),
        "{shown}"
    );
    assert!(std::fs::read(dir.path().join("back.mtrace")).unwrap() == sample());
    // Decoding it back without -o writes `s.mtrace`, which exists: refused without -f.
    let Some(shown) = in_terminal(
        &format!("{} decode s.mtrace.hatf; echo \"exit=$?\"", bin.display()),
        dir.path(),
    ) else {
        return;
    };
    assert!(
        shown.contains("s.mtrace: already exists") && shown.contains("exit=2"),
        "{shown}"
    );
}

#[test]
fn several_inputs_each_get_their_own_output_and_stdout_concatenates_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let half = text.len() / 2;
    // Two valid mtrace logs: the whole sample, and its lines up to about the middle.
    let cut = half + text[half..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let (a, b) = (dir.path().join("a.mtrace"), dir.path().join("b.mtrace"));
    std::fs::write(&a, &text).unwrap();
    std::fs::write(&b, &text[..cut]).unwrap();
    hatf()
        .args(["encode", "-q", "--level", "1"])
        .arg(&a)
        .arg(&b)
        .assert()
        .success();
    let (ah, bh) = (
        dir.path().join("a.mtrace.hatf"),
        dir.path().join("b.mtrace.hatf"),
    );
    std::fs::remove_file(&a).unwrap();
    std::fs::remove_file(&b).unwrap();
    hatf().arg("decode").arg(&ah).arg(&bh).assert().success();
    assert!(std::fs::read(&a).unwrap() == text);
    assert!(std::fs::read(&b).unwrap() == text[..cut]);
    let both = hatf()
        .args(["decode", "--stdout"])
        .arg(&ah)
        .arg(&bh)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(both == [&text[..], &text[..cut]].concat());
    // -o names one output; a name not ending in .hatf gives no output name.
    hatf()
        .arg("decode")
        .arg(&ah)
        .arg(&bh)
        .args(["-o", "x"])
        .assert()
        .code(2)
        .stderr(contains("several inputs"));
    hatf()
        .arg("decode")
        .arg(&a)
        .arg(&bh)
        .arg("-f")
        .assert()
        .code(2)
        .stderr(contains("a.mtrace: does not end in .hatf"))
        .stderr(contains("1 of 2 inputs failed"));
    assert!(partials(dir.path()).is_empty());
}

#[test]
fn the_input_is_never_its_own_output_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("perl.mtrace");
    std::fs::write(&input, sample()).unwrap();
    let link = dir.path().join("other-name.mtrace");
    std::fs::hard_link(&input, &link).unwrap();
    for output in [&input, &link] {
        for force in [false, true] {
            let mut cmd = hatf();
            cmd.arg("encode").arg(&input).arg("-o").arg(output);
            if force {
                cmd.arg("-f");
            }
            cmd.assert()
                .code(2)
                .stderr(contains("refusing to write the output over it"));
            assert!(
                std::fs::read(&input).unwrap() == sample(),
                "the input changed"
            );
        }
    }
}

#[test]
fn a_device_is_written_without_force_and_a_full_disk_names_the_output() {
    hatf()
        .args(["encode", "-o", "/dev/null"])
        .write_stdin(sample())
        .assert()
        .success();
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("skipping the full-disk half: no /dev/full");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.mtrace");
    std::fs::write(&input, sample()).unwrap();
    hatf()
        .arg("encode")
        .arg(&input)
        .args(["-o", "/dev/full"])
        .assert()
        .code(1)
        .stderr(contains(
            "hatf: error: /dev/full: cannot write: No space left on device",
        ));
    let encoded = dir.path().join("in.hatf");
    hatf()
        .arg("encode")
        .arg(&input)
        .arg("-o")
        .arg(&encoded)
        .assert()
        .success();
    hatf()
        .arg("decode")
        .arg(&encoded)
        .args(["-o", "/dev/full"])
        .assert()
        .code(1)
        .stderr(contains(
            "hatf: error: /dev/full: cannot write: No space left on device",
        ));
}

#[test]
fn verbose_runs_print_sizes_ratio_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.mtrace");
    let text = sample();
    std::fs::write(&input, &text).unwrap();
    let out = dir.path().join("in.hatf");
    let run = hatf()
        .args(["encode", "-v", "--level", "1"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    let size = std::fs::metadata(&out).unwrap().len();
    let expected = format!(
        "{}: {:.2}% ({} => {size} bytes, {}) in ",
        input.display(),
        size as f64 * 100.0 / text.len() as f64,
        text.len(),
        out.display()
    );
    assert!(err.contains(&expected), "{expected:?} not in {err}");
    let run = hatf()
        .args(["decode", "-v"])
        .arg(&out)
        .args(["-o", "-"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    let expected = format!(
        ": x{:.2} ({size} => {} bytes, <stdout>) in ",
        text.len() as f64 / size as f64,
        text.len()
    );
    assert!(err.contains(&expected), "{expected:?} not in {err}");
}

#[test]
fn a_range_past_the_end_gives_the_true_record_count() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.mtrace");
    std::fs::write(&input, sample()).unwrap();
    let out = dir.path().join("in.hatf");
    hatf()
        .args(["encode", "--level", "1"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    // The count the decoder reports for the whole trace.
    let run = hatf().args(["decode", "-v"]).arg(&out).assert().success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    let count: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("hatf: ")?.strip_suffix(" records decoded"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no record count in {err}"));
    let start = count * 2;
    hatf()
        .arg("decode")
        .arg(&out)
        .arg("--records")
        .arg(format!("{start}.."))
        .assert()
        .code(1)
        .stderr(contains(format!(
            "the trace has no record {start}: it holds {count} records"
        )));
}

#[test]
fn perl_hash_past_its_end_says_it_holds_1241412_records() {
    let Some(trace) = support::corpus("malloc/glibc-mtrace/perl-hash.mtrace.zst") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("perl.hatf");
    // The zstd-compressed log is read as it is.
    hatf()
        .args(["encode", "--level", "1"])
        .arg(&trace)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    hatf()
        .args(["decode", "--records", "2000000.."])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(contains(
            "the trace has no record 2000000: it holds 1241412 records",
        ));
}
