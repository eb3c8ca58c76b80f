//! Every format this build knows, in one list, in detection order, and the look-ups over it.
//!
//! The list lives here, apart from the trait in [`crate::format`], so that the formats' modules,
//! which implement the trait, do not depend on a module that names them all.

use crate::format::TraceFormat;
use crate::formats::{et, jvm, malloc_bench, memory_replay, mtrace, wee_alloc};

/// The allocation-trace formats, in detection order (most specific first).
pub fn allocation_formats() -> Vec<&'static dyn TraceFormat> {
    vec![
        &mtrace::Mtrace,
        &memory_replay::MemoryReplayZip,
        &memory_replay::MemoryReplay,
        &wee_alloc::WeeAlloc,
        &malloc_bench::MallocBench,
    ]
}

/// Every format this build knows, in detection order (most specific first).
pub fn registry() -> Vec<&'static dyn TraceFormat> {
    let mut formats = allocation_formats();
    formats.extend([
        &et::ET2 as &'static dyn TraceFormat,
        &et::ET3,
        &jvm::JVM_ZIP,
        &jvm::JVM,
    ]);
    formats
}

/// Finds a format by its name.
pub fn by_name(name: &str) -> Option<&'static dyn TraceFormat> {
    registry().into_iter().find(|f| f.name() == name)
}

/// Picks the first format whose detector accepts `head`.
pub fn detect(head: &[u8]) -> Option<&'static dyn TraceFormat> {
    registry().into_iter().find(|f| f.detect(head))
}
