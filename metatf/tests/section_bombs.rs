//! Section bombs: blocks whose checksums are all right but whose zstd sections expand to far
//! more than the file and its record count justify (a frame of a few kilobytes of zeros that
//! decompresses to tens of megabytes or a gigabyte), and blocks claiming more records than
//! their sections can hold. The reader must refuse them before allocating for them, within the
//! budget of `metatf::container::block_budget`.

mod hostile_support;

use hostile_support::counting_alloc::{measure, Counting};
use metatf::container::{
    block_budget, max_records, ContainerHeader, ContainerReader, ContainerWriter,
    BLOCK_BUDGET_FLOOR, MAX_RECORDS_PER_BYTE,
};
use metatf::Error;

#[global_allocator]
static ALLOC: Counting = Counting;

fn varint(v: u64, out: &mut Vec<u8>) {
    metatf::varint::put_u64(out, v);
}

/// One zstd section of a block: its number, its stored frame and what it claims to expand to
/// (length and CRC of the expansion).
struct Section {
    number: u8,
    frame: Vec<u8>,
    len: u64,
    crc: u32,
}

/// A section of `len` zeros, compressed honestly: every checksum is right.
fn zeros(number: u8, len: usize) -> Section {
    let data = vec![0u8; len];
    Section {
        number,
        frame: zstd::bulk::compress(&data, 3).unwrap(),
        len: len as u64,
        crc: crc32fast::hash(&data),
    }
}

/// A container of one block of `records` records holding `sections`, with a valid header,
/// block header, index and trailer: only the claims are hostile.
fn container(records: u64, sections: &[Section]) -> Vec<u8> {
    let header = ContainerHeader {
        dtd: "tag.width = 1;\n".into(),
        format: "bomb".into(),
        properties: vec![],
    };
    // The writer's own output for a file without blocks: header, index, trailer.
    let empty = ContainerWriter::new(Vec::new(), &header)
        .unwrap()
        .finish()
        .unwrap();
    // An index of no blocks is its marker, a count of 0 and a CRC: 9 bytes.
    let mut out = empty[..empty.len() - 16 - 9].to_vec();
    let at = out.len() as u64;
    let mut block = b"MTFB".to_vec();
    for v in [0, 0, records, sections.len() as u64] {
        varint(v, &mut block);
    }
    for s in sections {
        block.extend_from_slice(&[s.number, 1, 2]);
        varint(s.len, &mut block);
        varint(s.frame.len() as u64, &mut block);
        block.extend_from_slice(&crc32fast::hash(&s.frame).to_le_bytes());
        block.extend_from_slice(&s.crc.to_le_bytes());
    }
    block.extend_from_slice(&crc32fast::hash(&block).to_le_bytes());
    for s in sections {
        block.extend_from_slice(&s.frame);
    }
    out.extend_from_slice(&block);
    let index_at = out.len() as u64;
    let mut index = b"MTFI".to_vec();
    for v in [1, at, records] {
        varint(v, &mut index);
    }
    index.extend_from_slice(&crc32fast::hash(&index).to_le_bytes());
    out.extend_from_slice(&index);
    let mut trailer = index_at.to_le_bytes().to_vec();
    trailer.extend_from_slice(&crc32fast::hash(&trailer).to_le_bytes());
    trailer.extend_from_slice(b"MTFE");
    out.extend_from_slice(&trailer);
    out
}

/// Reads every block; the error that stopped it, if any.
fn read(bytes: &[u8]) -> Result<u64, Error> {
    let mut r = ContainerReader::new(bytes)?;
    let mut records = 0;
    while let Some(b) = r.next_block()? {
        records += b.record_count;
    }
    Ok(records)
}

#[test]
fn the_crafted_container_is_valid_when_it_claims_what_it_holds() {
    let file = container(1000, &[zeros(0, 1000), zeros(3, 4000)]);
    assert_eq!(read(&file).unwrap(), 1000);
}

/// Sections of `len` zeros, `count` of them in one block of 20,000 records.
fn bomb(count: u8, len: usize) -> Vec<u8> {
    let sections: Vec<Section> = (0..count).map(|n| zeros(n, len)).collect();
    container(20_000, &sections)
}

fn assert_refused_cheaply(file: &[u8]) {
    let (result, usage) = measure(|| read(file));
    match result {
        Err(Error::TooLarge { length, limit, .. }) => {
            assert!(length > limit, "{length} <= {limit}");
            assert!(limit <= block_budget(20_000, file.len() as u64));
        }
        other => panic!("a section bomb was not refused: {other:?}"),
    }
    // Nothing was decompressed: the claim was refused from the block header alone.
    assert!(
        usage.peak < 64 * file.len() + (1 << 20),
        "refusing a {}-byte bomb allocated {} bytes at once",
        file.len(),
        usage.peak
    );
}

#[test]
fn sections_expanding_past_the_block_budget_are_refused_before_decompressing() {
    // 4 × 24 MiB of zeros in a file of about 3 KB: each section alone is within the
    // 1 GiB section limit, together they exceed 16 MiB + 1 KiB per byte of the file.
    let file = bomb(4, 24 << 20);
    assert!(file.len() < 8_000, "{} bytes", file.len());
    assert_refused_cheaply(&file);
}

#[test]
fn a_block_within_its_budget_is_read_and_costs_no_more_than_the_budget() {
    // One section of 8 MiB of zeros: under the 16 MiB floor, so honest and readable; reading
    // holds the section once (plus the decompressor's context), not a multiple of it.
    let file = bomb(1, 8 << 20);
    let (result, usage) = measure(|| read(&file));
    assert_eq!(result.unwrap(), 20_000);
    assert!(
        usage.peak < (8 << 20) + (4 << 20),
        "reading an 8 MiB section held {} bytes at once",
        usage.peak
    );
    assert!(usage.peak < BLOCK_BUDGET_FLOOR as usize);
}

#[test]
fn record_counts_the_sections_cannot_hold_are_refused() {
    // 1,000 bytes of sections may claim at most 1,001 × 2^16 records.
    let most = max_records(1000);
    assert_eq!(most, 1001 * MAX_RECORDS_PER_BYTE);
    for records in [most + 1, 1 << 60, u64::MAX] {
        let file = container(records, &[zeros(0, 1000)]);
        match read(&file) {
            Err(Error::Corrupt { message, .. }) => {
                assert!(message.contains("records"), "{message}")
            }
            other => panic!("{records} records in 1,000 bytes were accepted: {other:?}"),
        }
    }
    assert_eq!(read(&container(most, &[zeros(0, 1000)])).unwrap(), most);
}

/// Four sections of 1 GiB of zeros (about 130 KB of file): without the budget every command
/// would decompress them and run out of memory; ignored because compressing 4 GiB of zeros
/// to build it takes several seconds.
#[test]
#[ignore]
fn four_gigabyte_sections_in_a_small_file_are_refused() {
    let one = zeros(0, 1 << 30);
    let sections: Vec<Section> = (0..4)
        .map(|n| Section {
            number: n,
            frame: one.frame.clone(),
            len: one.len,
            crc: one.crc,
        })
        .collect();
    let file = container(20_000, &sections);
    assert!(file.len() < 200_000, "{} bytes", file.len());
    assert_refused_cheaply(&file);
}
