//! `hatf decode --records A..B` on multi-block Elephant Tracks and mtrace files: only the asked
//! lines come out, across block boundaries and with either end left out; a damaged index is
//! rebuilt and the user told; formats without a block model say it is not built.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn hatf() -> Command {
    Command::cargo_bin("hatf").expect("the hatf binary is built for integration tests")
}

fn corpus_trace() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/et/et3-merlin/pipeline_results/LotsOfAllocs/trace"
    ));
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("SKIP: {} is absent", p.display());
        None
    }
}

/// A real ET3 trace repeated past two blocks (a block holds 2^19 lines), encoded.
fn multi_block(dir: &Path) -> Option<(Vec<u8>, PathBuf)> {
    let one = std::fs::read(corpus_trace()?).unwrap();
    let mut text = Vec::new();
    while text.iter().filter(|&&b| b == b'\n').count() < (1 << 19) * 5 / 2 {
        text.extend_from_slice(&one);
    }
    let input = dir.join("trace");
    std::fs::write(&input, &text).unwrap();
    let out = dir.join("trace.hatf");
    hatf()
        .args(["encode", "--from", "et3", "--level", "1"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    Some((text, out))
}

fn varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = bytes[*at];
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
    }
    value
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
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
    let total = newlines(text).count();
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
        (format!("{}..{}", total + 10, total + 20), total, total),
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

    // A damaged trailer: the index is rebuilt by scanning, the user is told, the lines are right.
    let mut bytes = std::fs::read(file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    let damaged = dir.join("damaged.hatf");
    std::fs::write(&damaged, &bytes).unwrap();
    let range = format!("{}..{}", 2 * b - 1, 2 * b + 1);
    let out = hatf()
        .args(["decode", "--records", &range])
        .arg(&damaged)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("rebuilt it by scanning"));
    assert!(out.stdout == lines(text, 2 * b - 1, 2 * b + 1));

    // An index that passes its checksum but lies (record counts of blocks 0 and 2 swapped):
    // reading block 1 at the record number it claims fails, the index is rebuilt by scanning,
    // and the lines are still right.
    let lying = dir.join("lying.hatf");
    std::fs::write(&lying, swap_index_counts(&std::fs::read(file).unwrap())).unwrap();
    let range = format!("{}..{}", b + 10, b + 20);
    let out = hatf()
        .args(["decode", "--records", &range])
        .arg(&lying)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
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

#[test]
fn record_ranges_come_out_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let Some((text, file)) = multi_block(dir.path()) else {
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

#[test]
fn mtrace_record_ranges_come_out_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let text = mtrace_log();
    let input = dir.path().join("log.mtrace");
    std::fs::write(&input, &text).unwrap();
    let file = dir.path().join("log.hatf");
    hatf()
        .args(["encode", "--level", "1"])
        .arg(&input)
        .arg("-o")
        .arg(&file)
        .assert()
        .success();
    let back = hatf().arg("decode").arg(&file).output().unwrap();
    assert!(back.status.success());
    assert!(back.stdout == text, "the whole log does not come back");
    ranges_come_out_exactly(dir.path(), &text, &file, 1 << 20);
}

#[test]
fn malloc_bench_records_are_slices_of_the_protobuf() {
    let dir = tempfile::tempdir().unwrap();
    let trace = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/malloc/malloc-bench/traces/server.trace.gz"
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

#[test]
fn formats_without_ranges_say_records_is_not_built_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("trace");
    std::fs::write(&input, "VS:1\nTB:2:3\nMN:3:3:A:m:0\n").unwrap();
    let out = dir.path().join("t.hatf");
    hatf()
        .args(["encode", "--from", "jvm"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let result = hatf()
        .args(["decode", "--records", "0..2"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&result.stderr).contains("not built"));
}
