//! Temporary files are removed when a signal stops a run, and by the next run when a run was
//! killed outright; a file that appears at the output path during a run is not replaced.

#![cfg(unix)]

mod support;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;
use support::{bin, hatf, partials, sample};

/// Starts `hatf encode --from mtrace -o OUT [extra]`, feeds it half the sample and keeps its
/// standard input open, and waits until its partial file exists.
fn start_encode(out: &Path, extra: &[&str]) -> (Child, ChildStdin) {
    let mut child = Command::new(bin())
        .args(["encode", "--from", "mtrace", "--level", "1", "-o"])
        .arg(out)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hatf starts");
    let text = sample();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&text[..text.len() / 2]).unwrap();
    stdin.flush().unwrap();
    let folder = out.parent().unwrap();
    for _ in 0..200 {
        if !partials(folder).is_empty() {
            return (child, stdin);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the encoder never opened its temporary output");
}

#[test]
fn sigint_and_sigterm_remove_the_partial_file_and_end_the_run_by_the_signal() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.hatf");
        let (child, stdin) = start_encode(&out, &[]);
        // SAFETY: sends a signal to the child this test started and has not yet waited for.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let status = child.wait_with_output().unwrap().status;
        drop(stdin);
        assert_eq!(status.signal(), Some(signal), "{status:?}");
        assert!(
            partials(dir.path()).is_empty(),
            "signal {signal} left {:?}",
            partials(dir.path())
        );
        assert!(!out.exists());
    }
}

#[test]
fn partials_of_killed_runs_are_removed_by_the_next_run_and_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.hatf");
    // A killed run: SIGKILL cannot be caught, so its partial file stays behind.
    let (mut child, stdin) = start_encode(&out, &[]);
    let killed = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
    let left = partials(dir.path());
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0].starts_with(&format!(".hatf-partial-{killed}-")),
        "{left:?}"
    );
    // A partial of a writer that is alive (this test) must stay.
    let live = format!(".hatf-partial-{}-keepme", std::process::id());
    std::fs::write(dir.path().join(&live), b"in progress").unwrap();
    hatf()
        .args(["encode", "-o"])
        .arg(&out)
        .write_stdin(sample())
        .assert()
        .success();
    assert_eq!(partials(dir.path()), vec![live]);
}

#[test]
fn a_file_created_at_the_output_during_the_run_is_kept_unless_forced() {
    for force in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.hatf");
        let extra: &[&str] = if force { &["-f"] } else { &[] };
        let (child, mut stdin) = start_encode(&out, extra);
        std::fs::write(&out, b"written by someone else").unwrap();
        let text = sample();
        stdin.write_all(&text[text.len() / 2..]).unwrap();
        drop(stdin);
        let done = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&done.stderr);
        let now = std::fs::read(&out).unwrap();
        if force {
            assert!(done.status.success(), "{err}");
            assert!(now.starts_with(b"\x7fMTF"), "-f did not replace the file");
        } else {
            assert_eq!(done.status.code(), Some(1), "{err}");
            assert!(err.contains("was created by something else"), "{err}");
            assert_eq!(now, b"written by someone else");
        }
        assert!(partials(dir.path()).is_empty());
    }
}
