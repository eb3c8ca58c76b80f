//! Issue #8's memory bound on large inputs, at the default settings (all cores). Ignored by
//! default: they write and encode gigabytes. Run one with
//! `cargo test --release -p hatf-cli --test large_input -- --ignored --nocapture NAME`; each
//! prints its peak memory (from `/usr/bin/time -f %M`) so the figures are reproducible.
//!
//! - `memory_stays_bounded_as_traces_grow`: synthetic glibc mtrace logs of 100 MB and 400 MB
//!   (files), encoded and decoded; memory must stay under 100 MB and not grow with the trace.
//! - `a_4_gb_log_streams_through_pipes`: a 4 GB synthetic log generated into `hatf encode`'s
//!   standard input and checked against `hatf decode`'s standard output, never on disk.
//! - `corpus_et_trace_stays_bounded`: the javac-tests Elephant Tracks trace of the corpus
//!   (76 MB of text, `zstd` must be installed), encoded from a pipe and decoded.
//! - `corpus_archives_stay_bounded`: the corpus archives whose deflate stream is rebuilt
//!   (malloc-bench `vim.trace.gz`, 40 MB of protobuf, and Android `surfaceflinger.zip`, 59 MB
//!   of text), encoded and decoded back to the same bytes.

use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// A synthetic mtrace log: mallocs, frees and reallocs from a handful of call sites, never more
/// than 10,000 blocks live (like a long-running program at steady state).
struct Log {
    state: u64,
    live: Vec<u64>,
    top: u64,
    started: bool,
}

impl Log {
    fn new() -> Log {
        Log {
            state: 0x2545_f491_4f6c_dd1d,
            live: Vec::new(),
            top: 0x55d0_c0a0_0000,
            started: false,
        }
    }

    /// Appends the next line to `out`.
    fn line(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            out.extend_from_slice(b"= Start\n");
            return;
        }
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let r = self.state;
        let site = 0x401000 + (r % 23) * 0x30;
        if self.live.len() < 10_000 && !(r >> 8).is_multiple_of(3) || self.live.is_empty() {
            let size = 16 + (r >> 16) % 200;
            self.top += (size + 15) & !15;
            self.live.push(self.top);
            let top = self.top;
            out.extend_from_slice(
                format!("@ ./server:[{site:#x}] + {top:#x} {size:#x}\n").as_bytes(),
            );
        } else {
            let k = ((r >> 24) as usize) % self.live.len();
            let addr = self.live.swap_remove(k);
            out.extend_from_slice(format!("@ ./server:[{site:#x}] - {addr:#x}\n").as_bytes());
        }
    }

    /// The next chunk of about `limit` bytes (whole lines).
    fn chunk(&mut self, limit: usize, out: &mut Vec<u8>) {
        out.clear();
        while out.len() < limit {
            self.line(out);
        }
    }
}

fn write_log(path: &Path, bytes: u64) {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let mut log = Log::new();
    let (mut written, mut buf) = (0u64, Vec::new());
    while written < bytes {
        log.chunk(1 << 20, &mut buf);
        out.write_all(&buf).unwrap();
        written += buf.len() as u64;
    }
    out.flush().unwrap();
}

fn have_time() -> bool {
    let there = Path::new("/usr/bin/time").exists();
    if !there {
        eprintln!("SKIP: /usr/bin/time is absent (apt-get install time)");
    }
    there
}

/// `hatf args` under `/usr/bin/time`, with standard streams as given.
fn timed(args: &[&str]) -> Command {
    let mut c = Command::new("/usr/bin/time");
    c.args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_hatf"))
        .args(args)
        .stderr(Stdio::piped());
    c
}

/// The peak resident set (KB) `/usr/bin/time` printed last on `stderr`.
fn peak(status: std::process::ExitStatus, stderr: &[u8], what: &str) -> u64 {
    let stderr = String::from_utf8_lossy(stderr);
    assert!(status.success(), "{what}: {stderr}");
    stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("{what}: no peak memory in {stderr}"))
}

fn peak_kb(args: &[&str]) -> u64 {
    let out = timed(args).output().unwrap();
    peak(out.status, &out.stderr, &format!("hatf {args:?}"))
}

fn same_file(a: &Path, b: &Path) -> bool {
    let (mut fa, mut fb) = (
        std::fs::File::open(a).unwrap(),
        std::fs::File::open(b).unwrap(),
    );
    same_stream(&mut fa, &mut fb)
}

fn same_stream(a: &mut dyn Read, b: &mut dyn Read) -> bool {
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = a.read(&mut ba).unwrap();
        let mut m = 0;
        while m < n {
            let k = b.read(&mut bb[m..n]).unwrap();
            if k == 0 {
                return false;
            }
            m += k;
        }
        if n == 0 {
            return b.read(&mut bb[..1]).unwrap() == 0;
        }
        if ba[..n] != bb[..n] {
            return false;
        }
    }
}

const LIMIT_KB: u64 = 100 << 10;

#[test]
#[ignore = "writes and encodes 100 MB and 400 MB logs"]
fn memory_stays_bounded_as_traces_grow() {
    if !have_time() {
        return;
    }
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
        let encode = peak_kb(&["encode", "-q", l, "-o", b]);
        let decode = peak_kb(&["decode", "-q", b, "-o", k]);
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
        assert!(encode < LIMIT_KB && decode < LIMIT_KB, "{peaks:?}");
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

#[test]
#[ignore = "generates, encodes and decodes a 4 GB log (several minutes)"]
fn a_4_gb_log_streams_through_pipes() {
    if !have_time() {
        return;
    }
    let total: u64 = 4 << 30;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("4g.hatf");
    let mut encode = timed(&["encode", "-q", "--from", "mtrace", "-o"])
        .arg(&bin)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = encode.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let (mut log, mut buf, mut sent) = (Log::new(), Vec::new(), 0u64);
        while sent < total {
            log.chunk(1 << 20, &mut buf);
            stdin.write_all(&buf).unwrap();
            sent += buf.len() as u64;
        }
        sent
    });
    let sent = feeder.join().unwrap();
    let out = encode.wait_with_output().unwrap();
    let encode_kb = peak(out.status, &out.stderr, "encode of 4 GB");

    let mut decode = timed(&["decode", "-q"])
        .arg(&bin)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = decode.stdout.take().unwrap();
    // The decoded text must be the generated log again, compared as it streams by.
    let (mut log, mut want, mut got, mut seen) = (Log::new(), Vec::new(), Vec::new(), 0u64);
    while seen < sent {
        log.chunk(1 << 20, &mut want);
        got.resize(want.len(), 0);
        stdout.read_exact(&mut got).unwrap();
        assert!(got == want, "decoded text differs near byte {seen}");
        seen += want.len() as u64;
    }
    assert_eq!(
        stdout.read(&mut [0u8; 1]).unwrap(),
        0,
        "decoded text is longer"
    );
    let out = decode.wait_with_output().unwrap();
    let decode_kb = peak(out.status, &out.stderr, "decode of 4 GB");
    eprintln!(
        "4 GB ({sent} bytes): {} bytes encoded; peak memory encode {encode_kb} KB, decode {decode_kb} KB",
        std::fs::metadata(&bin).unwrap().len()
    );
    assert!(encode_kb < LIMIT_KB && decode_kb < LIMIT_KB);
}

#[test]
#[ignore = "encodes a 76 MB Elephant Tracks trace"]
fn corpus_et_trace_stays_bounded() {
    let trace = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/et/et3-large/javac-tests/trace.zst"
    ));
    if !trace.is_file() || !have_time() {
        eprintln!("SKIP: {} is absent", trace.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (text, bin, back) = (
        dir.path().join("trace"),
        dir.path().join("trace.hatf"),
        dir.path().join("trace.back"),
    );
    let unzstd = Command::new("zstd")
        .args(["-dqc"])
        .arg(trace)
        .stdout(std::fs::File::create(&text).unwrap())
        .status();
    if !unzstd.is_ok_and(|s| s.success()) {
        eprintln!("SKIP: the zstd command is not available");
        return;
    }
    let mut encode = timed(&["encode", "-q", "--from", "et3", "-o"])
        .arg(&bin)
        .stdin(std::fs::File::open(&text).unwrap())
        .spawn()
        .unwrap();
    let encode_kb = {
        let mut err = Vec::new();
        encode.stderr.take().unwrap().read_to_end(&mut err).unwrap();
        peak(encode.wait().unwrap(), &err, "ET encode")
    };
    let decode_kb = peak_kb(&[
        "decode",
        "-q",
        bin.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
    ]);
    assert!(same_file(&text, &back), "the ET trace does not round-trip");
    eprintln!(
        "javac-tests ET trace: {} bytes encoded; peak memory encode {encode_kb} KB, decode {decode_kb} KB",
        std::fs::metadata(&bin).unwrap().len()
    );
    assert!(encode_kb < LIMIT_KB && decode_kb < LIMIT_KB);
}

#[test]
#[ignore = "encodes the largest corpus archives (about 20 s)"]
fn corpus_archives_stay_bounded() {
    if !have_time() {
        return;
    }
    let corpus = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/malloc"
    ));
    let dir = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for name in [
        "malloc-bench/traces/vim.trace.gz",
        "android/surfaceflinger.zip",
    ] {
        let archive = corpus.join(name);
        if !archive.is_file() {
            eprintln!("SKIP: {} is absent", archive.display());
            continue;
        }
        let (bin, back) = (dir.path().join("a.hatf"), dir.path().join("a.back"));
        let (a, b, k) = (
            archive.to_str().unwrap(),
            bin.to_str().unwrap(),
            back.to_str().unwrap(),
        );
        let encode = peak_kb(&["encode", "-q", "-f", a, "-o", b]);
        let decode = peak_kb(&["decode", "-q", "-f", b, "-o", k]);
        assert!(same_file(&archive, &back), "{name} does not round-trip");
        eprintln!(
            "{name}: {} bytes encoded; peak memory encode {encode} KB, decode {decode} KB",
            std::fs::metadata(&bin).unwrap().len()
        );
        peaks.push((name, encode, decode));
    }
    for &(name, encode, decode) in &peaks {
        assert!(
            encode < LIMIT_KB && decode < LIMIT_KB,
            "{name}: encode {encode} KB, decode {decode} KB (limit {LIMIT_KB} KB)"
        );
    }
}
