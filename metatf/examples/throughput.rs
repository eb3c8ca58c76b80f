//! Writes and reads a synthetic allocation trace through the universal codec and reports
//! records per second and bytes per record.
//!
//! `cargo run --release -p metatf --example throughput -- [records] [none|gzip|zstd]`

use std::time::Instant;

use metatf::container::{Codec, ContainerHeader};
use metatf::{DynRecord, UniversalReader, UniversalWriter, Value};

const DTD: &str = "tag.width = 1;
size.width = 1; size.interpretation = none;
address.width = 2; address.interpretation = delta 0;
time.interpretation = stride 0 1;
section heap 1 {
    alloc : (tag, size, address, time) { tag.value = 4; }
    free : (tag, address, time) { tag.value = 6; }
}
";

fn main() -> Result<(), metatf::Error> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let codec = args
        .next()
        .and_then(|a| Codec::from_name(&a))
        .unwrap_or(Codec::Zstd);
    let schema =
        metatf::dtd::parse_schema(DTD, "throughput.dtd").map_err(|d| metatf::Error::Schema {
            message: d.to_string(),
        })?;
    let header = ContainerHeader {
        dtd: DTD.into(),
        format: "synthetic".into(),
        properties: vec![],
    };
    let rec = |name: &str, tag: u64, fields: Vec<u64>| DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields: fields.into_iter().map(Value::Uint).collect(),
    };
    let start = Instant::now();
    let mut w = UniversalWriter::new(Vec::new(), schema, &header, codec, 3)?;
    w.write(&rec("section", 2, vec![1]))?;
    let mut time = 0;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for i in 0..n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        time += 1;
        let address = 0x10_0000 + (state % 4096) * 16;
        if i % 2 == 0 {
            w.write(&rec("alloc", 4, vec![16 + state % 64, address, time]))?;
        } else {
            w.write(&rec("free", 6, vec![address, time]))?;
        }
    }
    let bytes = w.finish()?;
    let written = start.elapsed();
    let start = Instant::now();
    let mut r = UniversalReader::new(&bytes[..])?;
    let mut count = 0u64;
    while r.next_record()?.is_some() {
        count += 1;
    }
    let read = start.elapsed();
    println!(
        "{n} data records, {count} records read, codec {codec}: {:.2} bytes/record, write {:.0} ns/record, read {:.0} ns/record",
        bytes.len() as f64 / n as f64,
        written.as_nanos() as f64 / n as f64,
        read.as_nanos() as f64 / n as f64
    );
    Ok(())
}
