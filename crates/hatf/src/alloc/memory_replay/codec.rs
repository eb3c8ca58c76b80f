//! Text ↔ container for Android `memory_replay` dumps.

use crate::alloc::fast_hash::FastMap;
use std::io::{BufWriter, Read, Write};

use metatf::container::{Block, ContainerHeader};

use super::kinds::{self, ReplayKinds};
use super::line::{self, Action, ReplayLine};
use super::{DTD, FORMAT, THREADS, VERBATIM};
use crate::alloc::blocks::{self, container_error, write_error, BlockWriter};
use crate::alloc::model::{stream, Cursors, ModelRecord, State, Streams};
use crate::alloc::text_lines::{bad_line_unless_kept, for_each_raw_line};
use crate::alloc::varint::{put_u64, Cursor};
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError};

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
        self.state = State::for_block();
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

/// Encodes the text into an already opened block writer (also used for the zip front end).
pub fn encode_into<W: Write>(
    input: &mut dyn Read,
    out: &mut BlockWriter<W>,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let mut enc = Encoder {
        state: State::for_block(),
        streams: Streams::default(),
        threads_new: Vec::new(),
        verbatim: Vec::new(),
        threads: FastMap::default(),
        records: 0,
    };
    let mut report = EncodeReport::default();
    let mut scratch = Vec::new();
    let lines = for_each_raw_line(input, file, |line_no, raw| {
        report.input_bytes += raw.len() as u64;
        let terminated = raw.last() == Some(&b'\n');
        let text = if terminated {
            &raw[..raw.len() - 1]
        } else {
            raw
        };
        if !terminated {
            enc.verbatim(text, false);
        } else {
            let core = text.strip_suffix(b"\r").unwrap_or(text);
            match line::parse(core) {
                Ok(l) => {
                    scratch.clear();
                    line::render(&l, &mut scratch);
                    if scratch != raw || l.action == Action::ThreadDone && l.ptr != 0 {
                        enc.verbatim(text, true);
                    } else {
                        let site = enc.thread(l.tid);
                        enc.model(to_record(&l, site));
                    }
                }
                Err(e) => {
                    if !options.keep_bad_lines {
                        return Err(bad_line_unless_kept(
                            file, line_no, e.column, &e.message, text,
                        ));
                    }
                    report.bad_lines += 1;
                    enc.verbatim(text, true);
                }
            }
        }
        if enc.records >= BLOCK_RECORDS || enc.verbatim.len() >= BLOCK_VERBATIM_BYTES {
            enc.flush(out)?;
        }
        Ok(())
    })?;
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

fn from_record(r: &ModelRecord, action: Action, tid: u64) -> ReplayLine {
    let (a, b) = match action {
        Action::Malloc => (r.size, 0),
        Action::Calloc | Action::Memalign => (r.extra, r.size),
        Action::Realloc => (r.old, r.size),
        Action::Free | Action::ThreadDone => (0, 0),
    };
    ReplayLine {
        tid,
        action,
        ptr: r.addr,
        a,
        b,
    }
}

/// Reads a container of the `memory-replay` format and writes the dump back.
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut reader = blocks::open(input, FORMAT, file)?;
    reader.set_threads(options.threads);
    let mut out = BufWriter::with_capacity(1 << 20, output);
    let lines = decode_blocks(&mut reader, &mut out, file)?;
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(lines)
}

/// Decodes every remaining block of `reader` into `out`.
pub fn decode_blocks<R: Read>(
    reader: &mut metatf::container::ContainerReader<R>,
    out: &mut dyn Write,
    file: &str,
) -> Result<u64, FormatError> {
    let mut d = Decoder::new(reader.header(), file)?;
    let mut lines = 0u64;
    while let Some(block) = reader.next_block().map_err(|e| container_error(file, e))? {
        d.block(&block, 0..u64::MAX, out)?;
        lines += block.record_count;
    }
    Ok(lines)
}

/// Decodes only records `first..end` (see [`crate::seek::decode_records`]).
pub fn decode_records(
    input: &mut dyn crate::seek::ReadSeek,
    output: &mut dyn Write,
    options: &DecodeOptions,
    range: std::ops::Range<u64>,
    note: crate::seek::Note<'_>,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut out = BufWriter::with_capacity(1 << 20, output);
    let mut d: Option<Decoder<'_>> = None;
    let written = crate::seek::decode_records(
        input,
        &[FORMAT],
        file,
        range.start,
        range.end,
        note,
        &mut |header| blocks::independent_blocks(header, file),
        &mut |header, block, keep| {
            if d.is_none() {
                d = Some(Decoder::new(header, file)?);
            }
            match d.as_mut() {
                Some(d) => d.block(block, keep, &mut out),
                None => Ok(()),
            }
        },
    )?;
    out.flush().map_err(|e| write_error(file, e))?;
    Ok(written)
}

/// What decoding carries from record to record; reset at each block of files whose blocks
/// are independent.
struct Decoder<'f> {
    file: &'f str,
    independent: bool,
    state: State,
    tids: Vec<u64>,
    text: Vec<u8>,
}

impl<'f> Decoder<'f> {
    fn new(
        header: &metatf::container::ContainerHeader,
        file: &'f str,
    ) -> Result<Self, FormatError> {
        Ok(Decoder {
            file,
            independent: blocks::independent_blocks(header, file)?,
            state: State::new(),
            tids: Vec::new(),
            text: Vec::with_capacity(1 << 20),
        })
    }

    /// Decodes every record of `block`, writing the text of those numbered `keep` (counted from
    /// the block's first record) to `out`.
    fn block(
        &mut self,
        block: &Block,
        keep: std::ops::Range<u64>,
        out: &mut dyn Write,
    ) -> Result<(), FormatError> {
        if self.independent {
            self.state = State::for_block();
            self.tids.clear();
        }
        let file = self.file;
        let at = |rec: u64, msg: String| FormatError {
            file: file.to_string(),
            position: format!("block {} record {}", block.index, rec),
            message: msg,
        };
        let model: [&[u8]; stream::COUNT] =
            std::array::from_fn(|i| blocks::section(block, i as u8));
        let mut c = Cursors::new(model);
        let mut threads = Cursor::new(blocks::section(block, THREADS), "threads");
        let mut verbatim = Cursor::new(blocks::section(block, VERBATIM), "verbatim");
        let text = &mut self.text;
        let mut k = 0u64;
        while let Some(kind) = c.next_kind() {
            let rec = block.first_record + k;
            let kind = kind.map_err(|m| at(rec, m))?;
            let r = self
                .state
                .decode(&ReplayKinds, kind, &mut c)
                .map_err(|m| at(rec, m))?;
            let mark = text.len();
            match kinds::action(kind) {
                Some(action) => {
                    let site = r.site as usize;
                    if site == self.tids.len() {
                        self.tids.push(threads.u64().map_err(|m| at(rec, m))?);
                    }
                    let tid = *self
                        .tids
                        .get(site)
                        .ok_or_else(|| at(rec, format!("unknown thread {site}")))?;
                    line::render(&from_record(&r, action, tid), text);
                }
                None if kind == kinds::VERBATIM || kind == kinds::VERBATIM_UNTERMINATED => {
                    let n = verbatim.u64().map_err(|m| at(rec, m))?;
                    let n =
                        usize::try_from(n).map_err(|_| at(rec, "verbatim line too long".into()))?;
                    text.extend_from_slice(verbatim.take(n).map_err(|m| at(rec, m))?);
                    if kind == kinds::VERBATIM {
                        text.push(b'\n');
                    }
                }
                None => return Err(at(rec, format!("unknown record kind {kind}"))),
            }
            if !keep.contains(&k) {
                // Decoded for the model's sake only.
                text.truncate(mark);
            }
            k += 1;
            if text.len() >= 1 << 20 {
                out.write_all(text).map_err(|e| write_error(file, e))?;
                text.clear();
            }
        }
        if k != block.record_count {
            return Err(at(
                block.first_record + k,
                format!(
                    "the block holds {k} records, its header says {}",
                    block.record_count
                ),
            ));
        }
        out.write_all(text).map_err(|e| write_error(file, e))?;
        text.clear();
        Ok(())
    }
}
