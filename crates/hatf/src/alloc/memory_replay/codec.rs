//! Text ↔ container for Android `memory_replay` dumps.

use crate::alloc::fast_hash::FastMap;
use std::io::{Read, Write};

use metatf::container::ContainerHeader;

use super::kinds::{self, ReplayKinds};
use super::line::{self, Action, ReplayLine};
use super::{DTD, FORMAT, THREADS, VERBATIM};
use crate::alloc::blocks::{self, BlockWriter};
use crate::alloc::line_chunks::{for_each_chunk, for_each_line_of, ParsedChunk};
use crate::alloc::model::{ModelRecord, State, Streams};
use crate::alloc::text_lines::bad_line_unless_kept;
use crate::alloc::varint::put_u64;
use crate::format::{EncodeOptions, EncodeReport, FormatError};

/// Lines per block.
const BLOCK_RECORDS: u64 = 1 << 20;
/// Verbatim bytes that also end a block early.
const BLOCK_VERBATIM_BYTES: usize = 64 << 20;

struct Encoder {
    state: State,
    streams: Streams,
    threads_new: Vec<u8>,
    verbatim: Vec<u8>,
    threads: FastMap<u64, u32>,
    records: u64,
}

impl Encoder {
    fn model(&mut self, r: ModelRecord) {
        self.state.encode(&ReplayKinds, &r, &mut self.streams);
        self.records += 1;
    }

    fn verbatim(&mut self, text: &[u8], terminated: bool) {
        put_u64(&mut self.verbatim, text.len() as u64);
        self.verbatim.extend_from_slice(text);
        let kind = if terminated {
            kinds::VERBATIM
        } else {
            kinds::VERBATIM_UNTERMINATED
        };
        self.model(ModelRecord {
            kind,
            ..ModelRecord::default()
        });
    }

    fn thread(&mut self, tid: u64) -> u32 {
        if let Some(&id) = self.threads.get(&tid) {
            return id;
        }
        let id = self.threads.len() as u32;
        put_u64(&mut self.threads_new, tid);
        self.threads.insert(tid, id);
        id
    }

    fn flush<W: Write>(&mut self, out: &mut BlockWriter<W>) -> Result<(), FormatError> {
        if self.records == 0 {
            return Ok(());
        }
        let mut s: Vec<(u8, &[u8])> = self
            .streams
            .bytes
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u8, b.as_slice()))
            .collect();
        s.push((THREADS, &self.threads_new));
        s.push((VERBATIM, &self.verbatim));
        // The thread table starts empty at each block, so its keys are the block's threads.
        let tids: Vec<u64> = self.threads.keys().copied().collect();
        out.set_block_threads(&tids);
        out.block(self.records, &s)?;
        self.streams.clear();
        self.threads_new.clear();
        self.verbatim.clear();
        self.records = 0;
        // Each block starts a fresh model (docs/FORMAT.md §6.1): any block decodes on its own.
        self.state.restart_for_block();
        self.threads.clear();
        Ok(())
    }
}

/// Reads a `memory_replay` dump and writes the container.
pub fn encode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let header = ContainerHeader {
        dtd: DTD.to_string(),
        format: FORMAT.to_string(),
        properties: blocks::model_properties(),
    };
    let mut out = BlockWriter::new(output, &header, options)?;
    let report = encode_into(input, &mut out, options)?;
    out.finish()?;
    Ok(report)
}

/// How many lines ahead the model is asked to prefetch a line's live-block entry.
const PREFETCH_AHEAD: usize = 16;

/// One line as a parsing worker left it.
#[derive(Debug, Clone, Copy)]
struct ParsedLine {
    /// The line, unless it is stored verbatim.
    record: Option<ReplayLine>,
    /// The line has its `\n` (only the last line can lack it).
    terminated: bool,
    /// A line that did not parse, kept verbatim (`--keep-bad-lines`).
    bad: bool,
    /// The line without its `\n`: start and length in the chunk.
    at: usize,
    len: usize,
}

/// A chunk's lines, and the first line that did not parse when such lines are not kept.
#[derive(Default)]
struct ParsedLines {
    lines: Vec<ParsedLine>,
    /// The line that did not parse (0-based number in the chunk, start, length without the
    /// `\n`) and why; parsing stops there.
    error: Option<(u64, usize, usize, line::LineError)>,
}

impl ParsedChunk for ParsedLines {
    fn clear(&mut self) {
        self.lines.clear();
        self.error = None;
    }
}

/// Parses the lines of one chunk (on a worker thread).
fn parse_chunk(text: &[u8], out: &mut ParsedLines, keep_bad_lines: bool) -> u64 {
    for_each_line_of(text, |i, at, raw| {
        if out.error.is_some() {
            return;
        }
        let terminated = raw.last() == Some(&b'\n');
        let len = raw.len() - usize::from(terminated);
        let mut p = ParsedLine {
            record: None,
            terminated,
            bad: false,
            at,
            len,
        };
        if terminated {
            let text = &raw[..len];
            let core = text.strip_suffix(b"\r").unwrap_or(text);
            match line::parse_checked(core) {
                Ok((l, canonical)) => {
                    // Lines that parse but print back differently (CRLF, padding, leading
                    // zeros) stay verbatim.
                    let prints_back = canonical && core.len() == text.len();
                    if prints_back && !(l.action == Action::ThreadDone && l.ptr != 0) {
                        p.record = Some(l);
                    }
                }
                Err(_) if keep_bad_lines => p.bad = true,
                Err(e) => {
                    out.error = Some((i, at, len, e));
                    return;
                }
            }
        }
        out.lines.push(p);
    })
}

/// Encodes the text into an already opened block writer (also used for the zip front end).
pub fn encode_into<W: Write>(
    input: &mut dyn Read,
    out: &mut BlockWriter<W>,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    out.fast_level_for_long_traces(BLOCK_RECORDS);
    let mut enc = Encoder {
        state: State::for_block(),
        streams: Streams::default(),
        threads_new: Vec::new(),
        verbatim: Vec::new(),
        threads: FastMap::default(),
        records: 0,
    };
    let mut report = EncodeReport::default();
    let keep = options.keep_bad_lines;
    let lines = for_each_chunk(
        input,
        file,
        options.threads,
        |text, parsed: &mut ParsedLines| parse_chunk(text, parsed, keep),
        |first_line, chunk, parsed| {
            report.input_bytes += chunk.len() as u64;
            for (i, p) in parsed.lines.iter().enumerate() {
                // The model's live-block lookups wait for memory unless started early.
                if let Some(ahead) = parsed.lines.get(i + PREFETCH_AHEAD) {
                    if let Some(l) = &ahead.record {
                        enc.state.prefetch_block(l.ptr);
                        if l.action == Action::Realloc {
                            enc.state.prefetch_block(l.a);
                        }
                    }
                }
                report.bad_lines += u64::from(p.bad);
                match &p.record {
                    Some(l) => {
                        let site = enc.thread(l.tid);
                        enc.model(to_record(l, site));
                    }
                    None => enc.verbatim(&chunk[p.at..p.at + p.len], p.terminated),
                }
                if enc.records >= BLOCK_RECORDS || enc.verbatim.len() >= BLOCK_VERBATIM_BYTES {
                    enc.flush(out)?;
                }
            }
            if let Some((i, at, len, e)) = &parsed.error {
                return Err(bad_line_unless_kept(
                    file,
                    first_line + i,
                    e.column,
                    &e.message,
                    &chunk[*at..at + len],
                ));
            }
            Ok(())
        },
    )?;
    enc.flush(out)?;
    report.records = lines;
    Ok(report)
}

fn to_record(l: &ReplayLine, site: u32) -> ModelRecord {
    let kind = kinds::of(l.action);
    let mut r = ModelRecord {
        kind,
        site,
        addr: l.ptr,
        ..ModelRecord::default()
    };
    match l.action {
        Action::Malloc => r.size = l.a,
        Action::Calloc | Action::Memalign => {
            r.extra = l.a;
            r.size = l.b;
        }
        Action::Realloc => {
            r.old = l.a;
            r.size = l.b;
        }
        Action::Free | Action::ThreadDone => {}
    }
    r
}

// Decoding is in `decode.rs`; `mod.rs` and `zip.rs` call it through this module.
pub use super::decode::{decode, decode_records};
