//! Issue #8's memory bound on large inputs (ignored by default: it writes and encodes
//! gigabytes). Run: `cargo test --release -p hatf-cli --test large_input -- --ignored --nocapture`.
//!
//! A synthetic glibc mtrace log with a bounded live heap is encoded and decoded at two sizes;
//! peak memory (from `/usr/bin/time -f %M`) must stay under 100 MB and must not grow with the
//! trace, and decoding must give the input back.

use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::Command;

/// Writes an mtrace log of about `bytes` bytes: mallocs, frees and reallocs from a handful of
/// call sites, never more than 10,000 blocks live (like a long-running program at steady state).
fn write_log(path: &Path, bytes: u64) {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "= Start").unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut live: Vec<u64> = Vec::new();
    let mut top = 0x55d0_c0a0_0000u64;
    let mut written = 0u64;
    while written < bytes {
        let r = next();
        let site = 0x401000 + (r % 23) * 0x30;
        let line = if live.len() < 10_000 && (r >> 8) % 3 != 0 || live.is_empty() {
            let size = 16 + (r >> 16) % 200;
            top += (size + 15) & !15;
            live.push(top);
            format!("@ ./server:[{site:#x}] + {top:#x} {size:#x}\n")
        } else {
            let k = ((r >> 24) as usize) % live.len();
            let addr = live.swap_remove(k);
            format!("@ ./server:[{site:#x}] - {addr:#x}\n")
        };
        out.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
    }
    writeln!(out, "= End").unwrap();
    out.flush().unwrap();
}

/// Runs `hatf args` under `/usr/bin/time`; returns the peak resident set in kilobytes.
fn peak_kb(args: &[&str]) -> Option<u64> {
    if !Path::new("/usr/bin/time").exists() {
        eprintln!("SKIP: /usr/bin/time is absent (apt-get install time)");
        return None;
    }
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_hatf"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "hatf {args:?}: {stderr}");
    stderr.lines().last()?.trim().parse().ok()
}

fn same_file(a: &Path, b: &Path) -> bool {
    let (mut fa, mut fb) = (
        std::fs::File::open(a).unwrap(),
        std::fs::File::open(b).unwrap(),
    );
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut ba).unwrap();
        let mut m = 0;
        while m < n {
            let k = fb.read(&mut bb[m..n]).unwrap();
            if k == 0 {
                return false;
            }
            m += k;
        }
        if n == 0 {
            return fb.read(&mut bb[..1]).unwrap() == 0;
        }
        if ba[..n] != bb[..n] {
            return false;
        }
    }
}

#[test]
#[ignore = "writes and encodes 100 MB and 400 MB logs"]
fn memory_stays_bounded_as_traces_grow() {
    let dir = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for mb in [100u64, 400] {
        let log = dir.path().join(format!("{mb}.mtrace"));
        let bin = dir.path().join(format!("{mb}.hatf"));
        let back = dir.path().join(format!("{mb}.back"));
        write_log(&log, mb << 20);
        let (l, b, k) = (
            log.to_str().unwrap(),
            bin.to_str().unwrap(),
            back.to_str().unwrap(),
        );
        let Some(encode) = peak_kb(&["encode", "-q", l, "-o", b]) else {
            return;
        };
        let decode = peak_kb(&["decode", "-q", b, "-o", k]).unwrap();
        assert!(same_file(&log, &back), "{mb} MB log does not round-trip");
        eprintln!(
            "{mb} MB: {} bytes encoded; peak memory encode {encode} KB, decode {decode} KB",
            std::fs::metadata(&bin).unwrap().len()
        );
        for f in [&log, &bin, &back] {
            std::fs::remove_file(f).unwrap();
        }
        peaks.push((encode, decode));
    }
    for &(encode, decode) in &peaks {
        assert!(encode < 100 << 10 && decode < 100 << 10, "{peaks:?}");
    }
    // Four times the trace, about the same memory: nothing grows with the input.
    let (small, large) = (peaks[0], peaks[1]);
    assert!(
        large.0 < small.0 + (16 << 10),
        "encode memory grew: {peaks:?}"
    );
    assert!(
        large.1 < small.1 + (16 << 10),
        "decode memory grew: {peaks:?}"
    );
}
