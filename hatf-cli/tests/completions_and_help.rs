//! Shell completions, the manual page, and the names `--from` and `--encoding` accept shown in
//! `--help`.

mod support;

use predicates::str::contains;
use support::hatf;

#[test]
fn completion_scripts_know_the_subcommands_and_options() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef hatf"),
        ("fish", "complete -c hatf"),
    ] {
        hatf()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(contains(marker))
            .stdout(contains("encode"))
            .stdout(contains("--from"))
            .stdout(contains("completions"));
    }
    hatf().args(["completions", "no-shell"]).assert().code(2);
}

#[test]
fn the_manual_page_is_roff_with_every_subcommand() {
    let page = hatf()
        .arg("man")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let page = String::from_utf8(page).unwrap();
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH hatf"),
        "{page}"
    );
    for sub in ["encode", "decode", "stats", "compare", "completions"] {
        assert!(page.contains(sub), "no {sub} in the page");
    }
    let dir = tempfile::tempdir().unwrap();
    hatf()
        .args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    let encode = std::fs::read_to_string(dir.path().join("hatf-encode.1")).unwrap();
    assert!(encode.contains(".TH hatf-encode"), "{encode}");
    assert!(
        encode.contains("mtrace"),
        "the possible formats are missing"
    );
}

#[test]
fn help_lists_the_formats_and_encodings() {
    hatf()
        .args(["encode", "--help"])
        .assert()
        .success()
        .stdout(contains("possible values"))
        .stdout(contains("et2"))
        .stdout(contains("malloc-bench"))
        .stdout(contains("hatf10-dtd"));
    hatf()
        .args(["stats", "--help"])
        .assert()
        .success()
        .stdout(contains("memory-replay"));
}
