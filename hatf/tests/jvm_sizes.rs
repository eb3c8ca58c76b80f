//! The modelled JVM trace is smaller than `xz -9` and `zstd -19 --long=27` of its text
//! (skipped with a message when those programs are absent).

mod jvm_support;

use std::io::Write;
use std::process::{Command, Stdio};

use hatf::format::{EncodeOptions, TraceFormat};
use hatf::internal::formats::jvm::{JVM, JVM_ZIP};
use jvm_support::{trace, zip_of, Ends};

fn compressed_len(program: &str, args: &[&str], input: &[u8]) -> Option<usize> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let data = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().ok()?;
    feeder.join().ok()?.ok()?;
    out.status.success().then_some(out.stdout.len())
}

#[test]
fn encoded_trace_is_smaller_than_xz_and_zstd_of_its_text() {
    let (text, _) = trace(31, 100_000, 4, Ends::Lf);
    let mut bin = Vec::new();
    JVM.encode(&mut text.as_bytes(), &mut bin, &EncodeOptions::default())
        .expect("encodes");
    let z = zip_of(&text, zip::CompressionMethod::Deflated, None);
    let mut zbin = Vec::new();
    JVM_ZIP
        .encode(&mut z.as_slice(), &mut zbin, &EncodeOptions::default())
        .expect("encodes");
    eprintln!(
        "jvm synthetic: text {} B, zip {} B, hatf jvm {} B, hatf jvm-zip {} B",
        text.len(),
        z.len(),
        bin.len(),
        zbin.len()
    );
    for (program, args) in [
        ("xz", &["-9", "-T1", "-c"][..]),
        ("zstd", &["-19", "--long=27", "-T1", "-c"][..]),
    ] {
        let Some(peer) = compressed_len(program, args, text.as_bytes()) else {
            eprintln!("skipping the {program} comparison: `{program}` is not available");
            continue;
        };
        eprintln!("  {program} {}: {peer} B", args.join(" "));
        assert!(
            bin.len() < peer,
            "hatf {} B is not smaller than {program} {peer} B",
            bin.len()
        );
        assert!(
            zbin.len() < peer,
            "hatf jvm-zip {} B is not smaller than {program} {peer} B",
            zbin.len()
        );
    }
}
