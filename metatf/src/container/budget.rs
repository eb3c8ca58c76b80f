//! The most memory a block may make a reader allocate, derived from what the file itself holds,
//! and the counts a block may claim at all. Checked by the reader on every block header before
//! any section is read or decompressed; the writer checks the byte budget on every block before
//! writing it, so that every file written can be read back within the same budget.
//!
//! Why a budget and not only the 1 GiB section limit: a zstd frame of a few dozen kilobytes can
//! expand to 1 GiB, and a block may hold 256 sections, so a file of a hundred kilobytes could
//! otherwise claim (and, decompressing honestly, really fill) hundreds of gigabytes. A block's
//! claims are therefore bounded by two things the file cannot inflate without growing: its
//! record count (each record may bring at most [`BUDGET_PER_RECORD`] bytes) and the bytes of the
//! file up to the end of the block (each may expand to at most [`BUDGET_PER_FILE_BYTE`] bytes).

use super::block::BlockHeader;
use crate::error::Error;

/// Decompressed bytes any block may hold whatever its record count and position (16 MiB): room
/// for small blocks of large records and for short, very repetitive files.
pub const BLOCK_BUDGET_FLOOR: u64 = 16 << 20;

/// Decompressed bytes each record of a block may add to its budget (64 KiB), over all sections.
pub const BUDGET_PER_RECORD: u64 = 64 << 10;

/// Decompressed bytes each byte of the file, up to the end of the block, may add to the block's
/// budget. Real traces compress by a factor of 5 to 50; zstd can reach about 30,000 on runs of
/// one byte, which is what a crafted section uses.
pub const BUDGET_PER_FILE_BYTE: u64 = 1024;

/// The most decompressed bytes (all sections together) a block of `record_count` records that
/// ends `file_bytes` into the file may hold:
/// `BLOCK_BUDGET_FLOOR + min(BUDGET_PER_RECORD × records, BUDGET_PER_FILE_BYTE × file_bytes)`.
pub fn block_budget(record_count: u64, file_bytes: u64) -> u64 {
    let by_records = record_count.saturating_mul(BUDGET_PER_RECORD);
    let by_file = file_bytes.saturating_mul(BUDGET_PER_FILE_BYTE);
    BLOCK_BUDGET_FLOOR.saturating_add(by_records.min(by_file))
}

/// Most records a block may claim per decompressed byte of its sections (and for a block
/// without any). Format models code records in less than a bit each (a malloc-bench trace
/// holds 14 records per byte, a wee_alloc one 11), so this is no exact bound, only a ceiling
/// that no writer comes near and that turns absurd claims (2^60 records in a few kilobytes)
/// into errors; the exact count is checked by whatever decodes the records, which
/// `hatf verify` runs.
pub const MAX_RECORDS_PER_BYTE: u64 = 1 << 16;

/// The most records a block whose sections hold `bytes` decompressed bytes may claim:
/// [`MAX_RECORDS_PER_BYTE`] × (`bytes` + 1).
pub fn max_records(bytes: u64) -> u64 {
    bytes.saturating_add(1).saturating_mul(MAX_RECORDS_PER_BYTE)
}

/// Decompressed bytes of all the block's sections.
fn block_bytes(header: &BlockHeader) -> u64 {
    header
        .sections
        .iter()
        .fold(0u64, |sum, d| sum.saturating_add(d.uncompressed_len))
}

/// Checks a block header's claims, its decompressed size against [`block_budget`] and its
/// record count against [`max_records`]: `offset` is where the block starts (for messages)
/// and `end` where its section bytes end in the file. What a reader checks.
pub(crate) fn check_block(header: &BlockHeader, offset: u64, end: u64) -> Result<(), Error> {
    check_budget(header, offset, end)?;
    let bytes = block_bytes(header);
    if header.record_count > max_records(bytes) {
        return Err(Error::Corrupt {
            offset,
            message: format!(
                "block {} claims {} records but its sections hold {bytes} bytes, room for at most {}",
                header.index,
                header.record_count,
                max_records(bytes)
            ),
        });
    }
    Ok(())
}

/// Checks the block's decompressed size against [`block_budget`] only. What the writer checks:
/// a block over budget could be written by an honest caller (very repetitive data) and then
/// not be read back, while a wrong record count is the caller's mistake, which readers catch.
pub(crate) fn check_budget(header: &BlockHeader, offset: u64, end: u64) -> Result<(), Error> {
    let bytes = block_bytes(header);
    let budget = block_budget(header.record_count, end);
    if bytes > budget {
        return Err(Error::TooLarge {
            offset,
            what: "block's decompressed sections (its budget: 16 MiB + min(64 KiB per record, 1 KiB per byte of the file up to the block's end))",
            length: bytes,
            limit: budget,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::block::SectionDescriptor;
    use crate::container::Codec;

    fn header(record_count: u64, lens: &[u64]) -> BlockHeader {
        BlockHeader {
            index: 0,
            first_record: 0,
            record_count,
            sections: lens
                .iter()
                .enumerate()
                .map(|(i, &len)| SectionDescriptor {
                    number: i as u8,
                    element_width: 0,
                    codec: Codec::Zstd,
                    uncompressed_len: len,
                    stored_len: 10,
                    stored_crc: 0,
                    uncompressed_crc: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn budget_grows_with_the_smaller_of_records_and_file_bytes() {
        assert_eq!(block_budget(0, 1 << 40), BLOCK_BUDGET_FLOOR);
        assert_eq!(block_budget(1 << 40, 0), BLOCK_BUDGET_FLOOR);
        assert_eq!(
            block_budget(20_000, 36_000),
            BLOCK_BUDGET_FLOOR + 36_000 * BUDGET_PER_FILE_BYTE
        );
        assert_eq!(
            block_budget(10, 1 << 30),
            BLOCK_BUDGET_FLOOR + 10 * BUDGET_PER_RECORD
        );
        assert_eq!(block_budget(u64::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn a_section_bomb_is_refused_and_an_honest_block_passes() {
        // Four sections of 1 GiB in a 137 KB file of 20,000 records.
        let bomb = header(20_000, &[1 << 30; 4]);
        assert!(matches!(
            check_block(&bomb, 62, 137_000),
            Err(Error::TooLarge { .. })
        ));
        // The same block at the very end of a 4 GB file of many records is possible.
        let big = header(100_000, &[1 << 30; 4]);
        check_block(&big, 62, 4 << 30).unwrap();
        // A block of ordinary proportions: 40,000 records, 63 KB of sections, 13.5 KB of file.
        let honest = header(40_000, &[169, 1746, 92, 17655, 40010, 491, 2909]);
        check_block(&honest, 62, 13_545).unwrap();
    }

    #[test]
    fn record_counts_the_sections_cannot_hold_are_refused() {
        let lens = [169, 1746, 92, 17655, 40010, 491, 2909];
        let total: u64 = lens.iter().sum();
        let most = (total + 1) * MAX_RECORDS_PER_BYTE;
        check_block(&header(most, &lens), 62, 13_545).unwrap();
        for count in [most + 1, 1 << 60, u64::MAX] {
            assert!(matches!(
                check_block(&header(count, &lens), 62, 13_545),
                Err(Error::Corrupt { .. })
            ));
        }
        // A block of no records may still carry sections (values shared by later blocks).
        check_block(&header(0, &lens), 62, 13_545).unwrap();
        check_block(&header(0, &[]), 62, 100).unwrap();
        // Blocks of more than ten records per byte, as a trace repeating one operation
        // packs them, pass.
        check_block(&header(4_304_475, &[312_063]), 95, 1 << 20).unwrap();
        check_block(&header(46_076, &[4_094]), 66, 10_000).unwrap();
    }
}
