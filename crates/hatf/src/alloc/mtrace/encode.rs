//! Text → container for glibc `mtrace` logs.
//!
//! Lines are parsed in chunks on worker threads ([`for_each_chunk`]); the model, which depends
//! on every line before, runs on the calling thread over the parsed lines in input order, so
//! the file is the same whatever the thread count.

use std::hash::BuildHasher;
use std::io::{Read, Write};

use metatf::container::ContainerHeader;

use super::kinds::{self, MtraceKinds};
use super::line::{self, Line, LineError, Op};
use super::{DTD, FORMAT, STRINGS, VERBATIM};
use crate::alloc::blocks::BlockWriter;
use crate::alloc::fast_hash::{FastMap, FastState};
use crate::alloc::line_chunks::{for_each_chunk, for_each_line_of, ParsedChunk};
use crate::alloc::model::{stream, ModelRecord, State, Streams};
use crate::alloc::text_lines::bad_line_unless_kept;
use crate::alloc::varint::put_u64;
use crate::format::{EncodeOptions, EncodeReport, FormatError};

/// Lines per block: bounds memory whatever the trace length.
pub const BLOCK_RECORDS: u64 = 1 << 20;
/// Verbatim bytes that also end a block early.
const BLOCK_VERBATIM_BYTES: usize = 64 << 20;
/// How many lines ahead the model is asked to prefetch a line's live-block entry.
const PREFETCH_AHEAD: usize = 16;
/// No site id: the end of a chain of sites whose callers share a hash.
const NO_SITE: u32 = u32::MAX;

/// One line as a parsing worker left it: what the model needs, with the line's text and caller
/// given as positions in the chunk.
#[derive(Debug, Clone, Copy, Default)]
struct ParsedLine {
    /// The kind code; `VERBATIM` and `VERBATIM_UNTERMINATED` lines are stored as they are.
    kind: u8,
    /// A line that did not parse, kept verbatim (`--keep-bad-lines`).
    bad: bool,
    /// The line without its `\n`: start and length in the chunk.
    at: usize,
    len: usize,
    /// The caller (operation lines with one): start, length and hash.
    caller: Option<(usize, usize, u64)>,
    size: u64,
    addr: u64,
}

/// A chunk's lines, and the first line that did not parse when such lines are not kept.
#[derive(Default)]
struct ParsedLines {
    lines: Vec<ParsedLine>,
    /// The line that did not parse (0-based number in the chunk, start, length without the
    /// `\n`) and why; parsing stops there.
    error: Option<(u64, usize, usize, LineError)>,
}

impl ParsedChunk for ParsedLines {
    fn clear(&mut self) {
        self.lines.clear();
        self.error = None;
    }
}

/// Parses the lines of one chunk (on a worker thread).
fn parse_chunk(text: &[u8], out: &mut ParsedLines, keep_bad_lines: bool, hasher: FastState) -> u64 {
    for_each_line_of(text, |i, at, raw| {
        if out.error.is_some() {
            return;
        }
        let terminated = raw.last() == Some(&b'\n');
        let len = raw.len() - usize::from(terminated);
        let text = &raw[..len];
        let mut p = ParsedLine {
            kind: kinds::VERBATIM,
            at,
            len,
            ..ParsedLine::default()
        };
        if !terminated {
            // Only the last line can lack its `\n`; store it as is.
            p.kind = kinds::VERBATIM_UNTERMINATED;
            out.lines.push(p);
            return;
        }
        // A `\r` before the `\n` is not glibc's; parse without it and let the canonical-form
        // check below keep such a line verbatim.
        let core = text.strip_suffix(b"\r").unwrap_or(text);
        match line::parse_checked(core) {
            Ok((Line::Marker(m), _)) if m == b"Start" && core == text => p.kind = kinds::START,
            Ok((Line::Marker(m), _)) if m == b"End" && core == text => p.kind = kinds::END,
            Ok((Line::Marker(_), _)) => {}
            // Parses, but glibc would have printed it differently (CRLF, case, padding): the
            // line stays verbatim.
            Ok((Line::Op(_), canonical)) if !canonical || core.len() != text.len() => {}
            Ok((Line::Op(op), _)) => {
                p.kind = match op.op {
                    Op::Malloc => kinds::MALLOC,
                    Op::Free => kinds::FREE,
                    Op::ReallocOld => kinds::REALLOC_OLD,
                    Op::ReallocNew => kinds::REALLOC_NEW,
                };
                p.caller = op.caller.map(|c| {
                    // `c` is a slice of `text` (after `@ `).
                    (at + 2, c.len(), hasher.hash_one(c))
                });
                p.size = op.size;
                p.addr = op.addr;
            }
            Err(_) if keep_bad_lines => p.bad = true,
            Err(e) => {
                out.error = Some((i, at, len, e));
                return;
            }
        }
        out.lines.push(p);
    })
}

/// Everything the encoder keeps between lines.
struct Encoder {
    state: State,
    streams: Streams,
    strings: Vec<u8>,
    verbatim: Vec<u8>,
    /// Caller hash → the newest site with a caller of that hash.
    sites_by_hash: FastMap<u64, u32>,
    /// Per site: where its caller is in `strings` (start, length), and the next older site
    /// whose caller has the same hash.
    sites: Vec<(usize, usize, u32)>,
    no_caller: Option<u32>,
    records: u64,
}

impl Encoder {
    fn verbatim(&mut self, text: &[u8], terminated: bool) {
        let kind = if terminated {
            kinds::VERBATIM
        } else {
            kinds::VERBATIM_UNTERMINATED
        };
        put_u64(&mut self.verbatim, text.len() as u64);
        self.verbatim.extend_from_slice(text);
        self.model(ModelRecord {
            kind,
            ..ModelRecord::default()
        });
    }

    fn model(&mut self, r: ModelRecord) {
        self.state.encode(&MtraceKinds, &r, &mut self.streams);
        self.records += 1;
    }

    /// The site id of `caller` (with its hash): ids count from 0 in order of first use in the
    /// block, and a new caller's text goes to the strings stream.
    fn site(&mut self, caller: Option<(&[u8], u64)>) -> u32 {
        let Some((c, hash)) = caller else {
            if let Some(id) = self.no_caller {
                return id;
            }
            // An absent caller is its own site, distinct from every `@ ` caller; its entry in
            // `sites` is never looked up.
            let id = self.next_id();
            put_u64(&mut self.strings, 0);
            self.sites.push((0, 0, NO_SITE));
            self.no_caller = Some(id);
            return id;
        };
        let mut id = self.sites_by_hash.get(&hash).copied().unwrap_or(NO_SITE);
        while id != NO_SITE {
            let (at, len, older) = self.sites[id as usize];
            if &self.strings[at..at + len] == c {
                return id;
            }
            id = older;
        }
        let id = self.next_id();
        put_u64(&mut self.strings, c.len() as u64 + 1);
        let at = self.strings.len();
        self.strings.extend_from_slice(c);
        let older = self.sites_by_hash.insert(hash, id).unwrap_or(NO_SITE);
        self.sites.push((at, c.len(), older));
        id
    }

    fn next_id(&self) -> u32 {
        self.sites.len() as u32
    }

    /// Models one parsed line of `chunk`.
    fn line(&mut self, p: &ParsedLine, chunk: &[u8]) {
        let text = &chunk[p.at..p.at + p.len];
        match p.kind {
            kinds::VERBATIM => self.verbatim(text, true),
            kinds::VERBATIM_UNTERMINATED => self.verbatim(text, false),
            kinds::START | kinds::END => self.model(ModelRecord {
                kind: p.kind,
                ..ModelRecord::default()
            }),
            kind => {
                let caller = p.caller.map(|(at, len, hash)| (&chunk[at..at + len], hash));
                let site = self.site(caller);
                self.model(ModelRecord {
                    kind,
                    site,
                    size: p.size,
                    addr: p.addr,
                    old: 0,
                    extra: 0,
                });
            }
        }
    }
}

/// Reads an `mtrace` log and writes the container.
pub fn encode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let header = ContainerHeader {
        dtd: DTD.to_string(),
        format: FORMAT.to_string(),
        properties: crate::alloc::blocks::model_properties(),
    };
    let mut out = BlockWriter::new(output, &header, options)?;
    out.fast_level_for_long_traces(BLOCK_RECORDS);
    let mut enc = Encoder {
        state: State::for_block(),
        streams: Streams::default(),
        strings: Vec::new(),
        verbatim: Vec::new(),
        sites_by_hash: FastMap::default(),
        sites: Vec::new(),
        no_caller: None,
        records: 0,
    };
    let mut report = EncodeReport::default();
    let hasher = FastState::default();
    let keep = options.keep_bad_lines;
    let lines = for_each_chunk(
        input,
        file,
        options.threads,
        |text, out: &mut ParsedLines| parse_chunk(text, out, keep, hasher),
        |first_line, chunk, parsed| {
            report.input_bytes += chunk.len() as u64;
            for (i, p) in parsed.lines.iter().enumerate() {
                if let Some(ahead) = parsed.lines.get(i + PREFETCH_AHEAD) {
                    enc.state.prefetch_block(ahead.addr);
                }
                report.bad_lines += u64::from(p.bad);
                enc.line(p, chunk);
                if enc.records >= BLOCK_RECORDS || enc.verbatim.len() >= BLOCK_VERBATIM_BYTES {
                    flush(&mut enc, &mut out)?;
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
    flush(&mut enc, &mut out)?;
    out.finish()?;
    report.records = lines;
    Ok(report)
}

fn flush<W: Write>(enc: &mut Encoder, out: &mut BlockWriter<W>) -> Result<(), FormatError> {
    if enc.records == 0 {
        return Ok(());
    }
    let mut streams: Vec<(u8, &[u8])> = enc
        .streams
        .bytes
        .iter()
        .enumerate()
        .map(|(i, b)| (i as u8, b.as_slice()))
        .collect();
    streams.push((STRINGS, &enc.strings));
    streams.push((VERBATIM, &enc.verbatim));
    debug_assert_eq!(stream::COUNT, enc.streams.bytes.len());
    out.block(enc.records, &streams)?;
    enc.streams.clear();
    enc.strings.clear();
    enc.verbatim.clear();
    enc.records = 0;
    // Each block starts a fresh model, so any block decodes on its own and the state (the
    // live blocks above all) never holds more than one block's worth.
    enc.state.restart_for_block();
    enc.sites_by_hash.clear();
    enc.sites.clear();
    enc.no_caller = None;
    Ok(())
}
