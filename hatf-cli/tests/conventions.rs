//! The command's conventions, checked on the built binary: help texts, exit statuses, error
//! messages, refusal to overwrite, standard input and output, atomic output.

use predicates::prelude::*;
use std::fs;

mod support;
use support::hatf;

const SUBCOMMANDS: &[&[&str]] = &[
    &["encode"],
    &["decode"],
    &["inspect"],
    &["dump"],
    &["stats"],
    &["validate"],
    &["compare"],
    &["verify"],
    &["recover"],
    &["dtd", "check"],
    &["dtd", "fmt"],
    &["dtd", "compile"],
];

#[test]
fn top_level_help_lists_every_subcommand_with_examples() {
    let out = hatf()
        .arg("--help")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).expect("help is UTF-8");
    for name in [
        "encode", "decode", "inspect", "dump", "stats", "validate", "compare", "verify", "recover",
        "dtd",
    ] {
        assert!(
            text.contains(name),
            "--help does not mention `{name}`:\n{text}"
        );
    }
    assert!(
        text.contains("Examples:"),
        "--help has no examples:\n{text}"
    );
}

#[test]
fn every_subcommand_help_describes_it_with_an_example() {
    for words in SUBCOMMANDS {
        let out = hatf()
            .args(*words)
            .arg("--help")
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).expect("help is UTF-8");
        assert!(
            text.contains("Usage:"),
            "{words:?} --help has no usage line:\n{text}"
        );
        assert!(
            text.contains("Examples:\n  hatf "),
            "{words:?} --help has no example:\n{text}"
        );
    }
}

#[test]
fn unknown_flag_is_a_usage_error() {
    hatf()
        .args(["encode", "--no-such-flag"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--no-such-flag"));
}

#[test]
fn missing_subcommand_is_a_usage_error() {
    hatf().assert().code(2);
}

#[test]
fn missing_input_file_names_the_file_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.hatf");
    hatf()
        .args(["encode", "/no/such/trace.mtrace", "-o"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "hatf: error: /no/such/trace.mtrace: cannot open",
        ));
    assert!(!out.exists(), "a failed encode left {}", out.display());
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a failed encode left a temporary file"
    );
}

#[test]
fn existing_output_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.hatf");
    fs::write(&out, b"precious").unwrap();
    hatf()
        .args(["encode", "-", "-o"])
        .arg(&out)
        .write_stdin("= Start\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists; use -f/--force"));
    assert_eq!(fs::read(&out).unwrap(), b"precious");
}

#[test]
fn unknown_input_format_is_a_usage_error_naming_known_formats() {
    hatf()
        .args([
            "encode",
            "--from",
            "no-such-format",
            "-o",
            "/dev/null",
            "-f",
        ])
        .write_stdin("x\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid value 'no-such-format' for '--from <FORMAT>'",
        ))
        .stderr(predicate::str::contains("possible values: auto, mtrace"));
}

#[test]
fn undetectable_input_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.hatf");
    hatf()
        .args(["encode", "-o"])
        .arg(&out)
        .write_stdin("\u{1}\u{2}\u{3} not a trace of any kind\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "<stdin>: cannot tell what format this is",
        ));
    assert!(!out.exists());
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a failed encode left a temporary file"
    );
}

#[test]
fn unsupported_conversions_say_so_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("s.hatf");
    hatf()
        .args(["encode", "--level", "1"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../samples/sample.mtrace"
        ))
        .arg("-o")
        .arg(&bin)
        .assert()
        .success();
    hatf()
        .args(["decode", "--to", "et3"])
        .arg(&bin)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("is not supported"));
    // `--records` is built for the allocation formats too (their blocks each start a fresh
    // model); `records.rs` checks the formats it is not built for.
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../samples/sample.mtrace"
    ))
    .unwrap();
    let first_ten: Vec<u8> = sample
        .split_inclusive(|&b| b == b'\n')
        .take(10)
        .flatten()
        .copied()
        .collect();
    hatf()
        .args(["decode", "--records", "0..10"])
        .arg(&bin)
        .assert()
        .success()
        .stdout(predicate::eq(first_ten));
}
