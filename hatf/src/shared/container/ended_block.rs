//! The block a model encoder (mtrace, memory_replay) ended last and has not written yet.
//!
//! When a block ends, the model's address thread still has its records to finish while the
//! caller parses the next block; the block is written once the model completed it. Meanwhile
//! the block's other streams are final: the front end's own two (strings or thread ids, and
//! verbatim lines) and the model's site half, which go to compression at once.

use std::io::Write;

use crate::format::FormatError;
use crate::shared::allocation_model::threads::encode_worker::{model_error, ModelEncoder};
use crate::shared::allocation_model::KindTable;
use crate::shared::container::blocks::BlockWriter;

/// The block ended last, with what the front end wrote of it besides the model's streams.
#[derive(Debug)]
pub struct EndedBlock {
    records: u64,
    /// The front end's own streams of the block: their numbers and bytes.
    streams: [(u8, Vec<u8>); 2],
    /// The block's thread ids, for a front end whose blocks list them (memory_replay).
    threads: Option<Vec<u64>>,
}

impl EndedBlock {
    /// No block yet, for a front end whose own streams are numbered `streams`, and whose
    /// blocks list their threads when `lists_threads`.
    pub fn new(streams: [u8; 2], lists_threads: bool) -> Self {
        EndedBlock {
            records: 0,
            streams: streams.map(|id| (id, Vec::new())),
            threads: lists_threads.then(Vec::new),
        }
    }

    /// Ends the block being encoded, unless it has no records (then false): writes the block
    /// ended before it (waiting for the model), tells the model the block ended, takes the
    /// block's record count and its own streams `own` (leaving them empty, with memory of
    /// earlier blocks) and, when the blocks list them, its `threads`, and hands the block's
    /// final streams to compression.
    pub fn end<K, W>(
        &mut self,
        model: &mut ModelEncoder<K>,
        out: &mut BlockWriter<W>,
        records: &mut u64,
        own: [&mut Vec<u8>; 2],
        threads: impl Iterator<Item = u64>,
    ) -> Result<bool, FormatError>
    where
        K: KindTable + Send + Sync + Copy + 'static,
        W: Write,
    {
        if *records == 0 {
            return Ok(false);
        }
        self.write(model, out, true)?;
        model.end_block().map_err(|m| model_error(out.file(), m))?;
        for ((_, ended), current) in self.streams.iter_mut().zip(own) {
            std::mem::swap(ended, current);
        }
        if let Some(ids) = &mut self.threads {
            ids.clear();
            ids.extend(threads);
        }
        self.records = std::mem::take(records);
        // The last block's would otherwise be compressed after the address thread finished
        // it, with the rest.
        let mut ahead = model.site_sections();
        ahead.extend(self.streams.iter().map(|(id, s)| (*id, s.as_slice())));
        out.block_ahead(&ahead)?;
        Ok(true)
    }

    /// Writes the block, once the model completed it (waiting for that when `wait`); nothing
    /// when no block waits.
    pub fn write<K, W>(
        &mut self,
        model: &mut ModelEncoder<K>,
        out: &mut BlockWriter<W>,
        wait: bool,
    ) -> Result<(), FormatError>
    where
        K: KindTable + Send + Sync + Copy + 'static,
        W: Write,
    {
        let file = out.file().to_string();
        let complete = model.ended_block(wait).map_err(|m| model_error(&file, m))?;
        if !complete {
            return Ok(());
        }
        let mut sections = model.packed_sections().map_err(|m| model_error(&file, m))?;
        sections.extend(self.streams.iter().map(|(id, s)| (*id, s.as_slice())));
        if let Some(ids) = &self.threads {
            out.set_block_threads(ids);
        }
        out.block(self.records, &sections)?;
        model.clear_ended();
        for (_, s) in &mut self.streams {
            s.clear();
        }
        self.records = 0;
        Ok(())
    }
}
