//! Allocation events ↔ HATF 1.0 data records.
//!
//! Malloc/Calloc/Memalign → `alloc` (0); Free → `free` (1); Realloc → one of the four realloc tags;
//! CreateThread/DestroyThread → 8/9. What a record has no field for travels in the attributes
//! string as canonical key/value entries (see [`encode_attributes`]), so the mapping is exact both
//! ways: every event comes back as it went in, and every record read back maps to the same bytes.

use super::decode::NativeReader;
use super::encode::NativeWriter;
use super::error::NativeError;
use super::record::{DataRecord, Record, RecordKind};
use crate::shared::allocation::event::{AllocEvent, AllocKind};
use std::io::{Read, Write};

/// Attribute keys (high nibble of an entry's first byte; the low nibble is the value's length).
pub mod key {
    /// The allocation was `calloc`; value = `nmemb`.
    pub const CALLOC: u8 = 1;
    /// The allocation was `memalign`; value = alignment.
    pub const MEMALIGN: u8 = 2;
    /// Size, for records without a size field (free, thread records).
    pub const SIZE: u8 = 3;
    /// `extra`, for events other than calloc/memalign.
    pub const EXTRA: u8 = 4;
    /// Address, for thread records.
    pub const ADDRESS: u8 = 5;
    /// Old address, for events other than realloc.
    pub const OLD_ADDRESS: u8 = 6;
}

fn push_entry(out: &mut Vec<u8>, k: u8, v: u64) {
    let bytes = super::state::minimal_be(v);
    out.push((k << 4) | bytes.len() as u8);
    out.extend_from_slice(&bytes);
}

/// The attributes string carrying what the record of `e` has no field for.
///
/// Each entry is one byte `key << 4 | n` then the value in `n` big-endian bytes without leading
/// zeros (0..=8); entries in increasing key order; SIZE/EXTRA/ADDRESS/OLD_ADDRESS only when non-zero.
/// A plain malloc, free or realloc therefore has empty attributes.
pub fn encode_attributes(e: &AllocEvent) -> Vec<u8> {
    let mut out = Vec::new();
    match e.kind {
        AllocKind::Calloc => push_entry(&mut out, key::CALLOC, e.extra),
        AllocKind::Memalign => push_entry(&mut out, key::MEMALIGN, e.extra),
        _ => {}
    }
    let no_size = matches!(
        e.kind,
        AllocKind::Free | AllocKind::CreateThread | AllocKind::DestroyThread
    );
    if no_size && e.size != 0 {
        push_entry(&mut out, key::SIZE, e.size);
    }
    if !matches!(e.kind, AllocKind::Calloc | AllocKind::Memalign) && e.extra != 0 {
        push_entry(&mut out, key::EXTRA, e.extra);
    }
    let thread_kind = matches!(e.kind, AllocKind::CreateThread | AllocKind::DestroyThread);
    if thread_kind && e.address != 0 {
        push_entry(&mut out, key::ADDRESS, e.address);
    }
    if e.kind != AllocKind::Realloc && e.old_address != 0 {
        push_entry(&mut out, key::OLD_ADDRESS, e.old_address);
    }
    out
}

/// The realloc tag Appendix A gives this outcome.
pub fn realloc_kind(old: u64, new: u64, size: u64) -> RecordKind {
    if old == 0 {
        RecordKind::ReallocAlloc
    } else if size == 0 || new == 0 {
        RecordKind::ReallocFree
    } else if old == new {
        RecordKind::ReallocNoAlloc
    } else {
        RecordKind::ReallocAllocFree
    }
}

/// The data record for an event.
pub fn event_to_record(e: &AllocEvent) -> DataRecord {
    let kind = match e.kind {
        AllocKind::Malloc | AllocKind::Calloc | AllocKind::Memalign => RecordKind::Alloc,
        AllocKind::Free => RecordKind::Free,
        AllocKind::Realloc => realloc_kind(e.old_address, e.address, e.size),
        AllocKind::CreateThread => RecordKind::CreateThread,
        AllocKind::DestroyThread => RecordKind::DestroyThread,
    };
    let mut r = DataRecord::new(kind);
    r.thread = e.thread;
    match kind {
        RecordKind::Alloc => {
            r.size = e.size;
            r.address = e.address;
        }
        RecordKind::Free => r.address = e.address,
        k if k.is_realloc() => {
            r.size = e.size;
            r.old_address = e.old_address;
            r.address = e.address;
        }
        _ => {}
    }
    r.attributes = encode_attributes(e);
    r
}

/// The event a data record stands for, or why it has none.
pub fn record_to_event(r: &DataRecord) -> Result<AllocEvent, String> {
    if r.heap != 0 {
        return Err(format!(
            "heap {} has no place in an allocation event",
            r.heap
        ));
    }
    if r.time != 0 {
        return Err(format!(
            "time {} has no place in an allocation event",
            r.time
        ));
    }
    let mut e = AllocEvent::new(match r.kind {
        RecordKind::Alloc => AllocKind::Malloc,
        RecordKind::Free => AllocKind::Free,
        RecordKind::CreateThread => AllocKind::CreateThread,
        RecordKind::DestroyThread => AllocKind::DestroyThread,
        RecordKind::CreateHeap | RecordKind::DestroyHeap => {
            return Err("heap records have no allocation event".into())
        }
        _ => AllocKind::Realloc,
    });
    e.thread = r.thread;
    e.size = r.size;
    e.address = r.address;
    e.old_address = r.old_address;
    if r.kind.is_realloc() {
        let expected = realloc_kind(r.old_address, r.address, r.size);
        if expected != r.kind {
            return Err(format!(
                "realloc tag {} does not match its old address, new address and size (they make tag {})",
                r.kind.tag(),
                expected.tag()
            ));
        }
    }
    decode_attributes(&r.attributes, &mut e)?;
    if encode_attributes(&e) != r.attributes {
        return Err(
            "attributes are not in canonical form (keys in order, no leading zero bytes, \
                    no zero values, keys that fit the record)"
                .into(),
        );
    }
    Ok(e)
}

fn decode_attributes(mut bytes: &[u8], e: &mut AllocEvent) -> Result<(), String> {
    while let Some((&head, rest)) = bytes.split_first() {
        let (k, n) = (head >> 4, usize::from(head & 0x0f));
        if n > 8 || rest.len() < n {
            return Err(format!("attribute entry {head:#04x} has a bad length"));
        }
        let v = rest[..n]
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        bytes = &rest[n..];
        match k {
            key::CALLOC if e.kind == AllocKind::Malloc => {
                e.kind = AllocKind::Calloc;
                e.extra = v;
            }
            key::MEMALIGN if e.kind == AllocKind::Malloc => {
                e.kind = AllocKind::Memalign;
                e.extra = v;
            }
            key::SIZE => e.size = v,
            key::EXTRA => e.extra = v,
            key::ADDRESS => e.address = v,
            key::OLD_ADDRESS => e.old_address = v,
            _ => return Err(format!("attribute key {k} is not known here")),
        }
    }
    Ok(())
}

/// Writes `events` as HATF 1.0 with the default configuration; the writer adds only the metadata
/// that values which do not fit require (the paper's "HATF naive"). Returns the bytes written.
pub fn write_events<W: Write>(events: &[AllocEvent], out: W) -> Result<W, NativeError> {
    let mut w = NativeWriter::new(out);
    for e in events {
        w.write_data(&event_to_record(e))?;
    }
    Ok(w.finish()?.0)
}

/// Reads every event of a HATF 1.0 stream; comments and metadata are skipped.
pub fn read_events<R: Read>(input: R) -> Result<Vec<AllocEvent>, NativeError> {
    collect_events(NativeReader::new(input))
}

/// Collects the events of any reader (plain or split-address).
pub fn collect_events<R: Read>(
    mut reader: NativeReader<'_, R>,
) -> Result<Vec<AllocEvent>, NativeError> {
    let mut events = Vec::new();
    while let Some(rec) = reader.read_record()? {
        if let Record::Data(d) = rec {
            let e = record_to_event(&d).map_err(|m| NativeError {
                offset: 0,
                record: reader.records_read() - 1,
                field: None,
                message: m,
            })?;
            events.push(e);
        }
    }
    Ok(events)
}
