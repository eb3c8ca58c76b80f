//! `hatf decode --records A..B` on multi-block Elephant Tracks, mtrace and JVM files: only the
//! asked lines come out, across block boundaries and with either end left out; an empty range,
//! a range past the end and one that runs past it are treated alike in every format; a damaged
//! index is rebuilt and the user told.

use std::path::{Path, PathBuf};

mod support;
use support::hatf;

fn varint(bytes: &[u8], at: &mut usize) -> u64 {
    metatf::varint::take(bytes, at).expect("a varint")
}

fn put_varint(out: &mut Vec<u8>, v: u64) {
    metatf::varint::put_u64(out, v);
}

/// Rewrites the index of a three-block container (docs/FORMAT.md §5: marker, count, then
/// offset delta and record count per block, thread lists for marker `MTFT`, CRC-32) with the
/// record counts of blocks 0 and 2 swapped and a valid checksum; the trailer still points at it.
fn swap_index_counts(file: &[u8]) -> Vec<u8> {
    let trailer = &file[file.len() - 16..];
    let index_at = u64::from_le_bytes(trailer[..8].try_into().unwrap()) as usize;
    let index = &file[index_at..file.len() - 16];
    assert!(&index[..4] == b"MTFI" || &index[..4] == b"MTFT");
    let mut at = 4;
    let n = varint(index, &mut at);
    assert_eq!(n, 3);
    let mut entries: Vec<(u64, u64)> = (0..n)
        .map(|_| (varint(index, &mut at), varint(index, &mut at)))
        .collect();
    assert_ne!(entries[0].1, entries[2].1);
    let (c0, c2) = (entries[0].1, entries[2].1);
    entries[0].1 = c2;
    entries[2].1 = c0;
    let mut rewritten = index[..4].to_vec();
    put_varint(&mut rewritten, n);
    for (delta, count) in entries {
        put_varint(&mut rewritten, delta);
        put_varint(&mut rewritten, count);
    }
    // The thread lists, if any, are kept as they are.
    rewritten.extend_from_slice(&index[at..index.len() - 4]);
    let crc = crc32fast::hash(&rewritten);
    rewritten.extend_from_slice(&crc.to_le_bytes());
    let mut out = file[..index_at].to_vec();
    out.extend_from_slice(&rewritten);
    out.extend_from_slice(trailer);
    out
}

fn newlines(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    text.iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i)
}

/// Lines of `text`, the last counted even without its line end.
fn count_lines(text: &[u8]) -> usize {
    newlines(text).count() + usize::from(!text.is_empty() && !text.ends_with(b"\n"))
}

fn lines(text: &[u8], first: usize, end: usize) -> Vec<u8> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(newlines(text).map(|p| p + 1))
        .collect();
    let at = |i: usize| starts.get(i).copied().unwrap_or(text.len()).min(text.len());
    text[at(first)..at(end)].to_vec()
}

/// Every kind of range over `text` (encoded in `file`, blocks of `b` records), then a damaged
/// trailer and an index that lies, each rebuilt by scanning with a note.
fn ranges_come_out_exactly(dir: &Path, text: &[u8], file: &Path, b: usize) {
    let total = count_lines(text);
    for (range, first, end) in [
        ("0..10".to_string(), 0, 10),
        (format!("{}..{}", b - 3, b + 4), b - 3, b + 4),
        (format!("{}..", total - 5), total - 5, total),
        ("..7".to_string(), 0, 7),
        (format!("{}..{}", b + 100, b + 100), b + 100, b + 100),
        (
            format!("{}..{}", 2 * b - 2, 2 * b + 50),
            2 * b - 2,
            2 * b + 50,
        ),
    ] {
        let out = hatf()
            .args(["decode", "--records", &range])
            .arg(file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{range}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout == lines(text, first, end),
            "{range}: wrong lines"
        );
    }

    range_edges(file, text);

    // A damaged trailer: the index is rebuilt by scanning, the user is told, the lines are right.
    let mut bytes = std::fs::read(file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    let damaged = dir.join("damaged.hatf");
    std::fs::write(&damaged, &bytes).unwrap();
    let range = format!("{}..{}", 2 * b - 1, 2 * b + 1);
    let out = support::succeeded(
        hatf()
            .args(["decode", "--records", &range])
            .arg(&damaged)
            .output(),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("rebuilt it by scanning"));
    assert!(out.stdout == lines(text, 2 * b - 1, 2 * b + 1));

    // An index that passes its checksum but lies (record counts of blocks 0 and 2 swapped):
    // reading block 1 at the record number it claims fails, the index is rebuilt by scanning,
    // and the lines are still right.
    let lying = dir.join("lying.hatf");
    std::fs::write(&lying, swap_index_counts(&std::fs::read(file).unwrap())).unwrap();
    let range = format!("{}..{}", b + 10, b + 20);
    let out = support::succeeded(
        hatf()
            .args(["decode", "--records", &range])
            .arg(&lying)
            .output(),
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("inconsistent"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == lines(text, b + 10, b + 20));

    // Standard input cannot be seeked.
    hatf()
        .args(["decode", "--records", "1..2"])
        .pipe_stdin(file)
        .unwrap()
        .assert()
        .code(2);
}

/// The edges, alike in every format: an empty range writes nothing and says so; a range that
/// starts at or after the end is an error that leaves no output; one that runs past the end
/// is cut there, with a note; one that ends before it starts is a usage error.
fn range_edges(file: &Path, text: &[u8]) {
    let total = count_lines(text);
    let run = |range: &str| {
        hatf()
            .args(["decode", "--records", range])
            .arg(file)
            .output()
            .unwrap()
    };
    let stderr = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();

    let out = run("100..100");
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("100..100 is empty"),
        "{}",
        stderr(&out)
    );

    let range = format!("{}..{}", total - 5, total + 5);
    let out = run(&range);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout == lines(text, total - 5, total));
    let cut = format!(
        "the trace holds {total} records, so records {}..{total}",
        total - 5
    );
    assert!(stderr(&out).contains(&cut), "{}", stderr(&out));

    for (range, first) in [
        (format!("{}..{}", total + 10, total + 20), total + 10),
        (format!("{total}.."), total),
    ] {
        let out = run(&range);
        assert_eq!(out.status.code(), Some(1), "{range}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
        let why = format!("--records {range}: the trace has no record {first}");
        assert!(stderr(&out).contains(&why), "{range}: {}", stderr(&out));
    }

    let out = run("9..3");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("ends before it starts"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn record_ranges_come_out_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let Some((text, file)) = support::multi_block_et3(dir.path()) else {
        return;
    };
    ranges_come_out_exactly(dir.path(), &text, &file, 1 << 19);
}

/// An mtrace log of 2.3 blocks (a block holds 2^20 lines) whose blocks free blocks allocated
/// in earlier ones, so that each block's fresh model meets frees of blocks it never saw.
fn mtrace_log() -> Vec<u8> {
    let mut text = b"= Start\n".to_vec();
    let mut live: Vec<u64> = Vec::new();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut top = 0x5555_0000_0000u64;
    let lines = (1usize << 20) * 23 / 10;
    for _ in 1..lines {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Mostly allocations for the first two blocks, then mostly frees.
        let grow = if text.len() < 60 << 20 { 3 } else { 1 };
        if live.is_empty() || state % 4 < grow {
            let size = 8 + state % 300;
            top += (size + 15) & !15;
            live.push(top);
            let site = state >> 60;
            text.extend_from_slice(
                format!("@ ./a.out:[0x{site:x}] + {top:#x} {size:#x}\n").as_bytes(),
            );
        } else {
            let k = (state >> 8) as usize % live.len();
            let addr = live.swap_remove(k);
            text.extend_from_slice(format!("- {addr:#x}\n").as_bytes());
        }
    }
    text
}

/// Encodes `text` as `format` (at level 1, for speed) in `dir`, checks that the whole file
/// decodes back to it, and returns the file.
fn encode_checked(dir: &Path, text: &[u8], format: &str) -> PathBuf {
    let input = dir.join("trace.txt");
    std::fs::write(&input, text).unwrap();
    let file = dir.join("trace.hatf");
    hatf()
        .args(["encode", "--from", format, "--level", "1"])
        .arg(&input)
        .arg("-o")
        .arg(&file)
        .assert()
        .success();
    let back = hatf().arg("decode").arg(&file).output().unwrap();
    assert!(back.status.success());
    assert!(
        back.stdout == text,
        "{format}: the whole trace does not come back"
    );
    file
}

#[test]
fn mtrace_record_ranges_come_out_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let text = mtrace_log();
    let file = encode_checked(dir.path(), &text, "mtrace");
    ranges_come_out_exactly(dir.path(), &text, &file, 1 << 20);
}

#[test]
fn malloc_bench_records_are_slices_of_the_protobuf() {
    let dir = tempfile::tempdir().unwrap();
    let trace = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/malloc/malloc-bench/traces/server.trace.gz"
    ));
    if !trace.is_file() {
        eprintln!("SKIP: {} is absent", trace.display());
        return;
    }
    let out = dir.path().join("s.hatf");
    hatf()
        .args(["encode", "--level", "1"])
        .arg(&trace)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let records = |range: &str| {
        let result = hatf()
            .args(["decode", "--records", range])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            result.status.success(),
            "{range}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
        result.stdout
    };
    // The whole protobuf is the first five records' fields followed by the rest's.
    let (all, head, rest) = (records(".."), records("0..5"), records("5.."));
    assert!(!head.is_empty() && head.len() < all.len());
    assert!([head, rest].concat() == all);
    // Each record of a Tracefile is one top-level field: `lines` (key 0x0a) or field 2.
    assert!(all[0] == 0x0a);
    hatf()
        .args(["decode", "--records", "9..3"])
        .arg(&out)
        .assert()
        .code(2);
}

/// A JVM trace (TraceVis `trace`) of 2.3 blocks (a block holds 2^20 lines): calls nested on
/// three threads, objects allocated and freed, often in a later block, so that each block's
/// fresh model meets threads, methods and objects it never saw; CRLF line ends now and then,
/// a line kept verbatim (`+8`), and no line end on the last line.
fn jvm_trace() -> Vec<u8> {
    let mut text = b"VS:1000\nVI:1001\n".to_vec();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut time = 1002u64;
    let mut live: Vec<(u64, u64)> = Vec::new();
    let mut stacks: [Vec<(u64, u64)>; 3] = Default::default();
    let mut thread = 0usize;
    let methods = ["run", "get", "put", "hashCode", "<init>"];
    let lines = (1usize << 20) * 23 / 10;
    for i in 2..lines {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        time += state % 3;
        if state.is_multiple_of(97) {
            thread = (state >> 8) as usize % 3;
        }
        let tid = 11 + 7 * thread as u64;
        let class = (state >> 16) % 40;
        let pick = (state >> 32) % 10;
        let line = if i == 5000 {
            "VS:+8".to_string()
        } else if pick < 3 || (stacks[thread].is_empty() && pick < 5) {
            let m = (state >> 40) % 5;
            let recv = live.last().map_or(0, |&(id, _)| id);
            stacks[thread].push((class, m));
            format!(
                "MN:{time}:{tid}:pkg/C{class}:{}:{recv}",
                methods[m as usize]
            )
        } else if pick < 6 {
            match stacks[thread].pop() {
                Some((c, m)) => format!("MX:{time}:{tid}:pkg/C{c}:{}", methods[m as usize]),
                None => format!("TB:{time}:{tid}"),
            }
        } else if pick < 8 || live.is_empty() {
            let id = 1 + (state >> 33) % 0x7fff_fffe;
            live.push((id, class));
            format!("OA:{time}:pkg/C{class}:{id}")
        } else {
            let (id, c) = live.swap_remove((state >> 24) as usize % live.len());
            format!("OF:{time}:pkg/C{c}:{id}")
        };
        text.extend_from_slice(line.as_bytes());
        if i + 1 < lines {
            text.extend_from_slice(if state.is_multiple_of(11) {
                b"\r\n"
            } else {
                b"\n"
            });
        }
    }
    text
}

#[test]
fn jvm_record_ranges_come_out_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let text = jvm_trace();
    let file = encode_checked(dir.path(), &text, "jvm");
    ranges_come_out_exactly(dir.path(), &text, &file, 1 << 20);
}
