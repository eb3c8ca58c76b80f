//! The Meta-TF container: a self-describing, streaming, checksummed file of blocks.
//!
//! Layout (framing integers are LEB128 varints or little-endian; see `docs/FORMAT.md §5`):
//! header (magic, version, class, byte order, DTD storage, format id, properties, DTD, CRC),
//! then blocks (marker, numbers, section descriptors, CRC, section bytes), then an index of the
//! blocks and a 16-byte trailer pointing at it. The header needs no counts, so it is written first; a file
//! cut anywhere still yields every complete block.

mod block;
mod budget;
mod codec;
pub mod compact;
pub mod context_mix;
mod contexts;
mod dtd_storage;
mod framing;
pub(crate) use framing::PutLe;
mod header;
mod index;
mod parallel;
mod read_ahead;
mod reader;
mod writer;

pub use block::{Block, DecodedSection, SectionData, SectionDescriptor};
pub use budget::{
    block_budget, max_records, BLOCK_BUDGET_FLOOR, BUDGET_PER_FILE_BYTE, BUDGET_PER_RECORD,
    MAX_RECORDS_PER_BYTE,
};
pub use codec::{zstd_compress, Codec, CONTEXT_MIX_MAX_SECTION, ZSTD_MAX_WINDOW_LOG};
pub use dtd_storage::{DtdIdentity, DtdStorage, COMPRESS_DTD_FROM};
pub use header::{
    ByteOrder, ContainerHeader, LAYOUT_UNIVERSAL, PROPERTY_BYTE_ORDER, PROPERTY_CLASS,
    PROPERTY_LAYOUT,
};
pub use index::{read_index, read_index_threads, IndexEntry, ParsedIndex, Trailer, TRAILER_LEN};
pub use reader::{load_index, scan_index, ContainerReader};
pub use writer::ContainerWriter;

/// First four bytes of every container (`"\x7fMTF"`, Appendix B of the paper).
pub const MAGIC: [u8; 4] = *b"\x7fMTF";
/// The container version this crate reads and writes.
pub const VERSION: u8 = 2;
/// Marker starting every block.
pub const BLOCK_MAGIC: [u8; 4] = *b"MTFB";
/// Marker starting the index.
pub const INDEX_MAGIC: [u8; 4] = *b"MTFI";
/// Marker starting an index that also lists the threads of each block.
pub const INDEX_THREADS_MAGIC: [u8; 4] = *b"MTFT";
/// Most thread ids one block's index entry may list (a damage check for readers).
pub const MAX_BLOCK_THREADS: u64 = 1 << 20;
/// Last four bytes of a complete container.
pub const END_MAGIC: [u8; 4] = *b"MTFE";
/// Largest section, compressed or not, that is written or read (1 GiB).
pub const MAX_SECTION_BYTES: u64 = 1 << 30;
/// Largest header body (format id, properties, DTD) that is written or read (64 MiB).
pub const MAX_HEADER_BODY: u64 = 64 << 20;
/// Most sections one block can hold: one per section number 0–255.
pub const MAX_SECTIONS_PER_BLOCK: usize = 256;

/// True when `head` starts with the container magic.
pub fn looks_like_container(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

#[cfg(test)]
mod tests;
