//! HATF 1.0 native binary (the paper's Appendix A): records, metadata, a streaming reader, a writer
//! that widens fields instead of truncating, and the mapping to and from allocation events.
//!
//! The byte layout and every decision taken where the paper is unclear are in
//! `docs/FORMAT.md §3`.

pub mod codes;
pub mod decode;
pub mod encode;
pub mod error;
pub mod model;
pub mod record;
pub mod state;

pub use codes::{Field, Width};
pub use decode::NativeReader;
pub use encode::NativeWriter;
pub use error::NativeError;
pub use model::{event_to_record, read_events, record_to_event, write_events};
pub use record::{DataRecord, Record, RecordKind, Slot};
pub use state::{Config, Interpretation, Metadata};
