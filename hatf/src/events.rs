//! Allocation events of the allocation formats' text traces: each trace read into a list of
//! [`AllocEvent`]s (malloc, calloc, memalign, free, realloc, thread start and end, with
//! address, size, old address and thread where the format has them), the form the paper's
//! encodings and `hatf stats` work from. For a binary `.hatf` file, or a trace too long to
//! hold in memory, read its records with [`crate::records`] instead.

pub use crate::formats::malloc_bench::read_events as read_malloc_bench;
pub use crate::formats::memory_replay::read_events as read_memory_replay;
pub use crate::formats::mtrace::read_events as read_mtrace;
pub use crate::formats::native::read_events as read_native;
pub use crate::formats::native::NativeError;
pub use crate::formats::wee_alloc::read_events as read_wee_alloc;
pub use crate::shared::allocation::{AllocEvent, AllocKind};
