//! What a container holds, block by block and section by section, read with every checksum
//! verified: the facts `hatf inspect` shows.

use serde::Serialize;
use std::io::Read;

use crate::container::{ByteOrder, ContainerReader, DtdIdentity, DtdStorage, SectionDescriptor};
use crate::error::Error;

/// What [`inspect`] finds in a container.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    /// Producer format id.
    pub format: String,
    /// Header properties in order.
    pub properties: Vec<(String, String)>,
    /// Byte order of the trace data.
    pub byte_order: ByteOrder,
    /// The DTD text: embedded, or supplied by [`Inspection::resolve_dtd`] for a file that
    /// references it (empty until then).
    pub dtd: String,
    /// How the file stores its DTD.
    pub dtd_storage: DtdStorage,
    /// Length and CRC-32 of a DTD the file references instead of carrying.
    pub dtd_reference: Option<DtdIdentity>,
    /// Every block with its section descriptors.
    pub blocks: Vec<BlockInfo>,
    /// Records in all blocks.
    pub total_records: u64,
    /// Size of the container in bytes (header, blocks, index and trailer).
    pub total_bytes: u64,
    /// Size on disk of a compact container (version 3); `total_bytes` and block offsets are
    /// then those of the full form it encodes.
    pub compact_bytes: Option<u64>,
}

/// One block as [`inspect`] reports it.
#[derive(Debug, Clone, Serialize)]
pub struct BlockInfo {
    /// Block number.
    pub index: u64,
    /// Byte offset of the block header.
    pub offset: u64,
    /// Number of the block's first record.
    pub first_record: u64,
    /// Records in the block.
    pub record_count: u64,
    /// The block's sections: number, element width, codec, sizes, checksums.
    pub sections: Vec<SectionDescriptor>,
    /// The thread ids of the block's records, when the index lists them (else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<u64>,
}

/// Reads a whole container, verifying every checksum, and describes it.
pub fn inspect(r: impl Read) -> Result<Inspection, Error> {
    let mut c = ContainerReader::new(r)?;
    let header = c.header().clone();
    let (dtd_storage, dtd_reference) = (c.dtd_storage(), c.dtd_reference());
    let byte_order = header.byte_order()?;
    let mut blocks = Vec::new();
    while let Some(b) = c.next_block()? {
        blocks.push(BlockInfo {
            index: b.index,
            offset: b.offset,
            first_record: b.first_record,
            record_count: b.record_count,
            sections: c.last_descriptors().to_vec(),
            threads: Vec::new(),
        });
    }
    if let Some(lists) = c.block_threads() {
        for (b, list) in blocks.iter_mut().zip(lists) {
            b.threads.clone_from(list);
        }
    }
    Ok(Inspection {
        format: header.format,
        properties: header.properties,
        byte_order,
        dtd: header.dtd,
        dtd_storage,
        dtd_reference,
        blocks,
        total_records: c.records_read(),
        total_bytes: c.position(),
        compact_bytes: c.compact_len(),
    })
}

impl Inspection {
    /// Supplies the text of a referenced DTD when `text` is the one the file names (same
    /// length and CRC-32); returns whether it was accepted.
    pub fn resolve_dtd(&mut self, text: &str) -> bool {
        match self.dtd_reference {
            Some(id) if self.dtd.is_empty() && id.matches(text) => {
                self.dtd = text.to_string();
                true
            }
            _ => false,
        }
    }
}
