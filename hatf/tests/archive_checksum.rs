//! The end-to-end check of rebuilt archives (docs/FORMAT.md §6.1, `archive-crc32`): a file
//! whose every section checksum is valid but whose parts rebuild an archive other than the
//! one encoded fails to decode, with an error naming both CRC-32s.

use hatf::format::{DecodeOptions, TraceFormat};
use hatf::internal::formats::malloc_bench::MallocBench;
use hatf::internal::formats::memory_replay::MemoryReplayZip;
use metatf::container::{Codec, ContainerHeader, ContainerReader, SectionData};
use metatf::ContainerWriter;

mod format_support;
use format_support::encode;

const TRACE_GZ: &[u8] = include_bytes!("data/synthetic.trace.gz");
const ZIP: &[u8] = include_bytes!("data/synthetic_memory_replay.zip");

/// Section 0 of both archive layouts: the archive's bytes before the deflate stream.
const HEAD: u8 = 0;

fn decode(f: &dyn TraceFormat, bin: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    f.decode(&mut &bin[..], &mut out, &DecodeOptions::default())
        .map(|_| out)
        .map_err(|e| e.to_string())
}

/// `bin` framed again with valid checksums, after `edit` changed its header and sections.
fn reframe(
    bin: &[u8],
    edit_header: impl Fn(&mut ContainerHeader),
    edit_section: impl Fn(u8, &mut Vec<u8>),
) -> Vec<u8> {
    let mut r = ContainerReader::new(bin).unwrap();
    let mut header = r.header().clone();
    edit_header(&mut header);
    let reference = r.dtd_reference();
    let mut blocks = Vec::new();
    while let Some(b) = r.next_block().unwrap() {
        blocks.push(b);
    }
    let mut w = match reference {
        Some(id) => ContainerWriter::referencing(Vec::new(), &header, id),
        None => ContainerWriter::new(Vec::new(), &header),
    }
    .unwrap();
    for b in &blocks {
        let contents: Vec<(u8, u8, Vec<u8>)> = b
            .sections
            .iter()
            .map(|s| {
                let mut bytes = s.bytes.to_vec();
                edit_section(s.number, &mut bytes);
                (s.number, s.element_width, bytes)
            })
            .collect();
        let sections: Vec<SectionData> = contents
            .iter()
            .map(|(number, element_width, bytes)| SectionData {
                number: *number,
                element_width: *element_width,
                codec: Codec::Zstd,
                level: 3,
                bytes,
            })
            .collect();
        w.write_block(b.record_count, &sections).unwrap();
    }
    w.finish().unwrap()
}

/// For each archive format: the faithful reframe decodes to the archive; a changed byte in the
/// stored head (a time stamp, so the rebuilt archive is still well-formed) is an error naming
/// the CRC-32s; and so is a header property that names another CRC-32.
#[test]
fn an_archive_rebuilt_unlike_the_original_is_an_error() {
    // Byte 4 of a gzip header and byte 10 of a zip local header are in the modification time.
    let cases: [(&dyn TraceFormat, &[u8], usize); 2] =
        [(&MallocBench, TRACE_GZ, 4), (&MemoryReplayZip, ZIP, 10)];
    for (f, archive, time_byte) in cases {
        let bin = encode(f, archive);
        let r = ContainerReader::new(&bin[..]).unwrap();
        let crc = r.header().property("archive-crc32").unwrap().to_string();
        assert_eq!(crc, format!("{:08x}", crc32fast::hash(archive)));
        let same = reframe(&bin, |_| {}, |_, _| {});
        assert!(decode(f, &same).unwrap() == archive, "faithful reframe");

        let other_time = reframe(
            &bin,
            |_| {},
            |number, bytes| {
                if number == HEAD {
                    bytes[time_byte] ^= 0x01;
                }
            },
        );
        let e = decode(f, &other_time).unwrap_err();
        assert!(
            e.contains("CRC-32") && e.contains(&crc) && e.contains("damaged"),
            "{e}"
        );

        let other_crc = reframe(
            &bin,
            |h| {
                for (name, value) in &mut h.properties {
                    if name == "archive-crc32" {
                        *value = "01234567".to_string();
                    }
                }
            },
            |_, _| {},
        );
        let e = decode(f, &other_crc).unwrap_err();
        assert!(e.contains("CRC-32") && e.contains("01234567"), "{e}");
    }
}
