//! Files whose every checksum is right but whose claims are impossible: a block claiming more
//! records than its sections can hold (or fewer than they do), sections that expand far past
//! what the file justifies, and a DTD reference no shipped DTD answers. `verify` must reject
//! them, every reading command must stop without allocating for the claim, and `recover` must
//! fail when it keeps nothing.

use predicates::prelude::*;
use std::path::{Path, PathBuf};

mod support;
use support::hatf;

fn varint(v: u64, out: &mut Vec<u8>) {
    metatf::varint::put_u64(out, v);
}

fn read_varint(bytes: &[u8], at: &mut usize) -> u64 {
    metatf::varint::take(bytes, at).expect("a varint")
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// One section as framed in a block: number, width, codec, lengths, CRCs and stored bytes.
#[derive(Clone)]
struct Section {
    number: u8,
    width: u8,
    codec: u8,
    len: u64,
    stored_crc: u32,
    crc: u32,
    stored: Vec<u8>,
}

/// A one-block container taken apart: header bytes, record count, sections.
struct Parts {
    header: Vec<u8>,
    records: u64,
    sections: Vec<Section>,
}

fn take_apart(bytes: &[u8]) -> Parts {
    let mut at = 8;
    let body = read_varint(bytes, &mut at) as usize;
    let header_end = at + body + 4;
    assert_eq!(&bytes[header_end..header_end + 4], b"MTFB");
    let mut at = header_end + 4;
    let (_, _) = (read_varint(bytes, &mut at), read_varint(bytes, &mut at));
    let records = read_varint(bytes, &mut at);
    let n = read_varint(bytes, &mut at);
    let mut sections = Vec::new();
    for _ in 0..n {
        let (number, width, codec) = (bytes[at], bytes[at + 1], bytes[at + 2]);
        at += 3;
        let len = read_varint(bytes, &mut at);
        let (stored_len, stored_crc) = if codec == 0 {
            (len, 0)
        } else {
            let l = read_varint(bytes, &mut at);
            at += 4;
            (l, u32_at(bytes, at - 4))
        };
        let crc = u32_at(bytes, at);
        at += 4;
        sections.push(Section {
            number,
            width,
            codec,
            len,
            stored_crc,
            crc,
            stored: vec![0; stored_len as usize],
        });
    }
    at += 4;
    for s in &mut sections {
        let n = s.stored.len();
        s.stored.copy_from_slice(&bytes[at..at + n]);
        at += n;
    }
    Parts {
        header: bytes[..header_end].to_vec(),
        records,
        sections,
    }
}

/// Frames `parts` again as a valid one-block container: every CRC, the index and the trailer
/// computed afresh.
fn put_together(parts: &Parts) -> Vec<u8> {
    let mut out = parts.header.clone();
    let at = out.len() as u64;
    let mut block = b"MTFB".to_vec();
    for v in [0, 0, parts.records, parts.sections.len() as u64] {
        varint(v, &mut block);
    }
    for s in &parts.sections {
        block.extend_from_slice(&[s.number, s.width, s.codec]);
        varint(s.len, &mut block);
        if s.codec != 0 {
            varint(s.stored.len() as u64, &mut block);
            block.extend_from_slice(&s.stored_crc.to_le_bytes());
        }
        block.extend_from_slice(&s.crc.to_le_bytes());
    }
    block.extend_from_slice(&crc32fast::hash(&block).to_le_bytes());
    for s in &parts.sections {
        block.extend_from_slice(&s.stored);
    }
    out.extend_from_slice(&block);
    let index_at = out.len() as u64;
    let mut index = b"MTFI".to_vec();
    for v in [1, at, parts.records] {
        varint(v, &mut index);
    }
    index.extend_from_slice(&crc32fast::hash(&index).to_le_bytes());
    out.extend_from_slice(&index);
    let mut trailer = index_at.to_le_bytes().to_vec();
    trailer.extend_from_slice(&crc32fast::hash(&trailer).to_le_bytes());
    trailer.extend_from_slice(b"MTFE");
    out.extend_from_slice(&trailer);
    out
}

/// The header of `parts` with its DTD reference (the body's last varint and CRC) replaced.
fn with_reference(parts: &Parts, length: u64, crc: u32) -> Vec<u8> {
    let bytes = &parts.header;
    let mut at = 8;
    let body_len = read_varint(bytes, &mut at) as usize;
    let body = &bytes[at..at + body_len];
    // The shipped mtrace DTD is over 127 and under 16,384 bytes: a two-byte varint.
    let mut new_body = body[..body.len() - 6].to_vec();
    varint(length, &mut new_body);
    new_body.extend_from_slice(&crc.to_le_bytes());
    let mut out = bytes[..8].to_vec();
    varint(new_body.len() as u64, &mut out);
    out.extend_from_slice(&new_body);
    out.extend_from_slice(&crc32fast::hash(&out).to_le_bytes());
    out
}

/// The sample mtrace trace, encoded as one block.
fn sample(dir: &Path) -> (PathBuf, Parts) {
    let text = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../samples/sample.mtrace"
    ));
    let out = dir.join("sample.hatf");
    hatf()
        .arg("encode")
        .arg(&text)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let bytes = std::fs::read(&out).unwrap();
    let parts = take_apart(&bytes);
    assert_eq!(
        put_together(&parts),
        bytes,
        "the test framing is the writer's"
    );
    (out, parts)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `verify` fails naming `why`, and `recover` fails without writing a file.
fn rejected(dir: &Path, file: &Path, why: &str) {
    hatf()
        .arg("verify")
        .arg(file)
        .assert()
        .failure()
        .stderr(predicate::str::contains(why));
    let out = dir.join("recovered.hatf");
    hatf()
        .arg("recover")
        .arg(file)
        .arg("-o")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("nothing to recover"));
    assert!(!out.exists(), "recover wrote a file of nothing");
}

#[test]
fn the_intact_sample_verifies_with_every_record_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = sample(dir.path());
    hatf().arg("verify").arg(&file).assert().success().stdout(
        predicate::str::contains("40000 records")
            .and(predicate::str::contains("every record decoded")),
    );
}

#[test]
fn a_block_claiming_more_records_than_its_bytes_hold_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut parts) = sample(dir.path());
    parts.records = 1 << 60;
    let file = write(dir.path(), "many.hatf", &put_together(&parts));
    rejected(dir.path(), &file, "claims 1152921504606846976 records");
    for command in ["inspect", "decode", "stats"] {
        hatf()
            .arg(command)
            .arg(&file)
            .assert()
            .failure()
            .stderr(predicate::str::contains("room for at most"));
    }
}

#[test]
fn a_block_claiming_fewer_records_than_it_holds_fails_verification() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut parts) = sample(dir.path());
    parts.records = 0;
    let file = write(dir.path(), "none.hatf", &put_together(&parts));
    hatf()
        .arg("verify")
        .arg(&file)
        .assert()
        .failure()
        .stderr(predicate::str::contains("do not decode"));
    let out = dir.path().join("recovered.hatf");
    hatf()
        .arg("recover")
        .arg(&file)
        .arg("-o")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("nothing to recover"));
    assert!(!out.exists(), "recover wrote a file of no records");
}

#[test]
fn a_dtd_reference_no_shipped_dtd_answers_fails_verification() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut parts) = sample(dir.path());
    let original = parts.header.clone();
    parts.header = with_reference(&parts, 1343, 0x1234_5678);
    let file = write(dir.path(), "crc.hatf", &put_together(&parts));
    hatf()
        .arg("verify")
        .arg(&file)
        .assert()
        .failure()
        .stderr(predicate::str::contains("no DTD this hatf ships"));
    parts.header = original;
    parts.header = with_reference(&parts, 1 << 60, 0x1234_5678);
    let file = write(dir.path(), "long.hatf", &put_together(&parts));
    for command in ["verify", "inspect", "decode"] {
        hatf()
            .arg(command)
            .arg(&file)
            .assert()
            .failure()
            .stderr(predicate::str::contains(
                "referenced DTD of 1152921504606846976 bytes",
            ));
    }
}

#[test]
fn sections_expanding_past_the_budget_are_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut parts) = sample(dir.path());
    // Four sections of 24 MiB of zeros each (a few kilobytes stored): 96 MiB for a file of
    // 20 KB, over its budget of 16 MiB + 1 KiB per byte.
    let zeros = vec![0u8; 24 << 20];
    let frame = metatf::container::zstd_compress(3, &zeros).unwrap();
    let crc = crc32fast::hash(&zeros);
    for s in parts.sections.iter_mut().take(4) {
        *s = Section {
            number: s.number,
            width: 1,
            codec: 2,
            len: zeros.len() as u64,
            stored_crc: crc32fast::hash(&frame),
            crc,
            stored: frame.clone(),
        };
    }
    let file = write(dir.path(), "bomb.hatf", &put_together(&parts));
    assert!(std::fs::metadata(&file).unwrap().len() < 40_000);
    rejected(dir.path(), &file, "budget");
    for command in ["inspect", "decode", "stats"] {
        hatf()
            .arg(command)
            .arg(&file)
            .assert()
            .failure()
            .stderr(predicate::str::contains("exceeds the limit"));
    }
}
