//! HATF 1.0 records as values.

use super::codes::{tag, Field};
use super::state::Metadata;

/// The ten data record kinds (tags 0..9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// Tag 0.
    Alloc,
    /// Tag 1.
    Free,
    /// Tag 2: resized in place.
    ReallocNoAlloc,
    /// Tag 3: moved (allocation and free).
    ReallocAllocFree,
    /// Tag 4: allocation only (`realloc(NULL, n)`).
    ReallocAlloc,
    /// Tag 5: free only (`realloc(p, 0)`).
    ReallocFree,
    /// Tag 6.
    CreateHeap,
    /// Tag 7.
    DestroyHeap,
    /// Tag 8.
    CreateThread,
    /// Tag 9.
    DestroyThread,
}

/// Where a value of a data record goes, in the order Appendix A lays the fields out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// [`DataRecord::size`].
    Size,
    /// [`DataRecord::old_address`] (realloc's first address).
    OldAddress,
    /// [`DataRecord::address`] (realloc's second, new, address).
    Address,
    /// [`DataRecord::thread`].
    Thread,
    /// [`DataRecord::heap`].
    Heap,
    /// [`DataRecord::time`].
    Time,
    /// [`DataRecord::attributes`].
    Attributes,
}

impl Slot {
    /// The field type whose width and interpretation apply.
    pub fn field(self) -> Field {
        match self {
            Slot::Size => Field::Size,
            Slot::OldAddress | Slot::Address => Field::Address,
            Slot::Thread => Field::Thread,
            Slot::Heap => Field::Heap,
            Slot::Time => Field::Time,
            Slot::Attributes => Field::Attributes,
        }
    }

    /// The name used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Slot::Size => "size",
            Slot::OldAddress => "old address",
            Slot::Address => "address",
            Slot::Thread => "thread",
            Slot::Heap => "heap",
            Slot::Time => "time",
            Slot::Attributes => "attributes",
        }
    }
}

impl RecordKind {
    /// The record tag.
    pub fn tag(self) -> u8 {
        match self {
            RecordKind::Alloc => tag::ALLOC,
            RecordKind::Free => tag::FREE,
            RecordKind::ReallocNoAlloc => tag::REALLOC_NO_ALLOC,
            RecordKind::ReallocAllocFree => tag::REALLOC_ALLOC_FREE,
            RecordKind::ReallocAlloc => tag::REALLOC_ALLOC,
            RecordKind::ReallocFree => tag::REALLOC_FREE,
            RecordKind::CreateHeap => tag::CREATE_HEAP,
            RecordKind::DestroyHeap => tag::DESTROY_HEAP,
            RecordKind::CreateThread => tag::CREATE_THREAD,
            RecordKind::DestroyThread => tag::DESTROY_THREAD,
        }
    }

    /// The data record kind with `tag`.
    pub fn from_tag(t: u8) -> Option<RecordKind> {
        Some(match t {
            tag::ALLOC => RecordKind::Alloc,
            tag::FREE => RecordKind::Free,
            tag::REALLOC_NO_ALLOC => RecordKind::ReallocNoAlloc,
            tag::REALLOC_ALLOC_FREE => RecordKind::ReallocAllocFree,
            tag::REALLOC_ALLOC => RecordKind::ReallocAlloc,
            tag::REALLOC_FREE => RecordKind::ReallocFree,
            tag::CREATE_HEAP => RecordKind::CreateHeap,
            tag::DESTROY_HEAP => RecordKind::DestroyHeap,
            tag::CREATE_THREAD => RecordKind::CreateThread,
            tag::DESTROY_THREAD => RecordKind::DestroyThread,
            _ => return None,
        })
    }

    /// True for the four realloc tags.
    pub fn is_realloc(self) -> bool {
        matches!(
            self,
            RecordKind::ReallocNoAlloc
                | RecordKind::ReallocAllocFree
                | RecordKind::ReallocAlloc
                | RecordKind::ReallocFree
        )
    }

    /// The fields of this record after the tag, in Appendix A's order.
    pub fn layout(self) -> &'static [Slot] {
        use Slot::*;
        match self {
            RecordKind::Alloc => &[Size, Address, Thread, Heap, Time, Attributes],
            RecordKind::Free => &[Address, Thread, Heap, Time, Attributes],
            RecordKind::ReallocNoAlloc
            | RecordKind::ReallocAllocFree
            | RecordKind::ReallocAlloc
            | RecordKind::ReallocFree => {
                &[Size, OldAddress, Address, Thread, Heap, Time, Attributes]
            }
            RecordKind::CreateHeap | RecordKind::DestroyHeap => &[Heap, Thread, Time, Attributes],
            RecordKind::CreateThread | RecordKind::DestroyThread => &[Thread, Time, Attributes],
        }
    }
}

/// A data record. Values of fields the kind does not have must be 0 (attributes empty).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataRecord {
    /// Which record.
    pub kind: RecordKind,
    /// Requested size.
    pub size: u64,
    /// Block address; for realloc the new address.
    pub address: u64,
    /// For realloc: the old address.
    pub old_address: u64,
    /// Thread.
    pub thread: u64,
    /// Heap.
    pub heap: u64,
    /// Time.
    pub time: u64,
    /// Attributes (a byte string; see docs/FORMAT.md §3).
    pub attributes: Vec<u8>,
}

impl DataRecord {
    /// A record of `kind` with every value 0.
    pub fn new(kind: RecordKind) -> Self {
        DataRecord {
            kind,
            size: 0,
            address: 0,
            old_address: 0,
            thread: 0,
            heap: 0,
            time: 0,
            attributes: Vec::new(),
        }
    }

    /// The numeric value in `slot` (0 for attributes).
    pub fn get(&self, slot: Slot) -> u64 {
        match slot {
            Slot::Size => self.size,
            Slot::OldAddress => self.old_address,
            Slot::Address => self.address,
            Slot::Thread => self.thread,
            Slot::Heap => self.heap,
            Slot::Time => self.time,
            Slot::Attributes => 0,
        }
    }

    /// Sets the numeric value in `slot` (ignored for attributes).
    pub fn set(&mut self, slot: Slot, v: u64) {
        match slot {
            Slot::Size => self.size = v,
            Slot::OldAddress => self.old_address = v,
            Slot::Address => self.address = v,
            Slot::Thread => self.thread = v,
            Slot::Heap => self.heap = v,
            Slot::Time => self.time = v,
            Slot::Attributes => {}
        }
    }

    /// The first value this kind has no field for that is not 0, if any.
    pub fn stray_value(&self) -> Option<Slot> {
        let layout = self.kind.layout();
        [
            Slot::Size,
            Slot::OldAddress,
            Slot::Address,
            Slot::Thread,
            Slot::Heap,
            Slot::Time,
        ]
        .into_iter()
        .find(|s| !layout.contains(s) && self.get(*s) != 0)
    }
}

/// Any HATF 1.0 record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Record {
    /// Tags 0..9.
    Data(DataRecord),
    /// Tag 10: at most 65535 bytes.
    Comment(Vec<u8>),
    /// Tag 11.
    Metadata(Metadata),
}
