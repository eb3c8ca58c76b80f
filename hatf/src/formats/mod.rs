//! One folder per trace format, each laid out alike: `mod.rs` implements
//! [`TraceFormat`](crate::TraceFormat), `line.rs` recognises and parses lines, `encode.rs` and
//! `decode.rs` convert, `check.rs` and `stats.rs` validate and count, `entries.rs` types the
//! records, where the format has that job. What several formats use is in
//! [`shared`](crate::internal::shared); no format imports another.

pub mod et;
pub mod hatf10_dtd;
pub mod jvm;
pub mod malloc_bench;
pub mod memory_replay;
pub mod mtrace;
pub mod native;
pub mod wee_alloc;
