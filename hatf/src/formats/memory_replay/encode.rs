//! Text ↔ container for Android `memory_replay` dumps.

use metatf::hash::FastMap;
use std::io::{Read, Write};

use super::line::{self, Action, ReplayLine};
use super::model::{self, ReplayKinds};
use super::window::{self, TidPrefix, WINDOW};
use super::{DTD, FORMAT, THREADS, VERBATIM};
use crate::format::{EncodeOptions, EncodeReport, FormatError};
use crate::shared::allocation_model::threads::encode_worker::ModelEncoder;
use crate::shared::allocation_model::ModelRecord;
use crate::shared::container::blocks::{self, BlockWriter};
use crate::shared::container::ended_block::EndedBlock;
use crate::shared::text::line_chunks::{for_each_chunk, ParsedChunk};
use crate::shared::text::line_reader::for_each_line_of;
use crate::shared::text::lines::ChunkLineError;
use metatf::varint::put_u64;

struct Encoder {
    model: ModelEncoder<ReplayKinds>,
    threads_new: Vec<u8>,
    verbatim: Vec<u8>,
    threads: FastMap<u64, u32>,
    /// Per thread of the chunk being modelled ([`ParsedLines::threads`]): its id in this
    /// block, or [`NO_ID`] until the block first meets it.
    chunk_threads: Vec<u32>,
    records: u64,
    /// The block that ended and is not yet written (see [`Encoder::end_block`]).
    ended: EndedBlock,
}

impl Encoder {
    /// Models one record. Inlined into the loop over a chunk's records: as a call, saving and
    /// restoring registers around it would take about 15 of its 130 instructions per record.
    #[inline(always)]
    fn model(&mut self, r: ModelRecord) {
        self.model.encode(&r);
        self.records += 1;
    }

    fn verbatim(&mut self, text: &[u8], terminated: bool) {
        put_u64(&mut self.verbatim, text.len() as u64);
        self.verbatim.extend_from_slice(text);
        let kind = if terminated {
            model::VERBATIM
        } else {
            model::VERBATIM_UNTERMINATED
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

    /// The id in this block of thread `i` of the chunk being modelled, whose distinct thread
    /// ids are `threads`.
    #[inline]
    fn chunk_thread(&mut self, i: u32, threads: &[u64]) -> u32 {
        let known = self.chunk_threads[i as usize];
        if known != NO_ID {
            return known;
        }
        let id = self.thread(threads[i as usize]);
        self.chunk_threads[i as usize] = id;
        id
    }

    /// Ends the block being encoded, when it has records: the model's address thread
    /// finishes it while the next block starts, and [`EndedBlock::write`] writes it (the
    /// block ended before this one is written first).
    fn end_block<W: Write>(&mut self, out: &mut BlockWriter<W>) -> Result<(), FormatError> {
        let own = [&mut self.threads_new, &mut self.verbatim];
        // The thread table starts empty at each block, so its keys are the block's threads.
        let threads = self.threads.keys().copied();
        if !self
            .ended
            .end(&mut self.model, out, &mut self.records, own, threads)?
        {
            return Ok(());
        }
        // Each block starts a fresh model (docs/FORMAT.md §6.1; `end_block` restarted it):
        // any block decodes on its own.
        self.threads.clear();
        // The chunk's threads keep their ids, but their ids were this block's.
        self.chunk_threads.fill(NO_ID);
        Ok(())
    }

    /// Writes the block that ended, once the model completed it (waiting for that when
    /// `wait`).
    fn write_ended<W: Write>(
        &mut self,
        out: &mut BlockWriter<W>,
        wait: bool,
    ) -> Result<(), FormatError> {
        self.ended.write(&mut self.model, out, wait)
    }
}

/// Reads a `memory_replay` dump and writes the container.
pub fn encode(
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let header = blocks::auto_header(DTD, FORMAT, blocks::LAYOUT, []);
    let mut out = BlockWriter::new(output, &header, options)?;
    let report = encode_into(input, &mut out, options)?;
    out.finish()?;
    Ok(report)
}

/// How many lines ahead the model is asked to prefetch a line's live-block entry.
const PREFETCH_AHEAD: usize = 16;

/// No id: a chunk's thread whose id in the block is not known yet.
const NO_ID: u32 = u32::MAX;

/// A chunk's lines as the parsing worker left them, and the first line that did not parse
/// when such lines are not kept.
///
/// Each line is already the model's record, with `site` the index of its thread in
/// `threads` (the chunk's distinct thread ids), or for a verbatim line (`kind` `VERBATIM` or
/// `VERBATIM_UNTERMINATED`) the index of its text in `verbatim`. So the model's thread, the
/// slowest of an encode, only looks up each distinct thread once per chunk and reads one
/// 40-byte record per line.
#[derive(Default)]
struct ParsedLines {
    lines: Vec<ModelRecord>,
    /// The verbatim lines without their `\n`: start and length in the chunk.
    verbatim: Vec<(usize, usize)>,
    /// The chunk's distinct thread ids in order of first use.
    threads: Vec<u64>,
    /// Thread id → its index in `threads`.
    thread_index: FastMap<u64, u32>,
    /// Lines that did not parse, kept verbatim (`--keep-bad-lines`).
    bad_lines: u64,
    /// The line that did not parse; parsing stops there.
    error: Option<ChunkLineError>,
}

impl ParsedChunk for ParsedLines {
    fn clear(&mut self) {
        self.lines.clear();
        self.verbatim.clear();
        self.threads.clear();
        self.thread_index.clear();
        self.bad_lines = 0;
        self.error = None;
    }
}

impl ParsedLines {
    /// The index in `threads` of thread `tid`, added when new. `last` is the previous
    /// record's: most lines repeat it, and one comparison then saves a map lookup.
    #[inline]
    fn thread_index(&mut self, tid: u64, last: &mut u32) -> u32 {
        let index = if *last != NO_ID && self.threads[*last as usize] == tid {
            *last
        } else {
            let next = self.threads.len() as u32;
            let index = *self.thread_index.entry(tid).or_insert(next);
            if index == next {
                self.threads.push(tid);
            }
            index
        };
        *last = index;
        index
    }

    /// Adds the record of `l`, with its thread's index in the chunk (`last` as for
    /// [`ParsedLines::thread_index`]).
    fn push_record(&mut self, l: &ReplayLine, last: &mut u32) {
        let index = self.thread_index(l.tid, last);
        self.lines.push(model::record_of(l, index));
    }

    /// Adds a verbatim line whose text is `at..at + len` of the chunk.
    fn push_verbatim(&mut self, at: usize, len: usize, terminated: bool) {
        let kind = if terminated {
            model::VERBATIM
        } else {
            model::VERBATIM_UNTERMINATED
        };
        self.lines.push(ModelRecord {
            kind,
            site: self.verbatim.len() as u32,
            ..ModelRecord::default()
        });
        self.verbatim.push((at, len));
    }
}

/// What the quick reader keeps between the lines of a chunk: the `<tid>: ` of the last line
/// it read, and that thread's index in the chunk.
struct Recent {
    prefix: TidPrefix,
    index: u32,
}

/// Parses the lines of one chunk (on a worker thread): most through the quick reader
/// ([`window`]), the others (and the last few of the chunk, which have no whole window after
/// them) one at a time ([`parse_other`]).
fn parse_chunk(chunk: &[u8], out: &mut ParsedLines, keep_bad_lines: bool) -> u64 {
    let mut last = NO_ID;
    let mut recent = Recent {
        prefix: TidPrefix::NONE,
        index: NO_ID,
    };
    let mut i = 0u64;
    let mut at = 0usize;
    while let Some(s) = chunk.get(at..at + WINDOW) {
        let Ok(s) = <&[u8; WINDOW]>::try_from(s) else {
            break;
        };
        let line = window::Line::new(s);
        // The line's bytes with its `\n`.
        let raw_len = match line.len() {
            Some(len) if read_quickly(&line, at, len, out, &mut recent, &mut last) => len + 1,
            len => {
                // A line of 64 bytes or more (or the last, without a `\n`), or one that is
                // not in the recorder's form.
                let raw_len = match len {
                    Some(len) => len + 1,
                    None => {
                        let rest = &chunk[at..];
                        memchr::memchr(b'\n', rest).map_or(rest.len(), |n| n + 1)
                    }
                };
                parse_other(chunk, i, at, raw_len, out, keep_bad_lines, &mut last);
                if out.error.is_some() {
                    // Parsing stops at the error; the chunk's lines are counted all the same.
                    let rest = chunk.get(at + raw_len..).unwrap_or_default();
                    return i + 1 + for_each_line_of(rest, |_, _, _| {});
                }
                raw_len
            }
        };
        i += 1;
        at += raw_len;
    }
    let rest = chunk.get(at..).unwrap_or_default();
    i + for_each_line_of(rest, |j, start, raw| {
        if out.error.is_none() {
            parse_other(
                chunk,
                i + j,
                at + start,
                raw.len(),
                out,
                keep_bad_lines,
                &mut last,
            );
        }
    })
}

/// Reads the line `at..at + len` (its `\n` after it) with the quick reader and adds its
/// record: false when the reader cannot take it.
#[inline(always)]
fn read_quickly(
    line: &window::Line<'_>,
    at: usize,
    len: usize,
    out: &mut ParsedLines,
    recent: &mut Recent,
    last: &mut u32,
) -> bool {
    // `thread_done` prints its pointer as 0; any other stays verbatim (and its thread is
    // not one of the chunk's threads).
    let verbatim = |f: &window::Fields| f.kind == model::THREAD_DONE && f.addr != 0;
    let (index, f) = match line.starts_with(&recent.prefix) {
        Some(p) => match line.fields(p) {
            Some(f) if verbatim(&f) => return push_verbatim(out, at, len),
            Some(f) => (recent.index, f),
            None => return false,
        },
        None => {
            let Some((tid, p, prefix)) = line.tid() else {
                return false;
            };
            let f = match line.fields(p) {
                Some(f) if verbatim(&f) => return push_verbatim(out, at, len),
                Some(f) => f,
                None => return false,
            };
            let index = out.thread_index(tid, last);
            *recent = Recent { prefix, index };
            (index, f)
        }
    };
    *last = index;
    out.lines.push(ModelRecord {
        kind: f.kind,
        site: index,
        size: f.size,
        addr: f.addr,
        old: f.old,
        extra: f.extra,
    });
    true
}

/// Adds the verbatim line `at..at + len` (its `\n` after it); true.
#[cold]
fn push_verbatim(out: &mut ParsedLines, at: usize, len: usize) -> bool {
    out.push_verbatim(at, len, true);
    true
}

/// Parses line `i` of the chunk, at `at` and `raw_len` bytes long with its `\n` if any, one
/// byte at a time where need be: lines the quick reader does not take (long, or not in the
/// recorder's form, or not memory_replay lines at all) and the chunk's last few.
#[allow(clippy::too_many_arguments)]
fn parse_other(
    chunk: &[u8],
    i: u64,
    at: usize,
    raw_len: usize,
    out: &mut ParsedLines,
    keep_bad_lines: bool,
    last: &mut u32,
) {
    let raw = &chunk[at..at + raw_len];
    let terminated = raw.last() == Some(&b'\n');
    let len = raw.len() - usize::from(terminated);
    if !terminated {
        // Only the last line can lack its `\n`; it is stored as is, but strict mode refuses
        // it when it does not parse, as it would with a `\n`.
        let text = &raw[..len];
        if let Err(e) = line::parse_checked(text.strip_suffix(b"\r").unwrap_or(text)) {
            if !keep_bad_lines {
                out.error = Some(ChunkLineError::new(i, at, len, e));
                return;
            }
            out.bad_lines += 1;
        }
        out.push_verbatim(at, len, false);
        return;
    }
    let text = &raw[..len];
    // Most lines are exactly as the recorder prints them: one quick pass takes those.
    // (The line is read with the rest of the chunk after it: its last word needs no copy.)
    let parsed = match line::parse_canonical_in(&chunk[at..], len) {
        Some(l) => Some(l),
        None => {
            let core = text.strip_suffix(b"\r").unwrap_or(text);
            match line::parse_checked(core) {
                // Lines that parse but print back differently (CRLF, padding, leading
                // zeros) stay verbatim.
                Ok((l, canonical)) => (canonical && core.len() == text.len()).then_some(l),
                Err(_) if keep_bad_lines => {
                    out.bad_lines += 1;
                    None
                }
                Err(e) => {
                    out.error = Some(ChunkLineError::new(i, at, len, e));
                    return;
                }
            }
        }
    };
    match parsed {
        // `thread_done` prints its pointer as 0; any other stays verbatim.
        Some(l) if !(l.action == Action::ThreadDone && l.ptr != 0) => out.push_record(&l, last),
        _ => out.push_verbatim(at, len, true),
    }
}

/// Encodes the text into an already opened block writer (also used for the zip front end).
pub fn encode_into<W: Write>(
    input: &mut (dyn Read + Send),
    out: &mut BlockWriter<W>,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    out.fast_level();
    let mut enc = Encoder {
        model: ModelEncoder::new(ReplayKinds, options.threads),
        threads_new: Vec::new(),
        verbatim: Vec::new(),
        threads: FastMap::default(),
        chunk_threads: Vec::new(),
        records: 0,
        ended: EndedBlock::new([THREADS, VERBATIM], true),
    };
    let mut report = EncodeReport::default();
    let keep = options.keep_bad_lines;
    let block_records = blocks::model_block_records();
    // With more threads the model's address half runs on a thread of its own, which
    // prefetches for itself (should that thread not start, the model runs here unhelped: the
    // same output, a little slower).
    let prefetch = options.threads <= 1;
    let lines = for_each_chunk(
        input,
        file,
        options.threads,
        |text, parsed: &mut ParsedLines| parse_chunk(text, parsed, keep),
        |first_line, chunk, parsed| {
            report.input_bytes += chunk.len() as u64;
            report.bad_lines += parsed.bad_lines;
            enc.chunk_threads.clear();
            enc.chunk_threads.resize(parsed.threads.len(), NO_ID);
            for (i, p) in parsed.lines.iter().enumerate() {
                // The model's live-block lookups wait for memory unless started early (when
                // the model runs on this thread: its address thread prefetches for itself).
                if prefetch {
                    if let Some(ahead) = parsed.lines.get(i + PREFETCH_AHEAD) {
                        enc.model.prefetch_block(ahead.addr);
                        if ahead.old != 0 {
                            enc.model.prefetch_block(ahead.old);
                        }
                    }
                }
                match p.kind {
                    model::VERBATIM | model::VERBATIM_UNTERMINATED => {
                        let (at, len) = parsed.verbatim[p.site as usize];
                        enc.verbatim(&chunk[at..at + len], p.kind == model::VERBATIM);
                        // Only a verbatim line adds verbatim bytes: their limit is checked
                        // here alone.
                        if enc.records >= block_records
                            || enc.verbatim.len() >= blocks::BLOCK_VERBATIM_BYTES
                        {
                            enc.end_block(out)?;
                        }
                    }
                    _ => {
                        let mut r = *p;
                        r.site = enc.chunk_thread(p.site, &parsed.threads);
                        enc.model(r);
                        if enc.records >= block_records {
                            enc.end_block(out)?;
                        }
                    }
                }
            }
            enc.write_ended(out, false)?;
            if let Some(e) = &parsed.error {
                return Err(e.unless_kept(file, first_line, chunk));
            }
            Ok(())
        },
    )?;
    enc.end_block(out)?;
    enc.write_ended(out, true)?;
    report.records = lines;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::allocation::encode_checks::file_depends_on_the_text_alone;
    use crate::shared::format_parts::FormatParts;

    /// A dump whose threads repeat within and across chunks, with a few lines that are
    /// stored verbatim and one that does not parse.
    fn dump() -> Vec<u8> {
        let mut t = Vec::new();
        for i in 0..3000u64 {
            let tid = 100 + (i / 3 + i * i % 5) % 11;
            let ptr = 0xb600_0000u64 + (i % 89) * 0x20;
            let line = match i % 6 {
                0 => format!("{tid}: malloc 0x{ptr:x} {}\n", i % 500),
                1 => format!("{tid}: free 0x{ptr:x}\n"),
                2 => format!("{tid}: calloc 0x{ptr:x} {} 8\n", i % 9 + 1),
                3 => format!("{tid}: realloc 0x{:x} 0x{ptr:x} {}\n", ptr + 0x10, i % 77),
                4 => format!("{tid}: memalign 0x{ptr:x} 16 {}\n", i % 33),
                _ => format!("{tid}: thread_done 0x0\n"),
            };
            t.extend_from_slice(line.as_bytes());
            match i {
                500 => t.extend_from_slice(b"7: malloc 0x010 5\n"),
                900 => t.extend_from_slice(b"7: free 0x10\r\n"),
                1700 => t.extend_from_slice(b"7: thread_done 0x10\n"),
                2100 => t.extend_from_slice(b"not a memory_replay line\n"),
                _ => {}
            }
        }
        t.extend_from_slice(b"8: free 0x10");
        t
    }

    #[test]
    fn the_file_does_not_depend_on_chunks_threads_or_where_blocks_end() {
        file_depends_on_the_text_alone(
            &dump(),
            1,
            encode,
            <super::super::MemoryReplay as FormatParts>::DECODE,
        );
    }

    /// [`parse_chunk`] one line at a time through [`parse_other`] alone: what parsing a chunk
    /// did before the quick reader, and the reference it is checked against.
    fn parse_chunk_bytewise(chunk: &[u8], out: &mut ParsedLines, keep_bad_lines: bool) -> u64 {
        let mut last = NO_ID;
        for_each_line_of(chunk, |i, at, raw| {
            if out.error.is_none() {
                parse_other(chunk, i, at, raw.len(), out, keep_bad_lines, &mut last);
            }
        })
    }

    /// A line for [`chunks_parse_as_one_line_at_a_time`]: in the recorder's form (of a few
    /// threads, so that lines repeat the one before's thread, or of a long thread id), a
    /// realloc line past 32 or 64 bytes, or one that is not.
    fn any_line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let tid = prop_oneof![
            4 => (0u64..4).prop_map(|t| (200 + t).to_string()),
            1 => (0u64..u64::MAX).prop_map(|t| t.to_string()),
            1 => "0[0-9]{1,3}",
        ];
        let hex = prop_oneof![
            3 => (0u64..1 << 32).prop_map(|v| format!("0x{v:x}")),
            1 => (0u64..u64::MAX).prop_map(|v| format!("0x{v:x}")),
            1 => "0x0[0-9a-f]{0,3}",
        ];
        let num = prop_oneof![
            3 => (0u64..5000).prop_map(|v| v.to_string()),
            1 => (0u64..u64::MAX).prop_map(|v| v.to_string()),
            1 => "0[0-9]{1,2}",
        ];
        let op = (hex.clone(), hex, num.clone(), num, 0u8..7).prop_map(|(p, o, a, b, k)| match k {
            0 => format!("malloc {p} {a}"),
            1 => format!("free {p}"),
            2 => format!("calloc {p} {a} {b}"),
            3 => format!("memalign {p} {a} {b}"),
            4 => format!("realloc {p} {o} {b}"),
            5 => "thread_done 0x0".to_string(),
            _ => format!("thread_done {p}"),
        });
        prop_oneof![
            12 => (tid, op).prop_map(|(t, o)| format!("{t}: {o}\n")),
            1 => "[0-9a-z: \\r]{0,40}\n",
            1 => "[0-9]{1,4}: (malloc|free) 0x[0-9a-f]{1,8}( [0-9]{1,3})?\r?\n",
            1 => "[0-9]{1,4}:  free  0x10\n",
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// A chunk parses to the same records, verbatim lines, threads, bad lines and first
        /// error through the quick reader as one line at a time, wherever the chunk ends.
        #[test]
        fn chunks_parse_as_one_line_at_a_time(
            lines in proptest::collection::vec(any_line(), 0..120),
            cut in 0usize..200,
            keep in proptest::prelude::any::<bool>(),
        ) {
            let text = lines.concat();
            // The last line of the input may lack its `\n`.
            let text = text.as_bytes();
            let text = &text[..text.len().saturating_sub(cut % 3)];
            let (mut quick, mut bytewise) = (ParsedLines::default(), ParsedLines::default());
            quick.clear();
            bytewise.clear();
            let n = parse_chunk(text, &mut quick, keep);
            proptest::prop_assert_eq!(n, parse_chunk_bytewise(text, &mut bytewise, keep));
            proptest::prop_assert_eq!(&quick.lines, &bytewise.lines);
            proptest::prop_assert_eq!(&quick.verbatim, &bytewise.verbatim);
            proptest::prop_assert_eq!(&quick.threads, &bytewise.threads);
            proptest::prop_assert_eq!(quick.bad_lines, bytewise.bad_lines);
            proptest::prop_assert_eq!(&quick.error, &bytewise.error);
        }
    }
}
