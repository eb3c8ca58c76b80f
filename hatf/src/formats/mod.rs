//! One folder per trace format, each laid out alike, a file per job: `mod.rs` registers the
//! format ([`FormatParts`](crate::internal::shared::format_parts::FormatParts): name, detection,
//! entry points); `line.rs` recognises and parses a line of its text (malloc-bench, a protobuf,
//! has `proto.rs` instead); `model.rs` is what encoder and decoder both know (kind codes,
//! predictions, how a record becomes stored symbols); `encode.rs` and `decode.rs` write and read
//! the container; `records.rs` decodes a range of records (`decode --records`, the typed
//! export); `check.rs` is what `hatf validate` and `hatf stats` read (for an allocation trace,
//! its allocation events, checked and counted by [`shared`](crate::internal::shared)). A format
//! lacks a file whose job it does not have or that the shared code does for it. The extra files
//! are each a format's own: et's `sections/` and `text/`, jvm's `streams.rs`, `tables.rs` and
//! `zip.rs`, memory_replay's `window.rs` (the encoder's fast line reader) and `zip.rs`,
//! malloc-bench's `mixed_parts.rs`, wee_alloc's `structured.rs` (its bit coding). `native`
//! (HATF 1.0 binary) and `hatf10_dtd` are encodings of allocation events, not text formats:
//! `model.rs` maps events to their records; native adds its codes, state and error. What several
//! formats use is in [`shared`](crate::internal::shared); no format imports another.

pub mod et;
pub mod hatf10_dtd;
pub mod jvm;
pub mod malloc_bench;
pub mod memory_replay;
pub mod mtrace;
pub mod native;
pub mod wee_alloc;
