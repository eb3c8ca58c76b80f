//! Standard input/output, atomic output and terminal protection, on the built binary with the
//! sample trace shipped in the repository.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

mod support;
use support::{hatf, sample};

#[test]
fn encode_and_decode_through_pipes_give_the_input_back() {
    let text = sample();
    let binary = hatf()
        .arg("encode")
        .write_stdin(text.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(
        binary.starts_with(b"\x7fMTF"),
        "encode to stdout did not write a container"
    );
    assert!(
        binary.len() < text.len() / 10,
        "binary {} bytes for {} bytes of text",
        binary.len(),
        text.len()
    );
    let back = hatf()
        .args(["decode", "-"])
        .write_stdin(binary)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(back == text, "decode through pipes changed the trace");
}

#[test]
fn files_written_with_force_replace_the_old_content_completely() {
    let dir = tempfile::tempdir().unwrap();
    let text_path = dir.path().join("in.mtrace");
    std::fs::write(&text_path, sample()).unwrap();
    let out = dir.path().join("out.hatf");
    std::fs::write(&out, vec![b'x'; 10_000_000]).unwrap();
    hatf()
        .arg("encode")
        .arg(&text_path)
        .arg("-o")
        .arg(&out)
        .arg("--force")
        .assert()
        .success();
    let decoded = dir.path().join("back.mtrace");
    hatf()
        .arg("decode")
        .arg(&out)
        .arg("-o")
        .arg(&decoded)
        .assert()
        .success();
    assert!(std::fs::read(&decoded).unwrap() == sample());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hatf-partial-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );
}

#[test]
fn a_killed_encode_leaves_no_file_under_the_final_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.hatf");
    let bin = assert_cmd::cargo::cargo_bin("hatf");
    let mut child = std::process::Command::new(bin)
        .args(["encode", "--from", "mtrace", "-o"])
        .arg(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hatf starts");
    // Feed part of the trace and keep the pipe open, so the encoder is mid-write when killed.
    let text = sample();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&text[..text.len() / 2]).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
    assert!(
        !out.exists(),
        "a killed encode left a file under the final name"
    );
}

#[test]
fn a_killed_decode_leaves_no_file_under_the_final_name() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("in.hatf");
    let text_path = dir.path().join("in.mtrace");
    std::fs::write(&text_path, sample()).unwrap();
    hatf()
        .arg("encode")
        .arg(&text_path)
        .arg("-o")
        .arg(&binary)
        .assert()
        .success();
    let out = dir.path().join("out.mtrace");
    let bin = assert_cmd::cargo::cargo_bin("hatf");
    let mut child = std::process::Command::new(bin)
        .args(["decode", "-o"])
        .arg(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hatf starts");
    // Feed half the file and keep the pipe open: the decoder has its output open and waits.
    let bytes = std::fs::read(&binary).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&bytes[..bytes.len() / 2]).unwrap();
    stdin.flush().unwrap();
    let partial_exists = || {
        std::fs::read_dir(dir.path()).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".hatf-partial-")
        })
    };
    for _ in 0..100 {
        if partial_exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        partial_exists(),
        "the decoder never opened its temporary output"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
    assert!(
        !out.exists(),
        "a killed decode left a file under the final name"
    );
}

#[test]
fn binary_output_is_refused_on_a_terminal() {
    // `script` gives the command a pseudo-terminal as standard output.
    let bin = support::bin();
    let sample_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/sample.mtrace");
    // Read from standard input, there is no file to name the output after.
    let command = format!("{} encode < {sample_path}; echo \"exit=$?\"", bin.display());
    let Some(shown) = support::in_terminal(&command, std::path::Path::new(".")) else {
        return;
    };
    assert!(
        shown.contains("refusing to write binary data to a terminal"),
        "{shown}"
    );
    assert!(shown.contains("exit=2"), "{shown}");
    assert!(
        !shown.contains("MTF"),
        "binary data reached the terminal: {shown}"
    );
}

/// Writing to an existing device (here `/dev/null`, with `--force`) writes through it; the
/// atomic temp-file-and-rename path would replace the device node with a regular file.
#[cfg(unix)]
#[test]
fn output_to_a_device_writes_through_it_and_leaves_it_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let null = std::path::Path::new("/dev/null");
    if !std::fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
        eprintln!("skipping: /dev/null is not a character device on this machine");
        return;
    }
    let text = "Alloc(5),\nFree(0),\n";
    for args in [
        vec!["encode", "--from", "wee-alloc", "-o", "/dev/null", "-f"],
        vec![
            "encode",
            "--from",
            "wee-alloc",
            "-o",
            "/dev/null",
            "-f",
            "-q",
        ],
    ] {
        hatf().args(&args).write_stdin(text).assert().success();
        let meta = std::fs::metadata(null).expect("/dev/null still exists");
        assert!(
            meta.file_type().is_char_device(),
            "`hatf {}` replaced /dev/null with a {:?}",
            args.join(" "),
            meta.file_type()
        );
    }
}
