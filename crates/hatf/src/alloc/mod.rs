//! Allocation traces: HATF 1.0 native, glibc mtrace, Android memory_replay, malloc-bench, wee_alloc.

pub mod event;

pub use event::{AllocEvent, AllocKind};

use crate::format::TraceFormat;

/// The allocation-trace formats, in detection order.
pub fn formats() -> Vec<&'static dyn TraceFormat> {
    Vec::new()
}
