//! Text encoders parse in chunks on worker threads: the file must be the same byte for byte
//! whatever the thread count, across several blocks and chunks, with odd lines (CRLF, bad
//! lines, a last line without `\n`), and errors must name the right line. Also the default
//! compression policy: traces under a block of records are compressed at least as well as at
//! level 19, longer ones at the fast level.

use hatf::internal::formats::memory_replay::MemoryReplay;
use hatf::internal::formats::mtrace::Mtrace;
use hatf::{DecodeOptions, EncodeOptions, FormatError, TraceFormat};

/// Records per block of the mtrace and memory_replay encoders.
const BLOCK: usize = 1 << 20;

fn encode(
    f: &dyn TraceFormat,
    text: &[u8],
    threads: usize,
    level: Option<i32>,
    keep_bad_lines: bool,
) -> Result<Vec<u8>, FormatError> {
    let mut out = Vec::new();
    let options = EncodeOptions {
        input_name: "t".into(),
        threads,
        level,
        keep_bad_lines,
        ..EncodeOptions::default()
    };
    f.encode(&mut &text[..], &mut out, &options)?;
    Ok(out)
}

fn decode(f: &dyn TraceFormat, bin: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    f.decode(&mut &bin[..], &mut out, &DecodeOptions::default())
        .expect("decode");
    out
}

/// A small xorshift generator, so the traces are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// An mtrace log of `lines` lines: callers and none, frees of live and unknown blocks, CRLF
/// lines, non-canonical numbers, and (with `bad`) lines that do not parse; no final `\n`.
fn mtrace_text(lines: usize, bad: bool) -> Vec<u8> {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut live: Vec<u64> = Vec::new();
    let mut t = b"= Start\n".to_vec();
    for i in 1..lines - 1 {
        let x = r.next();
        let caller = match x % 4 {
            0 => String::new(),
            k => format!("@ f{k}:[0x{:x}] ", x % 7),
        };
        let line = if x.is_multiple_of(3) && !live.is_empty() {
            let a = live.swap_remove((x >> 8) as usize % live.len());
            format!("{caller}- {a:#x}")
        } else {
            let a = 0x1000 + (i as u64) * 32;
            live.push(a);
            format!("{caller}+ {a:#x} {:#x}", 1 + x % 100)
        };
        t.extend_from_slice(line.as_bytes());
        match i % 100_003 {
            7 => t.extend_from_slice(b"\r\n"),
            11 => t.extend_from_slice(b"\n+ 0X10 0x0020\n"),
            13 if bad => t.extend_from_slice(b"\nnot a line\n"),
            _ => t.push(b'\n'),
        }
    }
    t.extend_from_slice(b"= End");
    t
}

/// A memory_replay dump of `lines` lines over a few threads, with CRLF and (with `bad`)
/// unparsable lines; no final `\n`.
fn replay_text(lines: usize, bad: bool) -> Vec<u8> {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut t = Vec::new();
    for i in 0..lines - 1 {
        let x = r.next();
        let tid = 100 + x % 5;
        let a = 0xb600_0000 + (i as u64 % 5000) * 16;
        let line = match x % 4 {
            0 => format!("{tid}: free {a:#x}"),
            1 => format!("{tid}: calloc {a:#x} 2 {}", x % 64),
            _ => format!("{tid}: malloc {a:#x} {}", x % 300),
        };
        t.extend_from_slice(line.as_bytes());
        match i % 100_003 {
            7 => t.extend_from_slice(b"\r\n"),
            13 if bad => t.extend_from_slice(b"\nnot a line\n"),
            _ => t.push(b'\n'),
        }
    }
    t.extend_from_slice(b"7: thread_done 0x0");
    t
}

#[test]
fn output_is_the_same_for_any_thread_count_across_blocks() {
    for (f, text) in [
        (
            &Mtrace as &dyn TraceFormat,
            mtrace_text(BLOCK + 300_000, true),
        ),
        (&MemoryReplay, replay_text(BLOCK + 300_000, true)),
    ] {
        let one = encode(f, &text, 1, None, true).expect("encode");
        for threads in [2, 3] {
            let many = encode(f, &text, threads, None, true).expect("encode");
            assert!(one == many, "{}: {threads} threads differ", f.name());
        }
        assert!(decode(f, &one) == text, "{}: round trip differs", f.name());
    }
}

#[test]
fn bad_lines_are_reported_at_their_line_whatever_the_threads() {
    for (f, text) in [
        (&Mtrace as &dyn TraceFormat, mtrace_text(400_000, true)),
        (&MemoryReplay, replay_text(400_000, true)),
    ] {
        let first_bad = text
            .split(|&b| b == b'\n')
            .position(|l| l == b"not a line")
            .expect("a bad line")
            + 1;
        for threads in [1, 2] {
            let e = encode(f, &text, threads, None, false).expect_err("bad line");
            assert_eq!(e.position, format!("{first_bad}:1"), "{}", f.name());
            assert!(e.message.contains("`not a line`"), "{}", e.message);
            assert!(e.message.contains("--keep-bad-lines"), "{}", e.message);
        }
        // Far into the text (several chunks of parsing in): from just after the first bad
        // line, the next one is about 100,000 lines on.
        let mark = b"not a line\n";
        let start = text.windows(mark.len()).position(|w| w == mark).unwrap() + mark.len();
        let later = &text[start..];
        let first_bad = later
            .split(|&b| b == b'\n')
            .position(|l| l == b"not a line")
            .expect("a later bad line")
            + 1;
        assert!(first_bad > 100_000, "{first_bad}");
        for threads in [1, 2] {
            let e = encode(f, later, threads, None, false).expect_err("bad line");
            assert_eq!(e.position, format!("{first_bad}:1"), "{}", f.name());
        }
        let kept = encode(f, &text, 2, None, true).expect("kept");
        assert!(decode(f, &kept) == text);
    }
}

#[test]
fn traces_take_the_fast_level_and_tiny_blocks_the_context_mixer() {
    for (f, tiny, long) in [
        (
            &Mtrace as &dyn TraceFormat,
            mtrace_text(2_000, false),
            mtrace_text(BLOCK + 1000, false),
        ),
        (
            &MemoryReplay,
            replay_text(2_000, false),
            replay_text(BLOCK + 1000, false),
        ),
    ] {
        let fast = Some(hatf::internal::shared::container::blocks::FAST_ZSTD_LEVEL);
        for text in [&tiny, &long] {
            let default = encode(f, text, 2, None, false).unwrap();
            let at_fast_level = encode(f, text, 2, fast, false).unwrap();
            if text == &long {
                assert!(default == at_fast_level, "{}", f.name());
                // `--level 19` is still there for the smallest files.
                let best = encode(f, text, 2, Some(19), false).unwrap();
                assert!(best.len() < default.len(), "{}", f.name());
            } else {
                // A block whose streams are this small takes the context mixer.
                assert!(default.len() < at_fast_level.len(), "{}", f.name());
            }
            assert!(default == encode(f, text, 1, None, false).unwrap());
            assert!(decode(f, &default) == *text);
        }
    }
}
