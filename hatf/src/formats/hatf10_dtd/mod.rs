//! The `hatf10-dtd` encoding: allocation events as the HATF 1.0 records of `dtds/hatf10.dtd`,
//! written and read by the typed codec that the DTD compiler generates from that file at build
//! time (`hatf/build.rs`, [`generated`]).
//!
//! The output is an ordinary Meta-TF container that carries `hatf10.dtd`, with the byte layout
//! of the universal codec: the universal reader and `hatf dump` read it with no knowledge of
//! this module, and the universal writer given the same records writes the same bytes.
//!
//! What it keeps: the allocation events ([`AllocEvent`]), exactly; what a record has no field
//! for (calloc's `nmemb`, memalign's alignment, rare values) travels in the record's `vfield`
//! as the native encoding's canonical attribute entries ([`native::model::encode_attributes`]).
//! What it loses, like the paper's encodings ([`crate::paper`]): everything of the text
//! that is not an event — call sites and return addresses (mtrace `@ caller`), marker,
//! comment and header lines, timestamps, spacing and number spelling. The formats therefore
//! offer it among their *event* encodings (`TraceFormat::event_encodings`), not among the
//! lossless `encodings`; `hatf encode` says so, and `hatf decode` refuses the file (its header
//! names the DTD's format `heap`, not a text format) and points at `hatf dump`. The lossless
//! path for a text trace stays the format's `auto`.
//!
//! [`native::model::encode_attributes`]: crate::formats::native::model::encode_attributes

mod encode;
mod model;

pub use encode::encode_text;
pub use model::{to_event, to_record};

use std::io::{Read, Write};

use metatf::typed::{TypedReader, TypedWriter};
use metatf::Codec;

use crate::shared::allocation::event::AllocEvent;

/// Rust types generated from `dtds/hatf10.dtd` by `metatf_dtd::codegen` (see `build.rs`):
/// one struct per record and the enum [`generated::Heap`] of section `heap`.
pub mod generated {
    metatf::include_dtd!("hatf10");
}

/// The encoding's name on the command line and in `hatf compare`.
pub const NAME: &str = "hatf10-dtd";

/// What the allocation formats return from `TraceFormat::event_encodings`: this encoding
/// keeps the events, not the text, so it is not among their lossless `encodings`.
pub const EVENT_ENCODINGS: &[&str] = &[NAME];

/// Header property naming the text format the events came from (information only).
pub const SOURCE_PROPERTY: &str = "source-format";

/// Writes allocation events as `hatf10.dtd` records into a container, through the generated
/// writer.
pub struct EventWriter<W: Write> {
    inner: TypedWriter<generated::Heap, W>,
    events: u64,
}

impl<W: Write> EventWriter<W> {
    /// Starts a container on `out` with header `properties`, compressing sections with
    /// `codec` at `level`.
    pub fn new(
        out: W,
        properties: Vec<(String, String)>,
        codec: Codec,
        level: i32,
    ) -> Result<Self, String> {
        let inner = TypedWriter::with_properties(out, properties, codec, level)
            .map_err(|e| e.to_string())?;
        Ok(EventWriter { inner, events: 0 })
    }

    /// Writes one event as one record (plus any metadata record a value needs).
    pub fn write(&mut self, event: &AllocEvent) -> Result<(), String> {
        self.inner
            .write(&to_record(event))
            .map_err(|e| format!("event {}: {e}", self.events))?;
        self.events += 1;
        Ok(())
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Writes the last block, the index and the trailer.
    pub fn finish(self) -> Result<W, String> {
        self.inner.finish().map_err(|e| e.to_string())
    }
}

/// `events` as an uncompressed container (what `hatf compare` measures).
pub fn encode(events: &[AllocEvent]) -> Result<Vec<u8>, String> {
    let mut w = EventWriter::new(Vec::new(), Vec::new(), Codec::None, 0)?;
    for e in events {
        w.write(e)?;
    }
    w.finish()
}

/// Every event of a container written by [`EventWriter`] (or by any writer of `hatf10.dtd`
/// records), read through the generated reader. Comments and metadata records are applied
/// or skipped; heap records, times and non-canonical attributes are errors, since no event
/// holds them.
pub fn decode<R: Read>(input: R) -> Result<Vec<AllocEvent>, String> {
    let reader = TypedReader::<generated::Heap, _>::new(input).map_err(|e| e.to_string())?;
    let mut events = Vec::new();
    for (i, record) in reader.enumerate() {
        let record = record.map_err(|e| e.to_string())?;
        events.push(to_event(&record).map_err(|m| format!("event {i}: {m}"))?);
    }
    Ok(events)
}

#[cfg(test)]
mod tests;
