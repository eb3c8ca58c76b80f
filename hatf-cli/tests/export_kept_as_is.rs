//! `hatf dump` and `hatf export` on a file that keeps its archive byte for byte (a
//! memory_replay zip whose entry is stored, not deflated): the records come out of the
//! archive's entry all the same.

mod support;

use support::{hatf, stdout_of};

/// A zip of one stored (method 0) entry `name` holding `data`.
fn stored_zip(name: &str, data: &[u8]) -> Vec<u8> {
    let sizes = |out: &mut Vec<u8>| {
        out.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    };
    // Version 2.0, no flags, method 0, no time.
    let mut z = b"PK\x03\x04\x14\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
    sizes(&mut z);
    z.extend_from_slice(&[0, 0]);
    z.extend_from_slice(name.as_bytes());
    z.extend_from_slice(data);
    let directory = z.len();
    z.extend_from_slice(b"PK\x01\x02\x14\x00\x14\x00\x00\x00\x00\x00\x00\x00\x00\x00");
    sizes(&mut z);
    // No extra field, comment, disk or attributes; the entry is at offset 0.
    z.extend_from_slice(&[0; 14]);
    z.extend_from_slice(name.as_bytes());
    let directory_len = z.len() - directory;
    z.extend_from_slice(b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00");
    z.extend_from_slice(&(directory_len as u32).to_le_bytes());
    z.extend_from_slice(&(directory as u32).to_le_bytes());
    z.extend_from_slice(&[0, 0]);
    z
}

#[test]
fn a_zip_kept_as_is_dumps_and_exports_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..50u32 {
        text.push_str(&format!(
            "{}: malloc 0x{:x} {}\n",
            7 + i % 2,
            0x1000 + i * 32,
            16 + i
        ));
        text.push_str(&format!("{}: free 0x{:x}\n", 7 + i % 2, 0x1000 + i * 32));
    }
    let zip = dir.path().join("trace.zip");
    std::fs::write(&zip, stored_zip("trace.txt", text.as_bytes())).unwrap();
    let bin = dir.path().join("trace.hatf");
    hatf()
        .arg("encode")
        .arg(&zip)
        .arg("-o")
        .arg(&bin)
        .assert()
        .success();
    let inspect = stdout_of(&["inspect"], &bin);
    assert!(inspect.contains("original-bytes"), "{inspect}");

    let json: Vec<serde_json::Value> = stdout_of(&["dump", "--json", "--records", "10..14"], &bin)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(json.len(), 4);
    assert_eq!(json[0]["index"], 10);
    assert_eq!(json[0]["record"], "malloc");
    assert_eq!(json[0]["thread"], 8);
    assert_eq!(json[0]["address"], 0x1000 + 5 * 32);
    assert_eq!(json[0]["size"], 16 + 5);
    assert_eq!(json[1]["record"], "free");
    assert_eq!(json[1]["address"], 0x1000 + 5 * 32);

    let csv = dir.path().join("trace.csv");
    hatf()
        .args(["export", "--to", "csv"])
        .arg(&bin)
        .arg("-o")
        .arg(&csv)
        .assert()
        .success();
    let table = std::fs::read_to_string(&csv).unwrap();
    let mut rows = table.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    assert_eq!(rows.len(), 100);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let last = &rows[99];
    assert_eq!(last[col("index")], "99");
    assert_eq!(last[col("record")], "free");
    assert_eq!(last[col("thread")], "8");
    assert_eq!(last[col("address")], (0x1000 + 49 * 32).to_string());
}
