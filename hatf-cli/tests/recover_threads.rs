//! `hatf recover` keeps the index's per-block thread lists: carried from the damaged file's
//! index when that is intact, listed again from the records when it is lost; `hatf inspect`
//! shows a JVM trace's lists.

use std::path::Path;

mod support;
use support::hatf;

/// Block offsets and thread lists from the file's index.
fn index(file: &Path) -> (Vec<u64>, Vec<Vec<u64>>) {
    let mut f = std::fs::File::open(file).unwrap();
    let (entries, lists) = metatf::container::read_index_threads(&mut f).unwrap();
    (
        entries.iter().map(|e| e.offset).collect(),
        lists.expect("the index lists threads"),
    )
}

/// Recovers `damaged` and returns the recovered file's thread lists and the command's stderr.
fn recover(dir: &Path, damaged: &[u8]) -> (Vec<Vec<u64>>, String) {
    let input = dir.join("damaged.hatf");
    let output = dir.join("recovered.hatf");
    std::fs::write(&input, damaged).unwrap();
    let out = hatf()
        .arg("recover")
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .arg("-f")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    hatf().arg("verify").arg(&output).assert().success();
    (index(&output).1, stderr)
}

#[test]
fn recover_keeps_the_thread_lists() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, file)) = support::multi_block_et3(dir.path()) else {
        return;
    };
    let bytes = std::fs::read(&file).unwrap();
    let (offsets, lists) = index(&file);
    assert_eq!(offsets.len(), 3);
    assert!(lists.iter().all(|l| !l.is_empty()));

    // Cut inside block 2: the index is gone, so the lists are made again from the records.
    let cut = &bytes[..offsets[2] as usize + 100];
    let (got, stderr) = recover(dir.path(), cut);
    assert_eq!(got, lists[..2]);
    assert!(stderr.contains("listed again from the records"), "{stderr}");

    // A damaged byte in block 1's data: the index is intact and matches the blocks, so its
    // lists are carried over for the block kept.
    let mut flipped = bytes.clone();
    flipped[offsets[1] as usize + 200] ^= 0x40;
    let (got, stderr) = recover(dir.path(), &flipped);
    assert_eq!(got, lists[..1]);
    assert!(stderr.contains("carried over"), "{stderr}");

    // An index that passes its checksum but lists the blocks at other offsets is not trusted.
    let mut lying = bytes.clone();
    let index_at = u64::from_le_bytes(bytes[bytes.len() - 16..][..8].try_into().unwrap()) as usize;
    // The first entry's offset delta (a one- or two-byte varint after marker and count).
    assert_eq!(&lying[index_at..index_at + 4], b"MTFT");
    lying[index_at + 5] ^= 1;
    let body_end = lying.len() - 16 - 4;
    let crc = crc32fast::hash(&lying[index_at..body_end]);
    lying[body_end..body_end + 4].copy_from_slice(&crc.to_le_bytes());
    let (got, stderr) = recover(dir.path(), &lying);
    assert_eq!(got, lists);
    assert!(stderr.contains("listed again from the records"), "{stderr}");
}

#[test]
fn inspect_shows_a_jvm_traces_threads() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("trace");
    std::fs::write(
        &input,
        "VS:1\nTB:2:3\nMN:3:3:A:m:0\nTB:4:12\nMX:5:3:A:m\nOA:6:A:9\n",
    )
    .unwrap();
    let out = dir.path().join("trace.hatf");
    hatf()
        .args(["encode", "--from", "jvm"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let shown = hatf().arg("inspect").arg(&out).output().unwrap();
    assert!(shown.status.success());
    let text = String::from_utf8(shown.stdout).unwrap();
    assert!(text.contains("threads: 3, 12"), "{text}");
}
