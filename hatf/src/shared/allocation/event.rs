//! The allocation events every allocation-trace format reduces to.
//!
//! Front ends (mtrace, memory_replay, ...) parse text into these events plus whatever they need to
//! give the text back byte for byte (call-site strings, verbatim lines); the paper's encodings
//! (simple binary, ASCII, HATF naive/best, split stream, SplitAddr) consume only the events.

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AllocKind {
    /// `malloc(size)` returned `address`.
    Malloc,
    /// `calloc(nmemb, size)` returned `address`; `size` is the total, `extra` is `nmemb`.
    Calloc,
    /// `memalign(align, size)` (or aligned malloc) returned `address`; `extra` is the alignment.
    Memalign,
    /// `free(address)`.
    Free,
    /// `realloc(old_address, size)` returned `address`.
    Realloc,
    /// A thread started (`thread` is its id).
    CreateThread,
    /// A thread finished.
    DestroyThread,
}

/// One allocation event. Fields that a kind does not use are 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AllocEvent {
    /// What happened.
    pub kind: AllocKind,
    /// Block address (or allocation id, for formats that number blocks instead of addresses).
    pub address: u64,
    /// For `Realloc`: the block that was resized (0 for realloc(NULL, n)).
    pub old_address: u64,
    /// Requested size in bytes (total size for calloc).
    pub size: u64,
    /// calloc's `nmemb` or memalign's alignment; 0 otherwise.
    pub extra: u64,
    /// Thread id, 0 when the format has no threads.
    pub thread: u64,
}

impl AllocEvent {
    /// An event of `kind` with every field 0.
    pub fn new(kind: AllocKind) -> Self {
        AllocEvent {
            kind,
            address: 0,
            old_address: 0,
            size: 0,
            extra: 0,
            thread: 0,
        }
    }
}
