//! `hatf verify` and `hatf recover` on damaged copies of a small multi-block trace.

use predicates::prelude::*;
use std::path::{Path, PathBuf};

mod support;
use support::hatf;

/// A universal trace of 3 blocks of 20 records each (plus the section record).
fn multi_block_trace(dir: &Path) -> PathBuf {
    let mut text = String::from("#block 0\nsection number=1\n");
    for block in 0..3 {
        if block > 0 {
            text.push_str(&format!("#block {block}\n"));
        }
        for i in 0..20 {
            let n = block * 20 + i;
            text.push_str(&format!(
                "alloc size={} address={} time=0 thread=0 heap=0 length=0 data=\"\"\n",
                16 + n % 5,
                4096 + 32 * n
            ));
        }
    }
    let input = dir.join("trace.txt");
    std::fs::write(&input, text).unwrap();
    let out = dir.join("trace.hatf");
    let dtd = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../dtds/hatf10.dtd"));
    hatf()
        .args(["encode", "--from", "text", "--compress", "none", "--dtd"])
        .arg(dtd)
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    out
}

/// The record lines of `hatf dump` (header and block lines left out).
fn records(file: &Path) -> Vec<String> {
    let out = support::output_of(&["dump"], file);
    String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[test]
fn an_intact_file_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let file = multi_block_trace(dir.path());
    hatf()
        .arg("verify")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("3 blocks, 61 records"));
}

#[test]
fn a_cut_file_fails_verification_and_recovers_to_a_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let file = multi_block_trace(dir.path());
    let bytes = std::fs::read(&file).unwrap();
    let all = records(&file);
    let cut = dir.path().join("cut.hatf");
    let recovered = dir.path().join("recovered.hatf");
    let inspection = hatf()
        .args(["inspect", "--json"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let inspection: serde_json::Value = serde_json::from_slice(&inspection).unwrap();
    let header_len = inspection["blocks"][0]["offset"].as_u64().unwrap() as usize;
    let mut recovered_sizes = std::collections::BTreeSet::new();
    // Every 5th length, and the last few bytes, where index and trailer live.
    let lengths = (0..bytes.len())
        .step_by(5)
        .chain(bytes.len() - 8..bytes.len());
    for len in lengths {
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let verify = hatf().arg("verify").arg(&cut).assert().code(1);
        let stderr = String::from_utf8_lossy(&verify.get_output().stderr).into_owned();
        assert!(
            stderr.contains("byte"),
            "cut at {len}: no byte offset in: {stderr}"
        );
        let recover = hatf()
            .arg("recover")
            .arg(&cut)
            .arg("-o")
            .arg(&recovered)
            .arg("-f")
            .assert();
        if len < header_len {
            // The header (which carries the DTD) is incomplete: nothing can be recovered, and
            // the command says so.
            recover.code(1);
            continue;
        }
        let recover = recover.get_output().clone();
        if !recover.status.success() {
            // Cut inside the first block: no record is kept, so the command fails, says why and
            // writes nothing (the cuts come in ascending order: none has recovered a file yet).
            let stderr = String::from_utf8_lossy(&recover.stderr);
            assert!(
                stderr.contains("nothing to recover"),
                "cut at {len}: {stderr}"
            );
            assert!(
                !recovered.exists(),
                "cut at {len}: a file of nothing was written"
            );
            recovered_sizes.insert(0);
            continue;
        }
        hatf().arg("verify").arg(&recovered).assert().success();
        let kept = records(&recovered);
        assert!(kept.len() <= all.len());
        assert_eq!(
            kept[..],
            all[..kept.len()],
            "cut at {len}: recovered records are not a prefix"
        );
        recovered_sizes.insert(kept.len());
    }
    // Cuts inside each of the three blocks keep 0 (a failure, no file), 21 and 41 records; a
    // cut in the index or trailer keeps all 61.
    assert_eq!(
        recovered_sizes.into_iter().collect::<Vec<_>>(),
        vec![0, 21, 41, 61]
    );
}

#[test]
fn a_flipped_byte_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let file = multi_block_trace(dir.path());
    let bytes = std::fs::read(&file).unwrap();
    let damaged = dir.path().join("damaged.hatf");
    for at in (0..bytes.len()).step_by(7) {
        let mut copy = bytes.clone();
        copy[at] ^= 0x20;
        std::fs::write(&damaged, &copy).unwrap();
        hatf().arg("verify").arg(&damaged).assert().code(1);
        // Decoding never prints records of a damaged file silently: dump fails too.
        hatf().arg("dump").arg(&damaged).assert().code(1);
    }
}
