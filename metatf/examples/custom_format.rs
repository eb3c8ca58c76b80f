//! Defines a trace format of its own with `#[derive(MetaTf)]`, writes a trace, reads it back
//! with the generated reader, and reads it again with no generated code at all (the universal
//! reader), because every trace carries its DTD.
//!
//! `cargo run -p metatf --example custom_format`

use metatf::typed::{Format, TypedReader, TypedWriter};
use metatf::{Codec, MetaTf, UniversalReader};

/// A network packet trace: one record per packet, one per dropped packet.
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(tag = 4, name = "packet")]
struct Packet {
    /// Microseconds, stored as the difference from the previous packet (2 bytes usually do).
    #[metatf(delta = 0, width = 2)]
    time: u64,
    /// Port numbers repeat: store an index into value section 2 (a dictionary).
    #[metatf(section_offset = 2, width = 1)]
    port: u16,
    /// Bytes on the wire.
    length: u16,
    /// The first bytes of the payload.
    head: Vec<u8>,
}

/// A dropped packet.
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(tag = 5, name = "drop")]
struct Drop {
    #[metatf(delta = 0, width = 2)]
    time: u64,
    /// Always queue 0 so far: costs no bytes until a trace says otherwise.
    #[metatf(default = 0)]
    queue: u8,
}

/// The format: the records of DTD section 1.
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(section = 1, name = "net", format = "packets")]
enum Net {
    Packet(Packet),
    Drop(Drop),
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("The DTD generated from the Rust types:\n{}", Net::dtd()?);

    let mut records = Vec::new();
    for i in 0..10u64 {
        records.push(Net::Packet(Packet {
            time: 1_000 + i * 250,
            port: [80, 443, 53][(i % 3) as usize],
            length: 60 + (i as u16) * 100,
            head: format!("GET /{i}").into_bytes(),
        }));
        if i == 6 {
            // Queue 3 is not the default: the writer adds a metadata record switching `queue`
            // to `none` before this record.
            records.push(Net::Drop(Drop {
                time: 2_600,
                queue: 3,
            }));
        }
    }

    let path = std::env::temp_dir().join(format!("custom_format_{}.mtf", std::process::id()));
    let mut w = TypedWriter::<Net, _>::new(std::fs::File::create(&path)?, Codec::Zstd, 3)?;
    w.write_comment(b"captured by the custom_format example")?;
    for r in &records {
        w.write(r)?;
    }
    w.finish()?;
    println!("wrote {} records to {}", records.len(), path.display());

    let back: Vec<Net> =
        TypedReader::<Net, _>::new(std::fs::File::open(&path)?)?.collect::<Result<_, _>>()?;
    assert_eq!(back, records);
    println!("read them back with the generated reader: identical");

    let mut universal = UniversalReader::new(std::fs::File::open(&path)?)?;
    println!("the same trace through the universal reader:");
    while let Some(r) = universal.next_record()? {
        println!("  {} {:?}", r.name, r.fields);
    }
    std::fs::remove_file(&path)?;
    Ok(())
}
