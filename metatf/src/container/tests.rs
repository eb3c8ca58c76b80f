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
        // The trailer points at the index, which lists every block.
        let mut t = [0u8; TRAILER_LEN];
        t.copy_from_slice(&bytes[bytes.len() - TRAILER_LEN..]);
        let trailer = Trailer::decode(&t).unwrap();
        let at = trailer.index_offset as usize;
        assert_eq!(&bytes[at..at + 4], b"MTFI");
        let index = read_index(&mut std::io::Cursor::new(&bytes)).unwrap();
        let from_blocks: Vec<IndexEntry> = got
            .iter()
            .map(|b| IndexEntry {
                offset: b.offset,
                first_record: b.first_record,
                record_count: b.record_count,
            })
            .collect();
        assert_eq!(index, from_blocks);
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
    // Block 2's header: marker 4, block number 1, first record 1, record count 2 (1000),
    // section count 1, three uncompressed descriptors (3 + length varint + CRC: 9, 9 and 8
    // bytes), CRC 4 = 39 bytes before the first section's data.
    assert!(
        msg.contains(&format!("at byte {}", all[2].offset + 39)),
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
    // Replace the header body length (a one-byte varint at byte 8) by 2^40 and fix nothing
    // else: must be refused as too large before anything is allocated.
    assert!(bytes[8] & 0x80 == 0);
    bytes.splice(8..9, [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    let err = ContainerReader::new(&bytes[..]).err().unwrap();
    assert!(matches!(err, Error::TooLarge { offset: 8, .. }), "{err}");
}

#[test]
fn dtd_storage_follows_the_writers_choice() {
    let long = format!(
        "{}{}",
        header().dtd,
        "// a comment that makes the DTD long\n".repeat(40)
    );
    let big = ContainerHeader {
        dtd: long.clone(),
        ..header()
    };
    for (h, storage, want) in [
        (header(), DtdStorage::Auto, DtdStorage::Verbatim),
        (big.clone(), DtdStorage::Auto, DtdStorage::Mixed),
        (big.clone(), DtdStorage::Compressed, DtdStorage::Compressed),
        (big.clone(), DtdStorage::Verbatim, DtdStorage::Verbatim),
        (header(), DtdStorage::Compressed, DtdStorage::Compressed),
        (header(), DtdStorage::Mixed, DtdStorage::Mixed),
    ] {
        let bytes = ContainerWriter::with_dtd_storage(Vec::new(), &h, storage)
            .unwrap()
            .finish()
            .unwrap();
        let r = ContainerReader::new(&bytes[..]).unwrap();
        assert_eq!(r.dtd_storage(), want);
        assert_eq!(r.header(), &h);
        assert_eq!(r.dtd_reference(), None);
    }
    let verbatim = ContainerWriter::new(Vec::new(), &big)
        .unwrap()
        .finish()
        .unwrap();
    assert!(
        verbatim.len() + 900 < long.len() + 200,
        "compression saved too little"
    );
}

#[test]
fn a_referenced_dtd_is_checked_when_resolved() {
    let h = header();
    let bytes = ContainerWriter::with_dtd_storage(Vec::new(), &h, DtdStorage::Reference)
        .unwrap()
        .finish()
        .unwrap();
    assert!(!bytes.windows(8).any(|w| w == &h.dtd.as_bytes()[..8]));
    let mut r = ContainerReader::new(&bytes[..]).unwrap();
    assert_eq!(r.dtd_storage(), DtdStorage::Reference);
    assert_eq!(r.header().dtd, "");
    assert_eq!(r.dtd_reference(), Some(DtdIdentity::of(&h.dtd)));
    let err = r.resolve_dtd("tag.width = 2;\n").unwrap_err();
    assert!(
        err.to_string().contains("not the DTD this reader knows"),
        "{err}"
    );
    r.resolve_dtd(&h.dtd).unwrap();
    assert_eq!(r.header(), &h);
    // A file that references its DTD can be rewritten without knowing the text.
    let unresolved = ContainerReader::new(&bytes[..]).unwrap();
    let again = ContainerWriter::referencing(
        Vec::new(),
        unresolved.header(),
        unresolved.dtd_reference().unwrap(),
    )
    .unwrap()
    .finish()
    .unwrap();
    assert_eq!(again, bytes);
}

#[test]
fn a_reference_to_a_dtd_longer_than_any_header_is_refused() {
    use super::framing::PutLe;
    let h = header();
    let huge = DtdIdentity {
        length: 1 << 60,
        crc32: 7,
    };
    assert!(ContainerWriter::referencing(Vec::new(), &h, huge).is_err());
    // The same header written by hand: its body ends with the DTD's length and CRC.
    let id = DtdIdentity::of(&h.dtd);
    let bytes = ContainerWriter::referencing(Vec::new(), &h, id)
        .unwrap()
        .finish()
        .unwrap();
    let body_len = usize::from(bytes[8]);
    assert!(body_len < 0x80 && h.dtd.len() < 0x80);
    let mut body = bytes[9..9 + body_len].to_vec();
    body.truncate(body.len() - 5);
    body.put_varint(huge.length);
    body.put_u32(huge.crc32);
    let mut forged = bytes[..8].to_vec();
    forged.put_varint(body.len() as u64);
    forged.extend_from_slice(&body);
    let c = framing::crc(&forged);
    forged.put_u32(c);
    match ContainerReader::new(&forged[..]) {
        Err(Error::TooLarge { what, length, .. }) => {
            assert_eq!((what, length), ("referenced DTD", 1 << 60))
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a reference to a DTD of 2^60 bytes was accepted"),
    }
}

#[test]
fn varints_must_be_minimal_and_fit() {
    use super::framing::{Fields, PutLe};
    for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
        let mut out = Vec::new();
        out.put_varint(v);
        assert_eq!(Fields::new(&out, 0, "test").varint().unwrap(), v);
    }
    for bad in [
        &[0x80, 0x00][..],
        &[0xff; 11][..],
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02][..],
        &[0x80][..],
    ] {
        assert!(Fields::new(bad, 0, "test").varint().is_err(), "{bad:?}");
    }
}

#[test]
fn a_one_block_file_has_little_framing() {
    let data = vec![7u8; 100];
    let mut w =
        ContainerWriter::with_dtd_storage(Vec::new(), &header(), DtdStorage::Reference).unwrap();
    w.write_block(
        100,
        &[SectionData {
            number: 1,
            element_width: 1,
            codec: Codec::None,
            level: 0,
            bytes: &data,
        }],
    )
    .unwrap();
    let bytes = w.finish().unwrap();
    let props: usize = header()
        .properties
        .iter()
        .map(|(k, v)| 2 + k.len() + v.len())
        .sum();
    let framing = bytes.len() - data.len() - props - header().format.len();
    // Header: fixed 8, body length 1, format length 1, property count 1, DTD length 1 and
    // CRC-32 4, header CRC 4. Block: marker 4, three one-byte varints, section count 1,
    // descriptor 3 + 1 + 4, CRC 4. Index: marker 4, count 1, entry 1 + 1, CRC 4. Trailer 16.
    assert_eq!(framing, 20 + 20 + 11 + 16, "{framing}");
}

#[test]
fn output_is_identical_whatever_the_thread_count() {
    let write_with = |threads: usize| {
        let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
        w.set_threads(threads);
        for i in 0..40u32 {
            // Blocks of very different sizes, so workers finish out of order.
            let n = if i % 7 == 0 { 200_000 } else { 50 + i as usize };
            let a: Vec<u8> = (0..n as u32).flat_map(|k| (k * i).to_le_bytes()).collect();
            let b: Vec<u8> = (0..n).map(|k| (k % 13) as u8).collect();
            w.write_block(
                u64::from(i),
                &[
                    SectionData {
                        number: 0,
                        element_width: 0,
                        codec: Codec::Zstd,
                        level: 3,
                        bytes: &a,
                    },
                    SectionData {
                        number: 1,
                        element_width: 1,
                        codec: Codec::Gzip,
                        level: 6,
                        bytes: &b,
                    },
                ],
            )
            .unwrap();
        }
        assert_eq!(w.records_written(), (0..40).sum::<u64>());
        w.finish().unwrap()
    };
    let one = write_with(1);
    for threads in [2, 3, 8] {
        assert!(
            write_with(threads) == one,
            "{threads} threads changed the output"
        );
    }
    let (blocks, err) = read_all(&one);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(blocks.len(), 40);
}

#[test]
fn the_index_is_loaded_or_rebuilt_and_blocks_are_reached_by_seeking() {
    let bytes = write(Codec::Zstd);
    let (all, _) = read_all(&bytes);
    let want: Vec<IndexEntry> = all
        .iter()
        .map(|b| IndexEntry {
            offset: b.offset,
            first_record: b.first_record,
            record_count: b.record_count,
        })
        .collect();
    let (entries, why) = load_index(std::io::Cursor::new(&bytes)).unwrap();
    assert_eq!((entries.clone(), why), (want.clone(), None));

    // A damaged trailer: the index is rebuilt from the block headers, and the reason given.
    let mut damaged = bytes.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    let (rebuilt, why) = load_index(std::io::Cursor::new(&damaged)).unwrap();
    assert_eq!(rebuilt, want);
    assert!(why.unwrap().contains("trailer"));

    // A cut file: every block before the cut is indexed.
    let cut = &bytes[..all[2].offset as usize + 10];
    let (rebuilt, why) = load_index(std::io::Cursor::new(cut)).unwrap();
    assert_eq!(rebuilt, want[..2].to_vec());
    assert!(why.is_some());

    // Seeking straight to the last block returns it, checked, and then the end.
    let mut r = ContainerReader::new(std::io::Cursor::new(&bytes)).unwrap();
    r.seek_block(2, &entries[2]).unwrap();
    assert_eq!(r.next_block().unwrap().as_ref(), Some(&all[2]));
    assert!(r.next_block().unwrap().is_none());
    // An entry that names the wrong block number is caught when the block is read.
    let mut r = ContainerReader::new(std::io::Cursor::new(&bytes)).unwrap();
    r.seek_block(1, &entries[2]).unwrap();
    assert!(r.next_block().is_err());
}

#[test]
fn a_section_that_compression_would_grow_is_stored_as_is() {
    let tiny = b"abc".to_vec();
    let big = vec![0u8; 10_000];
    let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
    w.write_block(
        1,
        &[
            SectionData {
                number: 1,
                element_width: 1,
                codec: Codec::Zstd,
                level: 19,
                bytes: &tiny,
            },
            SectionData {
                number: 2,
                element_width: 1,
                codec: Codec::Zstd,
                level: 19,
                bytes: &big,
            },
        ],
    )
    .unwrap();
    let bytes = w.finish().unwrap();
    let mut r = ContainerReader::new(&bytes[..]).unwrap();
    let block = r.next_block().unwrap().unwrap();
    let codecs: Vec<Codec> = r.last_descriptors().iter().map(|d| d.codec).collect();
    assert_eq!(codecs, [Codec::None, Codec::Zstd]);
    assert_eq!(block.section(1).unwrap().bytes, tiny);
    assert_eq!(block.section(2).unwrap().bytes, big);
}

/// Reads blocks until the end or the first error, decompressing on `threads` threads.
fn read_all_threads(bytes: &[u8], threads: usize) -> (Vec<Block>, Option<String>) {
    let mut r = match ContainerReader::new(bytes) {
        Ok(r) => r,
        Err(e) => return (vec![], Some(e.to_string())),
    };
    r.set_threads(threads);
    let mut out = vec![];
    loop {
        match r.next_block() {
            Ok(Some(b)) => out.push(b),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

#[test]
fn parallel_decompression_reads_what_one_thread_reads_even_when_cut_or_damaged() {
    let bytes = write(Codec::Zstd);
    let (all, err) = read_all_threads(&bytes, 3);
    assert!(err.is_none());
    check_blocks(&all);
    for cut in 0..bytes.len() {
        let one = read_all_threads(&bytes[..cut], 1);
        for threads in [2, 3] {
            assert_eq!(
                read_all_threads(&bytes[..cut], threads),
                one,
                "cut at {cut}"
            );
        }
    }
    for at in (0..bytes.len()).step_by(7) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x20;
        assert_eq!(
            read_all_threads(&damaged, 3),
            read_all_threads(&damaged, 1),
            "byte {at} flipped"
        );
    }
}

#[test]
fn the_index_lists_each_blocks_threads_when_given() {
    let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
    let lists: [&[u64]; 3] = [&[7, 3, 3, 1 << 40], &[], &[5]];
    for (k, list) in lists.iter().enumerate() {
        w.set_block_threads(list);
        let bytes = [k as u8; 10];
        let data = [SectionData {
            number: 0,
            element_width: 0,
            codec: Codec::None,
            level: 0,
            bytes: &bytes,
        }];
        w.write_block(1, &data).unwrap();
    }
    let bytes = w.finish().unwrap();
    let want = vec![vec![3, 7, 1 << 40], vec![], vec![5]];
    let (entries, threads) = read_index_threads(&mut std::io::Cursor::new(&bytes)).unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(threads.as_ref(), Some(&want));
    // The sequential reader reads and checks the same lists at the end.
    let mut r = ContainerReader::new(&bytes[..]).unwrap();
    while r.next_block().unwrap().is_some() {}
    assert_eq!(r.block_threads(), Some(&want[..]));
    // A file written without thread lists has none, and its index keeps the `MTFI` marker.
    let plain = write(Codec::None);
    let (_, none) = read_index_threads(&mut std::io::Cursor::new(&plain)).unwrap();
    assert_eq!(none, None);
    // Every cut and every flipped byte of the lists is still caught.
    for cut in 0..bytes.len() {
        assert!(
            read_all_threads(&bytes[..cut], 1).1.is_some(),
            "cut at {cut}"
        );
    }
    for at in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x01;
        assert!(read_all_threads(&damaged, 1).1.is_some(), "byte {at}");
    }
}

#[test]
fn blocks_read_ahead_are_dropped_when_the_reader_seeks() {
    let bytes = write(Codec::Zstd);
    let (all, _) = read_all(&bytes);
    let (entries, _) = load_index(std::io::Cursor::new(&bytes)).unwrap();
    for threads in [1, 2, 3] {
        let mut r = ContainerReader::new(std::io::Cursor::new(&bytes)).unwrap();
        r.set_threads(threads);
        // The first call reads up to `threads` blocks ahead; seeking back must not return them.
        assert_eq!(r.next_block().unwrap().as_ref(), Some(&all[0]));
        r.seek_block(0, &entries[0]).unwrap();
        for want in &all {
            assert_eq!(r.next_block().unwrap().as_ref(), Some(want), "{threads}");
        }
        assert!(r.next_block().unwrap().is_none());
        r.seek_block(1, &entries[1]).unwrap();
        assert_eq!(r.next_block().unwrap().as_ref(), Some(&all[1]));
        // A new thread count takes effect with the blocks read from then on.
        r.set_threads(4 - threads);
        assert_eq!(r.next_block().unwrap().as_ref(), Some(&all[2]));
        assert!(r.next_block().unwrap().is_none());
    }
}

/// A first block with enough zstd bytes has its sections split between two threads
/// (`read_ahead::Split::First`): what it reads, and the error of a damaged section (the first
/// failing one's, in order), are what one thread reads.
#[test]
fn a_large_first_block_split_between_threads_reads_as_one_thread_does() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                // Half random, half runs: zstd has literals and matches to decode.
                if i % 64 < 32 {
                    (x >> 56) as u8
                } else {
                    (i / 64) as u8
                }
            })
            .collect()
    };
    let sections: Vec<Vec<u8>> = vec![noise(400_000), noise(300_000), noise(5), noise(200_000)];
    let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
    for _ in 0..2 {
        let data: Vec<SectionData> = sections
            .iter()
            .enumerate()
            .map(|(i, bytes)| SectionData {
                number: i as u8 + 1,
                element_width: 1,
                codec: Codec::Zstd,
                level: 1,
                bytes,
            })
            .collect();
        w.write_block(1, &data).unwrap();
    }
    let bytes = w.finish().unwrap();
    let (one, err) = read_all_threads(&bytes, 1);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(one.len(), 2);
    for (i, want) in sections.iter().enumerate() {
        assert_eq!(&one[0].section(i as u8 + 1).unwrap().bytes, want);
    }
    assert_eq!(read_all_threads(&bytes, 2), (one, None));
    // Damage inside the stored sections of the first block: each error as one thread's.
    for at in (200..bytes.len() / 2).step_by(bytes.len() / 40) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x41;
        assert_eq!(
            read_all_threads(&damaged, 2),
            read_all_threads(&damaged, 1),
            "byte {at} flipped"
        );
    }
}

/// A zstd section at level 3 (gzip for number 9, to mix codecs).
fn level3(number: u8, bytes: &[u8]) -> SectionData<'_> {
    SectionData {
        number,
        element_width: 1,
        codec: if number == 9 {
            Codec::Gzip
        } else {
            Codec::Zstd
        },
        level: 3,
        bytes,
    }
}

#[test]
fn sections_compressed_ahead_give_the_same_file() {
    // Four sections per block, of varied lengths; some of each block's are handed over ahead
    // (another block's none, the last's all), in another order than the block lists them.
    let blocks: Vec<Vec<(u8, Vec<u8>)>> = (0..6u32)
        .map(|b| {
            [3u8, 9, 4, 12]
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let len = 1000 + 90_000 * i * (b as usize % 3);
                    let bytes = (0..len as u32).map(|k| ((k * (b + 7)) % 251) as u8);
                    (n, bytes.collect())
                })
                .collect()
        })
        .collect();
    let write = |threads: usize, ahead: bool| {
        let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
        w.set_threads(threads);
        for (i, s) in blocks.iter().enumerate() {
            if ahead {
                let pick: &[u8] = match i % 3 {
                    0 => &[12, 4],
                    1 => &[],
                    _ => &[12, 9, 4, 3],
                };
                let early: Vec<SectionData<'_>> = pick
                    .iter()
                    .filter_map(|n| s.iter().find(|(m, _)| m == n))
                    .map(|(n, b)| level3(*n, b))
                    .collect();
                w.compress_ahead(&early).unwrap();
            }
            let all: Vec<SectionData<'_>> = s.iter().map(|(n, b)| level3(*n, b)).collect();
            w.write_block(i as u64, &all).unwrap();
        }
        w.finish().unwrap()
    };
    let plain = write(1, false);
    for threads in [1, 2, 3] {
        assert!(write(threads, true) == plain, "{threads} threads");
    }
}

#[test]
fn a_block_must_hold_what_was_compressed_ahead() {
    let a = vec![5u8; 50_000];
    let b: Vec<u8> = (0..50_000u32).map(|i| (i % 7) as u8).collect();
    // Left out of the block, other bytes, another level: an error, never a block made of
    // what was compressed ahead.
    let cases: [(Vec<SectionData<'_>>, bool); 4] = [
        (vec![level3(1, &a), level3(2, &b)], true),
        (vec![level3(2, &b)], false),
        (vec![level3(1, &b), level3(2, &b)], false),
        (
            vec![
                SectionData {
                    level: 4,
                    ..level3(1, &a)
                },
                level3(2, &b),
            ],
            false,
        ),
    ];
    for (i, (block, ok)) in cases.iter().enumerate() {
        let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
        w.set_threads(2);
        w.compress_ahead(&[level3(1, &a)]).unwrap();
        let r = w
            .write_block(1, block)
            .and_then(|()| w.finish().map(|_| ()));
        assert_eq!(r.is_ok(), *ok, "case {i}: {r:?}");
    }
    // One thread: nothing is compressed ahead, and the block is what it holds.
    let mut w = ContainerWriter::new(Vec::new(), &header()).unwrap();
    w.compress_ahead(&[level3(1, &a)]).unwrap();
    w.write_block(1, &[level3(2, &b)]).unwrap();
    w.finish().unwrap();
}

/// A header whose body is `body` and whose DTD storage byte is `storage`, with a correct CRC,
/// so that what a reader refuses is the body itself.
fn forged_header(storage: u8, body: &[u8]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[VERSION, 0, 2, storage]);
    out.put_varint(body.len() as u64);
    out.extend_from_slice(body);
    let crc = crc32fast::hash(&out);
    out.put_u32(crc);
    out
}

#[test]
fn a_context_mixed_dtd_is_shorter_and_damage_is_an_error() {
    // Shaped like an inferred DTD: records of numbered fields, each declared the same way.
    let mut dtd = String::from("tag.width = 1;\n");
    for r in 0..12 {
        dtd += &format!(
            "r{r} : (tag, a{r}, b{r}) {{ tag.value = {}; a{r}.width = 8; \
             a{r}.interpretation = none; b{r}.width = 8; b{r}.interpretation = none; }}\n",
            r + 1
        );
    }
    let h = ContainerHeader {
        dtd: dtd.clone(),
        ..header()
    };
    let write = |storage| {
        ContainerWriter::with_dtd_storage(Vec::new(), &h, storage)
            .unwrap()
            .finish()
            .unwrap()
    };
    let (mixed, zstd) = (write(DtdStorage::Mixed), write(DtdStorage::Compressed));
    assert!(
        mixed.len() < zstd.len(),
        "context-mixed {} bytes, zstd {}",
        mixed.len(),
        zstd.len()
    );
    assert_eq!(write(DtdStorage::Auto), mixed);
    assert_eq!(ContainerReader::new(&mixed[..]).unwrap().header(), &h);
    let mut body = Vec::new();
    body.put_varint(4);
    body.extend_from_slice(b"test");
    body.put_varint(0);
    // Claims over the limit, or more than the coded bytes can hold, are refused unread; a
    // claim the bytes cannot honestly hold is an error or other text, never a panic.
    for (claim, coded) in [(1u64 << 21, 3usize), (1 << 19, 1), (900, 2)] {
        let mut b = body.clone();
        b.put_varint(claim);
        b.put_varint(coded as u64);
        b.extend(std::iter::repeat_n(0x5a, coded));
        let forged = forged_header(3, &b);
        match ContainerReader::new(&forged[..]) {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(r) => assert_eq!(r.header().dtd.len() as u64, claim),
        }
        if claim > 1 << 18 {
            assert!(ContainerReader::new(&forged[..]).is_err(), "claim {claim}");
        }
    }
}
