//! Size report per stream of the `auto` encoding (run by hand with `--ignored --nocapture`;
//! `HATF_ALLOC_FILE` names a text trace, zstd-compressed when it ends in `.zst`).

use hatf::EncodeOptions;

#[test]
#[ignore = "measurement, run by hand"]
fn report_stream_sizes() {
    let Ok(path) = std::env::var("HATF_ALLOC_FILE") else {
        eprintln!("skipped: set HATF_ALLOC_FILE");
        return;
    };
    let raw = std::fs::read(&path).unwrap();
    let text = if path.ends_with(".zst") {
        zstd::decode_all(&raw[..]).unwrap()
    } else {
        raw
    };
    let format = std::env::var("HATF_ALLOC_FORMAT").unwrap_or_else(|_| "mtrace".into());
    let f = hatf::by_name(&format).expect("format");
    let mut out = Vec::new();
    f.encode(&mut &text[..], &mut out, &EncodeOptions::default())
        .unwrap();
    let mut r = metatf::container::ContainerReader::new(&out[..]).unwrap();
    let mut per: std::collections::BTreeMap<u8, (usize, usize)> = Default::default();
    while let Some(b) = r.next_block().unwrap() {
        for s in &b.sections {
            let z = zstd::bulk::compress(&s.bytes, 19).unwrap().len();
            let e = per.entry(s.number).or_default();
            e.0 += s.bytes.len();
            e.1 += z;
        }
    }
    for (n, (raw, z)) in &per {
        eprintln!("stream {n:3}: {raw:10} raw {z:9} zstd-19");
    }
    eprintln!("{path}: total file {} bytes", out.len());
}
