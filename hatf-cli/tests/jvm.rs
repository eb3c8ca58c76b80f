//! `hatf encode` / `hatf decode` of a zipped JVM trace through the binary.

mod support;
use support::hatf;

/// CRC-32 (IEEE), bit by bit: this crate has no zip library, and the archive is tiny.
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A zip with one stored member `trace`, laid out as APPNOTE 4.3 says.
fn stored_zip(text: &[u8]) -> Vec<u8> {
    let (crc, n, name) = (crc32(text), text.len() as u32, b"trace");
    let mut z = Vec::new();
    let common = |z: &mut Vec<u8>| {
        z.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0]); // version, flags, method 0 (stored), time
        z.extend_from_slice(&0x5a21u16.to_le_bytes()); // date
        z.extend_from_slice(&crc.to_le_bytes());
        z.extend_from_slice(&n.to_le_bytes());
        z.extend_from_slice(&n.to_le_bytes());
        z.extend_from_slice(&(name.len() as u16).to_le_bytes());
        z.extend_from_slice(&0u16.to_le_bytes()); // extra length
    };
    z.extend_from_slice(b"PK\x03\x04");
    common(&mut z);
    z.extend_from_slice(name);
    z.extend_from_slice(text);
    let cd = z.len() as u32;
    z.extend_from_slice(b"PK\x01\x02");
    z.extend_from_slice(&[20, 3]); // made by: Unix
    common(&mut z);
    z.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
    z.extend_from_slice(&0o100644u32.wrapping_shl(16).to_le_bytes());
    z.extend_from_slice(&0u32.to_le_bytes()); // local header offset
    z.extend_from_slice(name);
    let cd_len = z.len() as u32 - cd;
    z.extend_from_slice(b"PK\x05\x06");
    z.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
    z.extend_from_slice(&cd_len.to_le_bytes());
    z.extend_from_slice(&cd.to_le_bytes());
    z.extend_from_slice(&0u16.to_le_bytes());
    z
}

/// A small trace with nested calls on two threads, in a stored zip.
fn jvm_zip() -> Vec<u8> {
    let mut text = String::from("VS:100\nVI:105\nCL:106:Main\nCL:107:java/lang/String\n");
    for k in 0..200u32 {
        let t = 1 + k % 2;
        let id = 1_000_003u64 * u64::from(k + 1) % 2_147_483_647;
        text.push_str(&format!("MN:{}:{t}:Main:step:0\n", 110 + k));
        text.push_str(&format!("OA:{}:java/lang/String:{id}\n", 110 + k));
        text.push_str(&format!(
            "MN:{}:{t}:java/lang/String:<init>:{id}\n",
            111 + k
        ));
        text.push_str(&format!("MX:{}:{t}:java/lang/String:<init>\n", 111 + k));
        text.push_str(&format!("MX:{}:{t}:Main:step\n", 112 + k));
    }
    text.push_str("VD:400\n");
    stored_zip(text.as_bytes())
}

#[test]
fn encode_then_decode_gives_the_zip_back_and_names_the_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    let zip = dir.path().join("run.zip");
    let bin = dir.path().join("run.hatf");
    let back = dir.path().join("back.zip");
    std::fs::write(&zip, jvm_zip()).expect("write zip");
    let out = hatf()
        .args(["encode", "-v", "-o"])
        .arg(&bin)
        .arg(&zip)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(
        err.contains("`jvm-zip`"),
        "-v does not name the format: {err}"
    );
    hatf()
        .args(["decode", "-o"])
        .arg(&back)
        .arg(&bin)
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&back).expect("decoded"),
        std::fs::read(&zip).expect("original")
    );
}
