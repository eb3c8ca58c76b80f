//! Allocation events ↔ the generated `hatf10.dtd` records.
//!
//! The mapping goes through the native encoding's data records ([`DataRecord`]), so that both
//! HATF forms agree on which record an event becomes and on the attribute bytes that carry
//! what a record has no field for; the only difference is that the DTD has one `realloc`
//! record where Appendix A has four tags (the native tag follows from the values).

use super::generated::{Alloc, CreateThread, DestroyThread, Free, Heap, Realloc};
use crate::formats::native::model::realloc_kind;
use crate::formats::native::{event_to_record, record_to_event, DataRecord, RecordKind};
use crate::shared::allocation::event::AllocEvent;

/// The record an event becomes.
pub fn to_record(event: &AllocEvent) -> Heap {
    let r = event_to_record(event);
    match r.kind {
        RecordKind::Alloc => Heap::Alloc(Alloc {
            size: r.size,
            address: r.address,
            time: r.time,
            thread: r.thread,
            heap: r.heap,
            vfield: r.attributes,
        }),
        RecordKind::Free => Heap::Free(Free {
            address: r.address,
            time: r.time,
            thread: r.thread,
            heap: r.heap,
            vfield: r.attributes,
        }),
        RecordKind::CreateThread => Heap::CreateThread(CreateThread {
            thread: r.thread,
            vfield: r.attributes,
        }),
        RecordKind::DestroyThread => Heap::DestroyThread(DestroyThread {
            thread: r.thread,
            vfield: r.attributes,
        }),
        // The four realloc tags, and the heap records no event produces (they would be
        // written as the realloc they cannot be; event_to_record never returns them).
        _ => Heap::Realloc(Realloc {
            size: r.size,
            address_1: r.old_address,
            address_2: r.address,
            time: r.time,
            thread: r.thread,
            heap: r.heap,
            vfield: r.attributes,
        }),
    }
}

/// The event a record stands for, or why it has none (heap records, a time or heap value,
/// attributes that are not the canonical ones [`to_record`] writes).
pub fn to_event(record: &Heap) -> Result<AllocEvent, String> {
    let r = match record {
        Heap::Alloc(a) => DataRecord {
            size: a.size,
            address: a.address,
            time: a.time,
            thread: a.thread,
            heap: a.heap,
            attributes: a.vfield.clone(),
            ..DataRecord::new(RecordKind::Alloc)
        },
        Heap::Free(f) => DataRecord {
            address: f.address,
            time: f.time,
            thread: f.thread,
            heap: f.heap,
            attributes: f.vfield.clone(),
            ..DataRecord::new(RecordKind::Free)
        },
        Heap::Realloc(r) => DataRecord {
            size: r.size,
            old_address: r.address_1,
            address: r.address_2,
            time: r.time,
            thread: r.thread,
            heap: r.heap,
            attributes: r.vfield.clone(),
            ..DataRecord::new(realloc_kind(r.address_1, r.address_2, r.size))
        },
        Heap::CreateThread(t) => DataRecord {
            thread: t.thread,
            attributes: t.vfield.clone(),
            ..DataRecord::new(RecordKind::CreateThread)
        },
        Heap::DestroyThread(t) => DataRecord {
            thread: t.thread,
            attributes: t.vfield.clone(),
            ..DataRecord::new(RecordKind::DestroyThread)
        },
        Heap::CreateHeap(_) | Heap::DestroyHeap(_) => {
            return Err("heap records have no allocation event".into())
        }
    };
    record_to_event(&r)
}
