//! Text → container for glibc `mtrace` logs.
//!
//! Lines are parsed in chunks on worker threads ([`for_each_chunk`]); the model, which depends
//! on every line before, runs on the calling thread over the parsed lines in input order, so
//! the file is the same whatever the thread count.

use std::hash::BuildHasher;
use std::io::{Read, Write};

use super::line::{self, Line, Op, OpLine};
use super::model::{self, MtraceKinds};
use super::{DTD, FORMAT, STRINGS, VERBATIM};
use crate::format::{EncodeOptions, EncodeReport, FormatError};
use crate::shared::allocation_model::threads::encode_worker::ModelEncoder;
use crate::shared::allocation_model::ModelRecord;
use crate::shared::container::blocks::{self, BlockWriter};
use crate::shared::container::ended_block::EndedBlock;
use crate::shared::text::line_chunks::{for_each_chunk, ParsedChunk};
use crate::shared::text::line_reader::for_each_line_of;
use crate::shared::text::lines::ChunkLineError;
use metatf::hash::{fold_mul, FastMap, FastState};
use metatf::varint::put_u64;

/// How many lines ahead the model is asked to prefetch a line's live-block entry.
const PREFETCH_AHEAD: usize = 16;
/// No site id: the end of a chain of sites whose callers share a hash.
const NO_SITE: u32 = u32::MAX;

/// One line as a parsing worker left it: what the model needs. 24 bytes, as the model's
/// thread reads every one of them (the text of the few verbatim lines is found through
/// [`ParsedLines::verbatim`]).
#[derive(Debug, Clone, Copy)]
struct ParsedLine {
    addr: u64,
    size: u64,
    /// For an operation, its caller's index in [`ParsedLines::callers`] ([`NO_SITE`]: no
    /// caller); for a verbatim line, its index in [`ParsedLines::verbatim`].
    index: u32,
    /// The kind code; `VERBATIM` and `VERBATIM_UNTERMINATED` lines are stored as they are.
    kind: u8,
    /// A line that did not parse, kept verbatim (`--keep-bad-lines`).
    bad: bool,
}

const _: () = assert!(std::mem::size_of::<ParsedLine>() == 24);

/// A chunk's lines, its distinct callers, and the first line that did not parse when such
/// lines are not kept.
///
/// Callers are told apart here, on the worker, so that the model's thread looks up each
/// distinct caller once per chunk instead of hashing and comparing the caller of every line
/// (which would be a sixth of that thread, the slowest of an encode).
#[derive(Default)]
struct ParsedLines {
    lines: Vec<ParsedLine>,
    /// The verbatim lines without their `\n`: start and length in the chunk.
    verbatim: Vec<(usize, usize)>,
    /// The chunk's distinct callers in order of first use: start and length in the chunk, and
    /// hash.
    callers: Vec<(usize, usize, u64)>,
    /// Caller hash → the newest index in `callers` with that hash.
    by_hash: FastMap<u64, u32>,
    /// Per index in `callers`: the next older one with the same hash ([`NO_SITE`]: none).
    older: Vec<u32>,
    /// A caller index (or [`NO_SITE`]) per [`tail_slot`] of the callers met in the chunk: the
    /// newest caller with that slot. Most callers are found here, with one comparison and
    /// without hashing the caller (most lines name a caller other than the line before's,
    /// but one met lately).
    by_tail: Vec<u32>,
    /// The line that did not parse; parsing stops there.
    error: Option<ChunkLineError>,
}

impl ParsedChunk for ParsedLines {
    fn clear(&mut self) {
        self.lines.clear();
        self.verbatim.clear();
        self.callers.clear();
        self.by_hash.clear();
        self.older.clear();
        self.by_tail.clear();
        self.by_tail.resize(TAIL_SLOTS, NO_SITE);
        self.error = None;
    }
}

impl ParsedLines {
    /// Adds verbatim line `p`, whose text is `at..at + len` of the chunk.
    fn push_verbatim(&mut self, mut p: ParsedLine, at: usize, len: usize) {
        p.index = self.verbatim.len() as u32;
        self.verbatim.push((at, len));
        self.lines.push(p);
    }

    /// The index in `callers` of the caller at `at..at + len` of `chunk`, adding it when it
    /// is new. `last` is the previous line's caller index: most lines repeat it, and one
    /// comparison then saves hashing the caller.
    fn caller(&mut self, chunk: &[u8], at: usize, len: usize, last: u32, seed: u64) -> u32 {
        let c = &chunk[at..at + len];
        let same = |(a, l, _): (usize, usize, u64)| l == len && same_text(&chunk[a..a + l], c);
        if last != NO_SITE && same(self.callers[last as usize]) {
            return last;
        }
        let slot = tail_slot(c);
        let recent = self.by_tail[slot];
        if recent != NO_SITE && same(self.callers[recent as usize]) {
            return recent;
        }
        let i = self.caller_by_hash(chunk, at, len, seed);
        self.by_tail[slot] = i;
        i
    }

    /// [`ParsedLines::caller`] through the hash of the caller's text.
    fn caller_by_hash(&mut self, chunk: &[u8], at: usize, len: usize, seed: u64) -> u32 {
        let c = &chunk[at..at + len];
        let same = |(a, l, _): (usize, usize, u64)| l == len && same_text(&chunk[a..a + l], c);
        let hash = caller_hash(seed, c);
        let mut i = self.by_hash.get(&hash).copied().unwrap_or(NO_SITE);
        while i != NO_SITE {
            if same(self.callers[i as usize]) {
                return i;
            }
            i = self.older[i as usize];
        }
        let i = self.callers.len() as u32;
        self.callers.push((at, len, hash));
        self.older
            .push(self.by_hash.insert(hash, i).unwrap_or(NO_SITE));
        i
    }
}

/// Slots of [`ParsedLines::by_tail`].
const TAIL_SLOTS: usize = 256;

/// The slot of `c` in [`ParsedLines::by_tail`]: from its length and last 8 bytes, where callers
/// differ (they end in the return address, while many share a long library path). Which slot a
/// caller takes only decides how fast it is found, never which caller is found: the text is
/// compared.
#[inline]
fn tail_slot(c: &[u8]) -> usize {
    let x = (tail_word(c) ^ c.len() as u64).wrapping_mul(LANE_B);
    (x >> 56) as usize
}

/// The last 8 bytes of `c` as a word (zero-padded at the top when `c` is shorter).
#[inline]
fn tail_word(c: &[u8]) -> u64 {
    match c.len().checked_sub(8) {
        Some(i) => word(c, i),
        None => {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        }
    }
}

/// The 8 bytes of `c` from `i` as a word.
#[inline]
fn word(c: &[u8], i: usize) -> u64 {
    let w = &c[i..i + 8];
    u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
}

/// Whether two texts of the same length are equal. Compared in line, 16 bytes at a time with
/// the last block overlapping the one before: most callers are 20 to 100 bytes, and a `memcmp`
/// call per line cost more than the comparison itself.
#[inline]
fn same_text(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 16 {
        if n < 8 {
            return a == b;
        }
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    let block = |s: &[u8], i: usize| -> [u8; 16] {
        let mut w = [0u8; 16];
        w.copy_from_slice(&s[i..i + 16]);
        w
    };
    let mut i = 0;
    while i + 16 < n {
        if block(a, i) != block(b, i) {
            return false;
        }
        i += 16;
    }
    block(a, n - 16) == block(b, n - 16)
}

/// Odd constants with well-spread bits: the fraction of e and of the golden ratio, in 64 bits.
const LANE_A: u64 = 0xb7e1_5162_8aed_2a6b;
const LANE_B: u64 = 0x9e37_79b9_7f4a_7c15;

/// Hashes a caller (tens of bytes of text). Std's `Hash` for byte slices feeds the hasher one
/// word at a time through a single chain of dependent multiplies, which would be a fifth of a
/// parsing worker; here two independent lanes take 16 bytes a step and the tail is read as
/// whole (overlapping) words. The length goes in first, so overlapping tails of different
/// lengths differ. `seed` is random per process, so colliding callers cannot be prepared in
/// advance; a collision costs only a comparison, never a wrong site (every table compares the
/// text).
fn caller_hash(seed: u64, c: &[u8]) -> u64 {
    let word = |i: usize| word(c, i);
    let n = c.len();
    let (mut a, mut b) = (seed ^ n as u64, seed.rotate_left(32));
    if n >= 16 {
        let mut i = 0;
        while i + 16 <= n {
            a = fold_mul(a ^ word(i), LANE_A);
            b = fold_mul(b ^ word(i + 8), LANE_B);
            i += 16;
        }
        a = fold_mul(a ^ word(n - 16), LANE_A);
        b = fold_mul(b ^ word(n - 8), LANE_B);
    } else if n >= 8 {
        a = fold_mul(a ^ word(0), LANE_A);
        b = fold_mul(b ^ word(n - 8), LANE_B);
    } else {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(c);
        a = fold_mul(a ^ u64::from_le_bytes(w), LANE_A);
    }
    fold_mul(a ^ b.rotate_left(29), LANE_A ^ LANE_B)
}

/// The kind code of an operation.
fn kind_of(op: Op) -> u8 {
    match op {
        Op::Malloc => model::MALLOC,
        Op::Free => model::FREE,
        Op::ReallocOld => model::REALLOC_OLD,
        Op::ReallocNew => model::REALLOC_NEW,
    }
}

/// Parses the lines of one chunk (on a worker thread).
fn parse_chunk(chunk: &[u8], out: &mut ParsedLines, keep_bad_lines: bool, seed: u64) -> u64 {
    let mut last_caller = NO_SITE;
    for_each_line_of(chunk, |i, at, raw| {
        if out.error.is_some() {
            return;
        }
        let terminated = raw.last() == Some(&b'\n');
        let len = raw.len() - usize::from(terminated);
        if !terminated {
            // Only the last line can lack its `\n`; it is stored as is, but strict mode
            // refuses it when it does not parse, as it would with a `\n`.
            let text = &chunk[at..at + len];
            let core = text.strip_suffix(b"\r").unwrap_or(text);
            let bad = match line::parse_checked(core) {
                Ok(_) => false,
                Err(_) if keep_bad_lines => true,
                Err(e) => {
                    out.error = Some(ChunkLineError::new(i, at, len, e));
                    return;
                }
            };
            let p = ParsedLine {
                kind: model::VERBATIM_UNTERMINATED,
                bad,
                ..VERBATIM_LINE
            };
            out.push_verbatim(p, at, len);
            return;
        }
        // Most lines are operations exactly as glibc prints them: one quick pass takes those.
        // (The line is built in registers and stored once: filling it in through a closure
        // stored its fields apart and read them back whole, which stalled.)
        match line::parse_canonical_op(&raw[..len]) {
            Some(op) => {
                let p = out.op_line(chunk, at, &op, &mut last_caller, seed);
                out.lines.push(p);
            }
            None => parse_other_line(
                chunk,
                i,
                at,
                len,
                out,
                keep_bad_lines,
                &mut last_caller,
                seed,
            ),
        }
    })
}

/// A verbatim line, before its kind and index are set.
const VERBATIM_LINE: ParsedLine = ParsedLine {
    addr: 0,
    size: 0,
    index: NO_SITE,
    kind: model::VERBATIM,
    bad: false,
};

impl ParsedLines {
    /// The parsed line of operation `op`, whose line starts at `at` in `chunk` (so its caller,
    /// if any, at `at + 2`); `last_caller` is the caller index of the line before, updated.
    #[inline]
    fn op_line(
        &mut self,
        chunk: &[u8],
        at: usize,
        op: &OpLine<'_>,
        last_caller: &mut u32,
        seed: u64,
    ) -> ParsedLine {
        let index = match op.caller {
            Some(c) => {
                let i = self.caller(chunk, at + 2, c.len(), *last_caller, seed);
                *last_caller = i;
                i
            }
            None => NO_SITE,
        };
        ParsedLine {
            addr: op.addr,
            size: op.size,
            index,
            kind: kind_of(op.op),
            bad: false,
        }
    }
}

/// Parses a terminated line that is not an operation exactly as glibc prints it: a marker, a
/// line that glibc would have printed differently (kept verbatim), or one that does not parse
/// (kept verbatim with `keep_bad_lines`, else the chunk's error).
#[cold]
#[allow(clippy::too_many_arguments)]
fn parse_other_line(
    chunk: &[u8],
    i: u64,
    at: usize,
    len: usize,
    out: &mut ParsedLines,
    keep_bad_lines: bool,
    last_caller: &mut u32,
    seed: u64,
) {
    let text = &chunk[at..at + len];
    let mut p = VERBATIM_LINE;
    // A `\r` before the `\n` is not glibc's; parse without it and let the canonical-form
    // check below keep such a line verbatim.
    let core = text.strip_suffix(b"\r").unwrap_or(text);
    match line::parse_checked(core) {
        Ok((Line::Marker(m), _)) if m == b"Start" && core == text => p.kind = model::START,
        Ok((Line::Marker(m), _)) if m == b"End" && core == text => p.kind = model::END,
        Ok((Line::Marker(_), _)) => {}
        // Parses, but glibc would have printed it differently (CRLF, case, padding): the
        // line stays verbatim.
        Ok((Line::Op(_), canonical)) if !canonical || core.len() != text.len() => {}
        Ok((Line::Op(op), _)) => p = out.op_line(chunk, at, &op, last_caller, seed),
        Err(_) if keep_bad_lines => p.bad = true,
        Err(e) => {
            out.error = Some(ChunkLineError::new(i, at, len, e));
            return;
        }
    }
    if p.kind == model::VERBATIM {
        out.push_verbatim(p, at, len);
    } else {
        out.lines.push(p);
    }
}

/// Everything the encoder keeps between lines.
struct Encoder {
    model: ModelEncoder<MtraceKinds>,
    strings: Vec<u8>,
    verbatim: Vec<u8>,
    /// Caller hash → the newest site with a caller of that hash.
    sites_by_hash: FastMap<u64, u32>,
    /// Per site: where its caller is in `strings` (start, length), and the next older site
    /// whose caller has the same hash.
    sites: Vec<(usize, usize, u32)>,
    no_caller: Option<u32>,
    /// Per caller of the chunk being modelled ([`ParsedLines::callers`]): its site id in this
    /// block, or [`NO_SITE`] until the block first meets it.
    chunk_sites: Vec<u32>,
    records: u64,
    /// The block that ended and is not yet written (see [`end_block`]).
    ended: EndedBlock,
}

impl Encoder {
    fn verbatim(&mut self, text: &[u8], terminated: bool) {
        let kind = if terminated {
            model::VERBATIM
        } else {
            model::VERBATIM_UNTERMINATED
        };
        put_u64(&mut self.verbatim, text.len() as u64);
        self.verbatim.extend_from_slice(text);
        self.model(ModelRecord {
            kind,
            ..ModelRecord::default()
        });
    }

    fn model(&mut self, r: ModelRecord) {
        self.model.encode(&r);
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

    /// The site id of caller `i` of the chunk being modelled.
    #[inline]
    fn chunk_site(&mut self, i: u32, chunk: &[u8], callers: &[(usize, usize, u64)]) -> u32 {
        if i == NO_SITE {
            return self.site(None);
        }
        let known = self.chunk_sites[i as usize];
        if known != NO_SITE {
            return known;
        }
        let (at, len, hash) = callers[i as usize];
        let id = self.site(Some((&chunk[at..at + len], hash)));
        self.chunk_sites[i as usize] = id;
        id
    }

    /// Models one parsed line of `chunk`, parsed into `parsed`.
    #[inline]
    fn line(&mut self, p: &ParsedLine, chunk: &[u8], parsed: &ParsedLines) {
        match p.kind {
            model::VERBATIM | model::VERBATIM_UNTERMINATED => {
                let (at, len) = parsed.verbatim[p.index as usize];
                self.verbatim(&chunk[at..at + len], p.kind == model::VERBATIM);
            }
            model::START | model::END => self.model(ModelRecord {
                kind: p.kind,
                ..ModelRecord::default()
            }),
            kind => {
                let site = self.chunk_site(p.index, chunk, &parsed.callers);
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
    input: &mut (dyn Read + Send),
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let header = blocks::auto_header(DTD, FORMAT, blocks::LAYOUT, []);
    let mut out = BlockWriter::new(output, &header, options)?;
    out.fast_level();
    let mut enc = Encoder {
        model: ModelEncoder::new(MtraceKinds, options.threads),
        strings: Vec::new(),
        verbatim: Vec::new(),
        sites_by_hash: FastMap::default(),
        sites: Vec::new(),
        no_caller: None,
        chunk_sites: Vec::new(),
        records: 0,
        ended: EndedBlock::new([STRINGS, VERBATIM], false),
    };
    let mut report = EncodeReport::default();
    // A random seed for the callers' hashes (see `caller_hash`).
    let seed = FastState::default().hash_one(0x5eed_u64);
    let keep = options.keep_bad_lines;
    let block_records = blocks::model_block_records();
    let lines = for_each_chunk(
        input,
        file,
        options.threads,
        |text, out: &mut ParsedLines| parse_chunk(text, out, keep, seed),
        |first_line, chunk, parsed| {
            report.input_bytes += chunk.len() as u64;
            enc.chunk_sites.clear();
            enc.chunk_sites.resize(parsed.callers.len(), NO_SITE);
            for (i, p) in parsed.lines.iter().enumerate() {
                if let Some(ahead) = parsed.lines.get(i + PREFETCH_AHEAD) {
                    enc.model.prefetch_block(ahead.addr);
                }
                report.bad_lines += u64::from(p.bad);
                enc.line(p, chunk, parsed);
                if enc.records >= block_records
                    || enc.verbatim.len() >= blocks::BLOCK_VERBATIM_BYTES
                {
                    end_block(&mut enc, &mut out)?;
                }
            }
            enc.ended.write(&mut enc.model, &mut out, false)?;
            if let Some(e) = &parsed.error {
                return Err(e.unless_kept(file, first_line, chunk));
            }
            Ok(())
        },
    )?;
    end_block(&mut enc, &mut out)?;
    enc.ended.write(&mut enc.model, &mut out, true)?;
    out.finish()?;
    report.records = lines;
    Ok(report)
}

/// Ends the block being encoded, when it has records: the model's address thread finishes it
/// while the next block starts, and [`EndedBlock::write`] writes it (the block ended before
/// this one is written first).
fn end_block<W: Write>(enc: &mut Encoder, out: &mut BlockWriter<W>) -> Result<(), FormatError> {
    let own = [&mut enc.strings, &mut enc.verbatim];
    if !enc.ended.end(
        &mut enc.model,
        out,
        &mut enc.records,
        own,
        std::iter::empty(),
    )? {
        return Ok(());
    }
    // Each block starts a fresh model (`end_block` restarted it), so any block decodes on its
    // own and the state (the live blocks above all) never holds more than one block's worth.
    enc.sites_by_hash.clear();
    enc.sites.clear();
    enc.no_caller = None;
    // The chunk's callers keep their texts, but their site ids were this block's.
    enc.chunk_sites.fill(NO_SITE);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::allocation::encode_checks::file_depends_on_the_text_alone;
    use crate::shared::format_parts::FormatParts;

    /// A trace whose callers repeat within and across chunks, with a few lines that are
    /// stored verbatim and one that does not parse.
    fn trace() -> Vec<u8> {
        let mut t = b"= Start\n".to_vec();
        for i in 0..3000u64 {
            let site = (i * 7 + i / 13) % 23;
            let caller = match site {
                0 => String::new(),
                1 => "@ /a b/c d:[0x1] ".to_string(),
                s => format!("@ prog:(f{s}+{:x})[0x{:x}] ", s * 3, 0x4000 + s),
            };
            let addr = 0x5500_0000u64 + (i % 97) * 0x40;
            let line = match i % 5 {
                0 | 1 => format!("{caller}+ 0x{addr:x} 0x{:x}\n", i % 300 + 1),
                2 => format!("{caller}- 0x{addr:x}\n"),
                3 => format!("{caller}< 0x{addr:x}\n{caller}> 0x{:x} 0\n", addr + 8),
                _ => format!("{caller}- (nil)\n"),
            };
            t.extend_from_slice(line.as_bytes());
            match i {
                500 => t.extend_from_slice(b"+ 0x0010 0x20\n"),
                900 => t.extend_from_slice(b"@ x - 0x10\r\n"),
                1700 => t.extend_from_slice(b"= marker\n"),
                2100 => t.extend_from_slice(b"not an mtrace line\n"),
                _ => {}
            }
        }
        t.extend_from_slice(b"= End\n- 0x10");
        t
    }

    #[test]
    fn the_file_does_not_depend_on_chunks_threads_or_where_blocks_end() {
        file_depends_on_the_text_alone(
            &trace(),
            1,
            encode,
            <super::super::Mtrace as FormatParts>::DECODE,
        );
    }

    #[test]
    fn callers_sharing_a_tail_slot_stay_apart() {
        // Same length and same last 8 bytes: the same slot of `by_tail`, different callers.
        let text = b"@ a:(f+1)[0x4011] + 0x10 0x8\n@ b:(f+1)[0x4011] + 0x20 0x8\n\
                     @ a:(f+1)[0x4011] - 0x10\n@ b:(f+1)[0x4011] - 0x20\n\
                     @ c:(g+1)[0x4011] + 0x30 0x8\n";
        assert_eq!(tail_slot(b"a:(f+1)[0x4011]"), tail_slot(b"b:(f+1)[0x4011]"));
        let mut parsed = ParsedLines::default();
        parsed.clear();
        assert_eq!(parse_chunk(text, &mut parsed, false, 7), 5);
        let ids: Vec<u32> = parsed.lines.iter().map(|l| l.index).collect();
        assert_eq!(ids, [0, 1, 0, 1, 2]);
        let names: Vec<&[u8]> = parsed
            .callers
            .iter()
            .map(|&(a, l, _)| &text[a..a + l])
            .collect();
        assert_eq!(
            names,
            [
                &b"a:(f+1)[0x4011]"[..],
                b"b:(f+1)[0x4011]",
                b"c:(g+1)[0x4011]"
            ]
        );
    }

    #[test]
    fn caller_hashes_differ_for_tails_and_lengths() {
        let seed = FastState::default().hash_one(1u64);
        let callers: Vec<Vec<u8>> = (0..40)
            .map(|n| (0..n).map(|i| b'a' + (i % 7) as u8).collect())
            .chain([b"x".repeat(17), b"x".repeat(16), b"xy".repeat(12)])
            .collect();
        let mut hashes: Vec<u64> = callers.iter().map(|c| caller_hash(seed, c)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), callers.len());
    }
}
