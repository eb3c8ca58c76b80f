//! Container round trips, truncation at every byte, and damage detection.

use super::*;
use crate::error::Error;

fn header() -> ContainerHeader {
    ContainerHeader {
        dtd: "tag.width = 1;\nsection heap 1 { alloc : (tag, size) { tag.value = 4; } }\n".into(),
        format: "test".into(),
        properties: vec![
            ("producer".into(), "unit test".into()),
            (PROPERTY_BYTE_ORDER.into(), "little".into()),
            (PROPERTY_CLASS.into(), "64".into()),
        ],
    }
}

/// A block to write: record count and (number, element width, bytes) per section.
type TestBlock = (u64, Vec<(u8, u8, Vec<u8>)>);

/// Three blocks; the second has no sections, the third three sections of varied widths.
fn blocks() -> Vec<TestBlock> {
    let big: Vec<u8> = (0..3000u32).flat_map(|i| (i * 31).to_be_bytes()).collect();
    vec![
        (
            3,
            vec![
                (0, 0, b"abcdefgh".to_vec()),
                (7, 4, vec![1, 2, 3, 4, 5, 6, 7, 8]),
            ],
        ),
        (0, vec![]),
        (
            1000,
            vec![
                (0, 0, big.clone()),
                (1, 8, big[..8000].to_vec()),
                (255, 1, vec![]),
            ],
        ),
    ]
}

fn write(codec: Codec) -> Vec<u8> {
    let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
    for (count, sections) in blocks() {
        let data: Vec<SectionData<'_>> = sections
            .iter()
            .map(|(n, width, bytes)| SectionData {
                number: *n,
                element_width: *width,
                codec,
                level: 3,
                bytes,
            })
            .collect();
        w.write_block(count, &data).unwrap();
    }
    w.finish().unwrap()
}

/// Reads blocks until the end or the first error.
fn read_all(bytes: &[u8]) -> (Vec<Block>, Option<Error>) {
    let mut r = match ContainerReader::new(bytes) {
        Ok(r) => r,
        Err(e) => return (vec![], Some(e)),
    };
    let mut out = vec![];
    loop {
        match r.next_block() {
            Ok(Some(b)) => out.push(b),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

fn check_blocks(got: &[Block]) {
    let want = blocks();
    let mut first = 0;
    for (i, b) in got.iter().enumerate() {
        let (count, sections) = &want[i];
        assert_eq!(b.index, i as u64);
        assert_eq!(b.first_record, first);
        assert_eq!(b.record_count, *count);
        assert_eq!(b.sections.len(), sections.len());
        for (s, (n, width, bytes)) in b.sections.iter().zip(sections) {
            assert_eq!((s.number, s.element_width, &s.bytes), (*n, *width, bytes));
        }
        first += count;
    }
}

#[test]
fn round_trip_every_codec() {
    for codec in [Codec::None, Codec::Gzip, Codec::Zstd] {
        let bytes = write(codec);
        assert!(looks_like_container(&bytes));
        let r = ContainerReader::new(&bytes[..]).unwrap();
        assert_eq!(r.header(), &header());
        let (got, err) = read_all(&bytes);
        assert!(err.is_none(), "{codec}: {err:?}");
        assert_eq!(got.len(), 3);
        check_blocks(&got);
        // The trailer points at the index and counts everything.
        let mut t = [0u8; TRAILER_LEN];
        t.copy_from_slice(&bytes[bytes.len() - TRAILER_LEN..]);
        let trailer = Trailer::decode(&t).unwrap();
        assert_eq!(trailer.block_count, 3);
        assert_eq!(trailer.total_records, 1003);
        let at = trailer.index_offset as usize;
        assert_eq!(&bytes[at..at + 4], b"MTFI");
        assert_eq!(got[2].offset as usize, {
            // Third index entry's offset field.
            let e = at + 12 + 2 * 24;
            u64::from_le_bytes(bytes[e..e + 8].try_into().unwrap()) as usize
        });
    }
}

#[test]
fn compression_actually_compresses() {
    assert!(write(Codec::Gzip).len() < write(Codec::None).len() * 3 / 4);
    assert!(write(Codec::Zstd).len() < write(Codec::None).len() * 3 / 4);
}

#[test]
fn empty_container_round_trips() {
    let bytes = ContainerWriter::new(Vec::new(), &header())
        .unwrap()
        .finish()
        .unwrap();
    let (got, err) = read_all(&bytes);
    assert!(got.is_empty() && err.is_none());
}

#[test]
fn truncation_at_every_byte_yields_only_complete_blocks() {
    for codec in [Codec::None, Codec::Zstd] {
        let bytes = write(codec);
        let (all, _) = read_all(&bytes);
        for cut in 0..bytes.len() {
            let (got, err) = read_all(&bytes[..cut]);
            assert!(err.is_some(), "{codec}: cut at {cut} read without error");
            assert!(got.len() < all.len() || cut >= all.len());
            // Every block returned is exactly the block that was written.
            assert_eq!(&all[..got.len()], &got[..], "cut at {cut}");
            // A complete block is never lost: blocks ending before the cut are all returned.
            let complete = all
                .iter()
                .enumerate()
                .filter(|(i, _)| {
                    let end = all.get(i + 1).map(|b| b.offset as usize);
                    end.is_some_and(|e| e <= cut)
                })
                .count();
            assert!(
                got.len() >= complete,
                "cut at {cut}: {} < {complete}",
                got.len()
            );
        }
    }
}

#[test]
fn every_flipped_byte_is_detected() {
    for codec in [Codec::None, Codec::Gzip] {
        let bytes = write(codec);
        let (all, _) = read_all(&bytes);
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x20;
            let (got, err) = read_all(&damaged);
            assert!(err.is_some(), "{codec}: flip at {at} not detected");
            assert_eq!(&all[..got.len()], &got[..], "flip at {at} gave wrong data");
        }
    }
}

#[test]
fn errors_name_offsets() {
    let mut bytes = write(Codec::None);
    let (all, _) = read_all(&bytes);
    let at = all[2].offset as usize + 200;
    bytes[at] ^= 1;
    let (_, err) = read_all(&bytes);
    let msg = err.unwrap().to_string();
    assert!(msg.contains("checksum mismatch"), "{msg}");
    assert!(
        msg.contains(&format!("at byte {}", all[2].offset + 30 + 3 * 28 + 4)),
        "{msg}"
    );
    let err = ContainerReader::new(&b"GIF89a"[..]).err().unwrap();
    assert!(err.to_string().contains("magic"), "{err}");
    assert!(!looks_like_container(b"\x7fELF"));
}

#[test]
fn writer_rejects_what_cannot_be_read() {
    let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
    let s = |number| SectionData {
        number,
        element_width: 4,
        codec: Codec::None,
        level: 0,
        bytes: &[1, 2, 3, 4, 5],
    };
    assert!(matches!(
        w.write_block(1, &[s(1)]),
        Err(Error::InvalidArgument { .. })
    ));
    let ok = SectionData {
        bytes: &[1, 2, 3, 4],
        ..s(1)
    };
    assert!(matches!(
        w.write_block(1, &[ok, ok]),
        Err(Error::InvalidArgument { .. })
    ));
    let bad = ContainerHeader {
        properties: vec![(PROPERTY_BYTE_ORDER.into(), "middle".into())],
        ..header()
    };
    assert!(ContainerWriter::new(Vec::new(), &bad).is_err());
}

#[test]
fn huge_declared_lengths_are_refused_before_allocating() {
    let mut bytes = write(Codec::None);
    // Patch the header body length to 4 GiB - 1 and fix nothing else: must be refused as too large.
    bytes[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = ContainerReader::new(&bytes[..]).err().unwrap();
    assert!(matches!(err, Error::TooLarge { offset: 8, .. }), "{err}");
}
