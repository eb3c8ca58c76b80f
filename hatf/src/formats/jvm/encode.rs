//! Text trace → blocks of model streams: line ends, verbatim lines, block boundaries, and the
//! thread ids of each block for the container's index.

use std::io::{Read, Write};

use metatf::container::{ContainerHeader, PROPERTY_LAYOUT};

use super::line::{parse, Field, Parsed, Record};
use super::model::Model;
use super::streams::{Streams, COUNT, CRLF, KIND, UNTERMINATED, VERBATIM, VERBATIM_LINE};
use crate::format::{EncodeOptions, EncodeReport, FormatError};
use crate::shared::container::blocks::BlockWriter;
use crate::shared::text::line_reader::for_each_raw_line;
use crate::shared::text::lines::bad_line_unless_kept;

/// Stream bytes that also end a block early (bounds memory on long verbatim lines).
const BLOCK_BYTES: usize = 64 << 20;

/// How the encoder cuts the text into blocks; every block starts a fresh model (layout
/// [`super::LAYOUT`]), so any block decodes on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockPlan {
    /// Lines (records) per block; a block also ends early at 64 MiB of stream bytes.
    pub lines: u64,
}

impl BlockPlan {
    /// What `hatf encode` writes: blocks of 2^20 lines, each with a fresh model.
    pub const DEFAULT: BlockPlan = BlockPlan { lines: 1 << 20 };

    /// The header of a `format` file (`jvm` or `jvm-zip`) written with this plan: the DTD,
    /// `encoding = auto` and the layout.
    pub fn header(&self, format: &str) -> ContainerHeader {
        ContainerHeader {
            dtd: super::DTD.to_string(),
            format: format.to_string(),
            properties: vec![
                ("encoding".to_string(), "auto".to_string()),
                (PROPERTY_LAYOUT.to_string(), super::LAYOUT.to_string()),
            ],
        }
    }
}

/// Encodes every line of `input` into blocks of `out`, cut as `plan` says.
pub fn encode_into<W: Write>(
    input: &mut dyn Read,
    out: &mut BlockWriter<W>,
    options: &EncodeOptions,
    plan: BlockPlan,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let block_lines = plan.lines.max(1);
    let mut model = Model::new();
    let mut streams = Streams::default();
    let mut in_block = 0u64;
    let mut report = EncodeReport::default();
    let mut threads = BlockThreads::default();
    let flush =
        |streams: &mut Streams, threads: &mut BlockThreads, n: u64, out: &mut BlockWriter<W>| {
            let s: Vec<(u8, &[u8])> = (0..COUNT)
                .map(|i| (i as u8, streams.bytes[i].as_slice()))
                .collect();
            out.set_block_threads(&threads.take());
            out.block(n, &s)?;
            streams.clear();
            Ok::<(), FormatError>(())
        };
    let lines = for_each_raw_line(input, file, |line_no, raw| {
        report.input_bytes += raw.len() as u64;
        let (body, lf) = match raw.strip_suffix(b"\n") {
            Some(b) => (b, true),
            None => (raw, false),
        };
        let (core, crlf) = match body.strip_suffix(b"\r") {
            Some(c) if lf => (c, true),
            _ => (body, false),
        };
        let end_flags = if lf { 0 } else { UNTERMINATED };
        let parsed = match parse(core) {
            Ok(p) => Some(p),
            Err(e) => {
                if !options.keep_bad_lines {
                    return Err(bad_line_unless_kept(
                        file,
                        line_no,
                        e.column,
                        &format!("not a JVM trace record: {}", e.message),
                        core,
                    ));
                }
                report.bad_lines += 1;
                None
            }
        };
        if let Some(Parsed::Canonical(r) | Parsed::Spelled(r)) = &parsed {
            threads.add(r);
        }
        match parsed {
            Some(Parsed::Canonical(r)) => {
                let crlf = if crlf { CRLF } else { 0 };
                streams.byte(KIND, r.kind.code() | crlf | end_flags);
                model.encode(&r, &mut streams);
            }
            Some(Parsed::Spelled(_)) | None => {
                streams.byte(KIND, VERBATIM_LINE | end_flags);
                streams.text(VERBATIM, body);
            }
        }
        in_block += 1;
        if in_block >= block_lines || streams.len() >= BLOCK_BYTES {
            flush(&mut streams, &mut threads, in_block, out)?;
            in_block = 0;
            model = Model::new();
        }
        Ok(())
    })?;
    if in_block > 0 {
        flush(&mut streams, &mut threads, in_block, out)?;
    }
    report.records = lines;
    Ok(report)
}

/// The thread ids of one block's records, for the container's index (`docs/FORMAT.md §5`):
/// every record that names a thread (`TB TE MN MX FP`), whether stored through the model or
/// verbatim because it is spelled differently. Ids are the records' signed numbers reinterpreted
/// as 64-bit unsigned (two's complement), so a negative id is listed as a number ≥ 2⁶³.
#[derive(Default)]
pub struct BlockThreads {
    ids: std::collections::HashSet<u64>,
    last: Option<u64>,
}

impl BlockThreads {
    /// Notes the thread of `r`, if its kind has one.
    pub fn add(&mut self, r: &Record<'_>) {
        if !r.kind.fields().contains(&Field::Thread) {
            return;
        }
        let id = r.thread as u64;
        // Consecutive records mostly share a thread; the rest is sorted out in `take`.
        if self.last != Some(id) {
            self.last = Some(id);
            self.ids.insert(id);
        }
    }

    /// The ids noted since the last call, ascending, and a fresh start.
    pub fn take(&mut self) -> Vec<u64> {
        self.last = None;
        let mut ids: Vec<u64> = self.ids.drain().collect();
        ids.sort_unstable();
        ids
    }
}
