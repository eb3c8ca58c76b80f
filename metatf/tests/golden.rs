//! Golden byte layouts, checked by hand against docs/FORMAT.md §5: a small HATF-like
//! trace with the paper's `(metadata, alloc, size, width, 8)` example, stored uncompressed so
//! every byte can be read in the snapshot.

use metatf::container::{Codec, ContainerHeader, ContainerReader};
use metatf::{DynRecord, UniversalWriter, Value};

const DTD: &str = "tag.width = 1;
size.width = 1; size.interpretation = none;
address.width = 4; address.interpretation = none;
section heap 1 {
    alloc : (tag, size, address) { tag.value = 4; }
}
";

fn uint(name: &str, tag: u64, f: &[u64]) -> DynRecord {
    DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields: f.iter().map(|&v| Value::Uint(v)).collect(),
    }
}

/// Offsets and hex, 16 bytes a line, under a label.
fn hex(out: &mut String, label: &str, start: usize, bytes: &[u8]) {
    out.push_str(&format!("{label} ({} bytes)\n", bytes.len()));
    for (i, chunk) in bytes.chunks(16).enumerate() {
        let h: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&format!("  {:04x}: {}\n", start + 16 * i, h.join(" ")));
    }
}

#[test]
fn paper_metadata_example_bytes() {
    let header = ContainerHeader {
        dtd: DTD.into(),
        format: "demo".into(),
        properties: vec![("k".into(), "v".into())],
    };
    let schema = metatf::dtd::parse_schema(DTD, "demo.dtd").unwrap_or_else(|d| panic!("{d}"));
    let mut w = UniversalWriter::new(Vec::new(), schema, &header, Codec::None, 0).unwrap();
    for r in [
        uint("section", 2, &[1]),
        uint("alloc", 4, &[16, 0x1000]),
        uint("metadata", 3, &[4, 1, 0, 8]), // (metadata, alloc, size, width, 8)
        uint("alloc", 4, &[0x0102_0304_0506_0708, 0x2000]),
    ] {
        w.write(&r).unwrap();
    }
    let bytes = w.finish().unwrap();

    // Cut the file at the structure boundaries the reader reports.
    let mut r = ContainerReader::new(&bytes[..]).unwrap();
    let header_end = r.position() as usize;
    let block = r.next_block().unwrap().unwrap();
    let block_end = r.position() as usize;
    assert!(r.next_block().unwrap().is_none());
    let stream = &block.sections[0].bytes;
    let block_header_end = block_end - stream.len();
    let trailer_start = bytes.len() - metatf::container::TRAILER_LEN;

    let mut s = String::new();
    hex(
        &mut s,
        "container header",
        0,
        &bytes[..header_end - DTD.len() - 4],
    );
    s.push_str(&format!(
        "  DTD text ({} bytes) at {:#x}\n",
        DTD.len(),
        header_end - DTD.len() - 4
    ));
    hex(
        &mut s,
        "header CRC-32",
        header_end - 4,
        &bytes[header_end - 4..header_end],
    );
    hex(
        &mut s,
        "block 0 header",
        header_end,
        &bytes[header_end..block_header_end],
    );
    hex(
        &mut s,
        "section 0: record stream",
        block_header_end,
        &bytes[block_header_end..block_end],
    );
    hex(&mut s, "index", block_end, &bytes[block_end..trailer_start]);
    hex(&mut s, "trailer", trailer_start, &bytes[trailer_start..]);
    insta::assert_snapshot!(s);
}
