//! Writes the seed inputs of the fuzz targets from the library API, so every corpus can be
//! regenerated when a format changes:
//! `cargo run --release --manifest-path fuzz/Cargo.toml --bin write_seeds`
//!
//! The seeds of `universal_reader`, `format_decode` and `container_reader` are container files
//! and go stale whenever the container's on-disk framing changes; rerun this, then
//! `cargo fuzz cmin`. The text, native and `format_sections` seeds (section contents, framed
//! again by the check) depend only on those formats.

use std::path::{Path, PathBuf};

#[allow(dead_code)] // only the encoded samples are used here
#[path = "../checks/format_sections.rs"]
mod format_sections;

use hatf::internal::paper::{self, Encoding};
use hatf::by_name;
use hatf::format::{Compression, EncodeOptions};
use metatf::container::{Codec, ContainerHeader};
use metatf::{DynRecord, UniversalWriter, Value};

/// Small texts of each front end: ordinary lines, every record kind, odd spellings, bad lines.
const TEXTS: [(&str, &[&[u8]]); 7] = [
    ("mtrace", &[
        b"= Start\n@ perl:(perl_alloc+10)[0x6f930] + 0x559f0cc394a0 0xeb8\n@ /lib/libc.so.6:[0x7f] - 0x559f0cc394a0\n@ [0x1] < 0x10\n@ [0x1] > 0x20 0x30\n= End\n",
        b"= Start\r\n@ x:[0x1] + 0x10 0x5\r\n@ x:[0x1] - 0x10\r\n- 0x99 \n",
    ]),
    ("memory-replay", &[
        b"1: malloc 0x10 5\n2: calloc 0x20 3 4\n2: memalign 0x40 16 100\n1: realloc 0x50 0x10 9\n",
        b"1: realloc 0x50 0x0 9\n1: free 0x0\n1: free 0x50\n3: thread_done 0x0\n01: malloc 0x010 5\r\n",
    ]),
    ("wee-alloc", &[b"Alloc(5),\nFree(0),\n", b"Alloc(05),\r\nFree(7),\nFree(0),\n"]),
    ("malloc-bench", &[]),
    ("et2", &[
        b"N 1311053135 16 1 2 0 7\nU 1311053135 19 118352462 7\nU 1311053135 20 0 7\nD 5 7\n",
        b"N 5 16 1 2 0 9\nM 10 5 9\nW 5 33 9\nU 5 0 2 9\nE 10 9\nD 5 9 3\n# c\n",
    ]),
    ("jvm", &[
        b"VS:0\nVI:12\nCL:12:java/lang/Object\nTB:13:1\nOA:14:java/lang/String:1550089733\nMN:15:1:java/lang/String:hashCode:1550089733\nMX:16:1:java/lang/String:hashCode\nOF:20:java/lang/String:1550089733\nTE:21:1\nVD:22\n",
        b"VS:0\r\nTB:1:7\r\nMN:2:7:org/example/Main:main:0\nFP:3:7:org/example/Main:main\nbad line\nVD:4\n",
    ]),
    ("et3", &[
        b"N 914504136 16 1 2 0 7\nU 0 914504136 2 7\nU 914504136 0 4 7\n",
        b"N 5 16 1 2 0 9\nM 10 5 9\nW 5 33 9\nU 5 0 2 9\nE 10 9\nD 5 9 3\n# c\n",
    ]),
];

/// A malloc-bench Tracefile: malloc, calloc, realloc, free, then max_simultaneous_allocs.
fn tracefile() -> Vec<u8> {
    let ld = |field: u8, body: &[u8]| {
        let mut v = vec![(field << 3) | 2, body.len() as u8];
        v.extend_from_slice(body);
        v
    };
    let mut msg = Vec::new();
    msg.extend(ld(1, &ld(1, &[0x08, 0x00, 0x10, 0x20])));
    msg.extend(ld(1, &ld(4, &[0x08, 0x01, 0x10, 0x03, 0x18, 0x08])));
    msg.extend(ld(1, &ld(3, &[0x08, 0x02, 0x10, 0x00, 0x18, 0x40])));
    msg.extend(ld(1, &ld(2, &[0x08, 0x01])));
    msg.extend([0x10, 0x02]);
    msg
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("corpus folder");
    std::fs::write(dir.join(name), bytes).expect("seed file");
}

fn with_flags(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![flags];
    v.extend_from_slice(body);
    v
}

/// A universal-writer trace using every interpretation the damaged-trace test uses.
fn universal_trace() -> Vec<u8> {
    let dtd = "tag.width = 1; size.width = 1; size.interpretation = delta 0;
address.interpretation = sectionStride 5 1;
section heap 1 { alloc : (tag, size, address, vfield) { tag.value = 4; } }
section addresses 5 { }";
    let schema = metatf::dtd::parse_schema(dtd, "seed.dtd").expect("seed DTD parses");
    let header = ContainerHeader {
        dtd: dtd.into(),
        format: "seed".into(),
        properties: vec![],
    };
    let mut w = UniversalWriter::new(Vec::new(), schema, &header, Codec::None, 1).expect("writer");
    w.set_block_records(3);
    let rec = |name: &str, tag, fields| DynRecord {
        section: None,
        name: name.into(),
        tag,
        fields,
    };
    w.write(&rec("section", 2, vec![Value::Uint(1)]))
        .expect("section");
    for i in 0..6u64 {
        let fields = vec![
            Value::Uint(i * 300),
            Value::Uint(0x1000 + i),
            Value::Uint(2),
            Value::Bytes(vec![1, 2]),
        ];
        w.write(&rec("alloc", 4, fields)).expect("alloc");
    }
    w.finish().expect("finish")
}

fn main() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut containers = vec![universal_trace()];
    let mut events = vec![];
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
        e.write_all(&tracefile()).expect("memory");
        e.finish().expect("memory")
    };
    for (format, texts) in TEXTS {
        let f = by_name(format).expect("known format");
        let dir = corpus.join(format!("text_{}", format.replace('-', "_")));
        let owned: Vec<Vec<u8>> = if format == "malloc-bench" {
            write(&dir, "seed_protobuf", &with_flags(0x80, &tracefile()));
            vec![gz.clone()]
        } else {
            texts.iter().map(|t| t.to_vec()).collect()
        };
        for (i, text) in owned.iter().enumerate() {
            for flags in [0u8, 1] {
                write(&dir, &format!("seed_{i}_{flags}"), &with_flags(flags, text));
            }
            for compression in [Compression::None, Compression::Zstd] {
                let options = EncodeOptions {
                    compression,
                    keep_bad_lines: true,
                    ..EncodeOptions::default()
                };
                let mut bin = Vec::new();
                if f.encode(&mut &text[..], &mut bin, &options).is_ok() {
                    containers.push(bin);
                }
            }
        }
        if let Ok(e) = hatf::internal::formats::mtrace::read_events(&mut &owned[0][..], "seed") {
            events.extend(e);
        }
    }
    for (i, c) in containers.iter().enumerate() {
        for target in ["universal_reader", "format_decode", "container_reader"] {
            write(&corpus.join(target), &format!("seed_{i}"), c);
        }
    }
    // Short traces whose sections the light context mixer (codec 4) codes: the texts above are
    // too short for any section to be compressed.
    for (format, text) in [
        ("mtrace", &include_bytes!("../../hatf/tests/data/relive.mtrace")[..]),
        (
            "memory-replay",
            &include_bytes!("../../hatf/tests/data/relive_memory_replay.txt")[..],
        ),
    ] {
        let mut bin = Vec::new();
        let f = by_name(format).expect("known format");
        f.encode(&mut &text[..], &mut bin, &EncodeOptions::default())
            .expect("seed text encodes");
        for target in ["universal_reader", "format_decode", "container_reader"] {
            write(&corpus.join(target), &format!("seed_light_{format}"), &bin);
        }
    }
    let native = corpus.join("native_reader");
    for encoding in [
        Encoding::HatfNaive,
        Encoding::HatfBest,
        Encoding::HatfSplitAddr,
    ] {
        let streams = paper::encode(encoding, &events).expect("seed events encode");
        let name = encoding.name();
        write(&native, &format!("seed_{name}"), &streams[0].bytes);
        if let [main, addresses] = &streams[..] {
            if let Ok(cut) = u8::try_from(main.bytes.len()) {
                let mut split = vec![cut];
                split.extend_from_slice(&main.bytes);
                split.extend_from_slice(&addresses.bytes);
                write(&native, &format!("seed_{name}_split"), &split);
            }
        }
    }
    // format_sections: [format, block, section] + the section's own bytes, for every section.
    for (f, (name, _, _, blocks)) in format_sections::encoded().iter().enumerate() {
        for (b, block) in blocks.iter().enumerate().take(4) {
            for (s, section) in block.sections.iter().enumerate() {
                let mut seed = vec![f as u8, b as u8, s as u8];
                seed.extend_from_slice(&section.bytes);
                write(
                    &corpus.join("format_sections"),
                    &format!("seed_{name}_{b}_{s}"),
                    &seed,
                );
            }
        }
    }
    println!("seeds written under {}", corpus.display());
}
