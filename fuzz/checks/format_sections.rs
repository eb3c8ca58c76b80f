//! The check behind the `format_sections` fuzz target, shared with the stable replay test
//! `hatf/tests/fuzz_corpus.rs`. Random bytes almost never pass a container's
//! checksums, so this check takes a valid encoding of a small trace, replaces the contents of
//! one section of one block with fuzz bytes, frames the result again (valid checksums) and
//! decodes it: each format's decoder must return text or an error, never panic.
//!
//! Input layout: byte 0 picks the format, byte 1 the block, byte 2 the section; the rest is the
//! section's new content.

use std::sync::OnceLock;

use hatf::by_name;
use hatf::format::{Compression, DecodeOptions, EncodeOptions};
use metatf::container::{Codec, ContainerHeader, ContainerReader, DtdIdentity, SectionData};
use metatf::{Block, ContainerWriter};

/// A small trace of every text format whose decoder reads records (not stored bytes).
const TEXTS: [(&str, &[u8]); 6] = [
    ("mtrace", b"= Start\n@ ./a:[0x4] + 0x10 0x20\n@ ./a:(f+1)[0x5] < 0x10\n@ [0x6] > 0x30 0x8\n@ [0x7] - 0x30\nbad line\n= End\n"),
    ("memory-replay", b"1: malloc 0x10 5\n2: calloc 0x20 3 4\n2: memalign 0x40 16 100\n1: realloc 0x50 0x10 9\n1: free 0x50\n3: thread_done 0x0\n"),
    ("wee-alloc", b"Alloc(5),\nAlloc(7),\nFree(0),\nFree(1),\n"),
    ("et2", b"N 5 16 1 2 0 9\nM 10 5 9\nW 5 33 9\nU 5 0 2 9\nE 10 9\nD 5 9 3\n# c\n"),
    ("et3", b"N 5 16 1 2 0 9\nM 10 5 9\nW 5 33 9\nU 5 0 2 9\nE 10 9\nD 5 9 3\n# c\n"),
    ("jvm", b"VS:0\nCL:1:java/lang/String\nTB:2:1\nOA:3:java/lang/String:77\nMN:4:1:java/lang/String:hashCode:77\nMX:5:1:java/lang/String:hashCode\nOF:6:java/lang/String:77\nTE:7:1\nVD:8\n"),
];

/// Every sample: the texts above, a malloc-bench protobuf gzip'd by flate2 and a zip holding the
/// memory-replay text deflated by flate2 (whose deflate streams the encoders take apart, so
/// their records are modelled and their reconstruction data is reached, rather than stored as
/// bytes).
fn samples() -> &'static [(&'static str, Vec<u8>)] {
    static SAMPLES: OnceLock<Vec<(&'static str, Vec<u8>)>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut all: Vec<(&'static str, Vec<u8>)> =
            TEXTS.iter().map(|&(n, t)| (n, t.to_vec())).collect();
        all.push(("malloc-bench", malloc_bench_sample()));
        all.push(("memory-replay-zip", memory_replay_zip_sample()));
        all
    })
}

/// A malloc-bench Tracefile (malloc, calloc, realloc, free, then max_simultaneous_allocs),
/// gzip'd.
fn malloc_bench_sample() -> Vec<u8> {
    use std::io::Write;
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
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&msg).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

/// A zip archive whose one entry, `trace.txt`, is the memory-replay sample text, deflated.
fn memory_replay_zip_sample() -> Vec<u8> {
    use std::io::Write;
    let text = TEXTS[1].1;
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text).expect("writing to memory");
    let data = e.finish().expect("writing to memory");
    let mut crc = flate2::Crc::new();
    crc.update(text);
    let name = b"trace.txt";
    let le16 = |v: usize| (v as u16).to_le_bytes();
    let le32 = |v: usize| (v as u32).to_le_bytes();
    // Version, flags, method 8, time, date, CRC-32, sizes, name length, extra length.
    let mut common = Vec::new();
    common.extend(le16(0));
    common.extend(le16(8));
    common.extend([0, 0, 0x21, 0]);
    common.extend(crc.sum().to_le_bytes());
    common.extend(le32(data.len()));
    common.extend(le32(text.len()));
    common.extend(le16(name.len()));
    common.extend(le16(0));
    let mut zip = b"PK\x03\x04\x14\x00".to_vec();
    zip.extend(&common);
    zip.extend(name);
    zip.extend(&data);
    let central_at = zip.len();
    zip.extend(b"PK\x01\x02\x1e\x03\x14\x00");
    zip.extend(&common);
    // Comment length, disk, internal and external attributes, local header offset.
    zip.extend([0; 10]);
    zip.extend(le32(0));
    zip.extend(name);
    let central_len = zip.len() - central_at;
    zip.extend(b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00");
    zip.extend(le32(central_len));
    zip.extend(le32(central_at));
    zip.extend(le16(0));
    zip
}

/// One format's sample, taken apart: header, the DTD's identity when the file names it by
/// reference instead of carrying it, and the blocks.
pub type Sample = (
    &'static str,
    ContainerHeader,
    Option<DtdIdentity>,
    Vec<Block>,
);

/// Each format's encoding of its text, taken apart.
pub fn encoded() -> &'static [Sample] {
    static ENCODED: OnceLock<Vec<Sample>> = OnceLock::new();
    ENCODED.get_or_init(|| {
        samples()
            .iter()
            .map(|(name, text)| {
                let name = *name;
                let f = by_name(name).expect("known format");
                let options = EncodeOptions {
                    compression: Compression::None,
                    keep_bad_lines: true,
                    ..EncodeOptions::default()
                };
                let mut bin = Vec::new();
                f.encode(&mut &text[..], &mut bin, &options)
                    .expect("sample encodes");
                let mut r = ContainerReader::new(&bin[..]).expect("sample reads");
                let mut blocks = vec![];
                while let Some(b) = r.next_block().expect("sample reads") {
                    blocks.push(b);
                }
                (name, r.header().clone(), r.dtd_reference(), blocks)
            })
            .collect()
    })
}

/// Replaces one section of one block of a format's sample by the fuzz bytes and decodes.
pub fn check(data: &[u8]) {
    let [format, block, section, content @ ..] = data else {
        return;
    };
    let all = encoded();
    let (name, header, reference, blocks) = &all[usize::from(*format) % all.len()];
    if blocks.is_empty() {
        return;
    }
    let target = usize::from(*block) % blocks.len();
    let mut unchanged = true;
    let mut w = match reference {
        Some(id) => ContainerWriter::referencing(Vec::new(), header, *id),
        None => ContainerWriter::new(Vec::new(), header),
    }
    .expect("writing to memory");
    for (i, b) in blocks.iter().enumerate() {
        let pick = usize::from(*section) % b.sections.len().max(1);
        let sections: Vec<SectionData> = b
            .sections
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let bytes: &[u8] = if i == target && k == pick {
                    // Value sections hold whole elements.
                    let w = usize::from(s.element_width).max(1);
                    let new = &content[..content.len() / w * w];
                    unchanged = new == s.bytes;
                    new
                } else {
                    &s.bytes
                };
                SectionData {
                    number: s.number,
                    element_width: s.element_width,
                    codec: Codec::None,
                    level: 0,
                    bytes,
                }
            })
            .collect();
        if w.write_block(b.record_count, &sections).is_err() {
            return;
        }
    }
    let Ok(bin) = w.finish() else {
        return;
    };
    let f = by_name(name).expect("known format");
    let mut text = Vec::new();
    let decoded = f.decode(&mut &bin[..], &mut text, &DecodeOptions::default());
    // The check's own framing must be faithful, or it would test nothing.
    if unchanged {
        let sample = samples().iter().find(|t| t.0 == *name).map(|t| &t.1[..]);
        assert!(
            decoded.is_ok() && Some(&text[..]) == sample,
            "{name}: reframed sample differs"
        );
    }
}
