//! Text trace → container: reads lines in blocks, predicts each record from the block's model and
//! writes the residues into split streams.

use std::io::{Read, Write};

use metatf::container::{Codec, ContainerHeader, ContainerWriter, SectionData, PROPERTY_LAYOUT};

use super::line::{classify, classify_in, Kind, Line, LineReader};
use super::model::{code, u_order_vote, Model, UOrder};
use super::sections::names;
use super::sections::streams::{id, Packer, StreamWriter};
use super::text::block_text::BlockText;
use crate::format::{Compression, EncodeOptions, EncodeReport, FormatError};
use crate::shared::text::line_reader::{is_line_too_long, line_too_long};
use crate::shared::threads::{buffer_pool::BufferPool, ordered::ordered};
use metatf::varint::put_u64;

/// The value of the container's `layout` property for Elephant Tracks files.
pub const ET_LAYOUT: &str = "et-model-1";

/// Lines per block: big enough for the streams to compress well, small enough to bound memory.
pub const BLOCK_LINES: usize = 1 << 19;
/// Section holding a block's packed streams.
pub const STREAMS_SECTION: u8 = 1;
/// The section of a full block ([`BLOCK_LINES`] lines) that holds the length of its text in
/// bytes, a varint (docs/FORMAT.md §6.2).
pub const TEXT_LEN_SECTION: u8 = 0;
/// Default zstd level of the streams.
///
/// Level 3, not 19: the streams the model leaves are small next to the text (a twentieth or
/// less) and mostly runs and repeats, which level 3 already finds: level 19 makes a file only
/// somewhat smaller but takes most of an encode's time. `--level 19` still writes the smaller
/// file, with the same layout.
pub const DEFAULT_LEVEL: i32 = 3;

/// At the default level, a block whose text is more than this many times the size of its
/// packed streams is packed again at [`REPACK_LEVEL`].
///
/// Why: a trace that repeats one loop is where the general-purpose compressors come closest.
/// There the model's streams are hundreds of times smaller than the text, and what is left is
/// long repeats that level 3 codes worse than a long-window compressor; level 19 finds them.
/// Traces the model compresses less than this are far below the peers at level 3 and keep
/// it. The second pass costs what level 19 costs, only on such blocks.
pub const REPACK_RATIO: usize = 500;
/// Level of the second pass (see [`REPACK_RATIO`]).
pub const REPACK_LEVEL: i32 = 19;

/// Everything the encoder needs to know about the flavour it writes.
pub struct Flavour {
    /// Format name stored in the container.
    pub format: &'static str,
    /// DTD text embedded in the container.
    pub dtd: &'static str,
    /// `U` order used when a block gives no evidence.
    pub default_order: UOrder,
}

fn io_error(file: &str, e: impl std::fmt::Display) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: String::new(),
        message: e.to_string(),
    }
}

/// Encodes an ET text trace.
pub fn encode(
    flavour: &Flavour,
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let level = options.level.unwrap_or(DEFAULT_LEVEL);
    let codec = match options.compression {
        Compression::None => Codec::None,
        Compression::Gzip => Codec::Gzip,
        Compression::Zstd => Codec::Zstd,
    };
    let name_files = match &options.names_dir {
        Some(dir) => names::read_dir(dir)?,
        None => Vec::new(),
    };
    let header = ContainerHeader {
        dtd: flavour.dtd.to_string(),
        format: flavour.format.to_string(),
        // The sections hold the streams of docs/FORMAT.md §6.2, not universal records.
        properties: vec![(PROPERTY_LAYOUT.to_string(), ET_LAYOUT.to_string())],
    };
    let mut writer = ContainerWriter::new(output, &header).map_err(|e| io_error(file, e))?;
    let mut report = EncodeReport::default();
    let mut first_block = true;
    let threads = options.threads.max(1);
    let mut lines_read = 0u64;
    let mut carry = Vec::new();
    let mut at_end = false;
    let texts = BufferPool::<BlockText>::new(threads + 1);
    let mut last_len = 0;
    let mut next = || -> Result<Option<RawBlock>, FormatError> {
        if at_end {
            return Ok(None);
        }
        let mut text = texts.take();
        let lines = match text.read_block(input, &mut carry, BLOCK_LINES, last_len) {
            Ok(lines) => lines,
            Err(e) if is_line_too_long(&e) => {
                return Err(line_too_long(
                    file,
                    lines_read + text.whole_lines() as u64 + 1,
                ))
            }
            Err(e) => return Err(io_error(file, e)),
        };
        last_len = text.bytes().len();
        at_end = lines < BLOCK_LINES;
        // An empty input still gets one (empty) block; a trace of whole blocks gets none more.
        if lines == 0 && lines_read > 0 {
            return Ok(None);
        }
        let first_line = lines_read + 1;
        lines_read += lines as u64;
        Ok(Some(RawBlock {
            text,
            lines,
            first_line,
        }))
    };
    let mut put = |done: Done| -> Result<(), FormatError> {
        report.input_bytes += done.input_bytes;
        report.bad_lines += done.bad_lines;
        let name_index = if first_block {
            names::index(&name_files)
        } else {
            Vec::new()
        };
        // A full block says how long its text is, so that a decoder writing into a file can
        // put each block's text in its place without waiting for the blocks before it (the
        // last block, never needed for a later block's place, does not).
        let mut text_len = Vec::new();
        if done.lines == BLOCK_LINES as u64 {
            put_u64(&mut text_len, done.input_bytes);
        }
        let mut sections = vec![SectionData {
            number: STREAMS_SECTION,
            element_width: 1,
            codec: Codec::None,
            level: 0,
            bytes: &done.packed,
        }];
        if !text_len.is_empty() {
            sections.push(SectionData {
                number: TEXT_LEN_SECTION,
                element_width: 1,
                codec: Codec::None,
                level: 0,
                bytes: &text_len,
            });
        }
        if first_block && !name_files.is_empty() {
            sections.push(SectionData {
                number: names::INDEX_SECTION,
                element_width: 1,
                codec,
                level,
                bytes: &name_index,
            });
            for (k, (_, bytes)) in name_files.iter().enumerate() {
                sections.push(SectionData {
                    number: names::INDEX_SECTION + 1 + k as u8,
                    element_width: 1,
                    codec,
                    level,
                    bytes,
                });
            }
        }
        writer.set_block_threads(&done.threads);
        writer
            .write_block(done.lines, &sections)
            .map_err(|e| io_error(file, e))?;
        report.records += done.lines;
        first_block = false;
        Ok(())
    };
    let work = |worker: &mut Worker, raw: RawBlock| -> Result<Done, FormatError> {
        let modelled = model_block(
            flavour,
            raw.text.bytes(),
            raw.lines,
            raw.first_line,
            options,
            &mut worker.model,
            &mut worker.streams,
        )?;
        let packer = &mut worker.packer;
        let mut streams = packer
            .pack(&worker.streams, level)
            .map_err(|e| io_error(file, e))?;
        if options.level.is_none() && raw.text.bytes().len() > REPACK_RATIO * streams.len() {
            streams = packer
                .pack(&worker.streams, REPACK_LEVEL)
                .map_err(|e| io_error(file, e))?;
        }
        worker.streams.clear();
        let mut packed = Vec::with_capacity(1 + streams.len());
        packed.push(modelled.order.code());
        packed.extend(streams);
        let done = Done {
            packed,
            lines: raw.lines as u64,
            input_bytes: raw.text.bytes().len() as u64,
            bad_lines: modelled.bad_lines,
            threads: modelled.threads,
        };
        texts.give(raw.text);
        Ok(done)
    };
    // Blocks are independent (each starts a fresh model): each is parsed, modelled and
    // compressed on a worker, and written here in order, so the file is the same whatever the
    // thread count. A trace of one block (most) is done on this thread, with no hand-over.
    let first = next()?;
    let one_block = first.as_ref().is_none_or(|raw| raw.lines < BLOCK_LINES);
    if one_block || threads == 1 {
        let mut worker = Worker::default();
        let mut item = first;
        while let Some(raw) = item {
            put(work(&mut worker, raw)?)?;
            item = next()?;
        }
    } else {
        let mut first = first;
        ordered(
            threads,
            || match first.take() {
                Some(raw) => Ok(Some(raw)),
                None => next(),
            },
            Worker::default,
            work,
            put,
            || io_error(file, "an encoding thread failed"),
        )?;
    }
    writer.finish().map_err(|e| io_error(file, e))?;
    Ok(report)
}

/// What a thread encoding blocks keeps from block to block: its compression context, and the
/// model's tables and the streams' buffers, which, made anew for each block, page-faulted in
/// again as they grew.
#[derive(Default)]
struct Worker {
    packer: Packer,
    model: Option<Model>,
    streams: StreamWriter,
}

/// One block of text as read.
struct RawBlock {
    text: BlockText,
    /// Number of lines in `text` (each ends with `\n` but perhaps the last of the trace).
    lines: usize,
    /// 1-based number of the block's first line in the trace.
    first_line: u64,
}

/// One block ready to write.
struct Done {
    packed: Vec<u8>,
    lines: u64,
    input_bytes: u64,
    bad_lines: u64,
    threads: Vec<u64>,
}

/// The lines of a block's text: where each starts and ends (without its `\n`), and whether
/// it has a `\n` (all but perhaps the last line of the trace).
fn lines_of(text: &[u8]) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
    let mut start = 0;
    let terminated = memchr::memchr_iter(b'\n', text).map(move |p| {
        let line = (start, p, true);
        start = p + 1;
        line
    });
    let last_start = memchr::memrchr(b'\n', text).map_or(0, |p| p + 1);
    let unterminated = (last_start < text.len()).then_some((last_start, text.len(), false));
    terminated.chain(unterminated)
}

/// One block after the model (its streams are left in the writer given): its `U` order, and
/// how many lines were bad.
struct Modelled {
    order: UOrder,
    bad_lines: u64,
    /// Thread ids of the block's records, for the index.
    threads: Vec<u64>,
}

/// Decides a block's `U` order by majority of the records that show it.
fn block_order(flavour: &Flavour, text: &[u8]) -> UOrder {
    let (mut fv, mut vf) = (0u64, 0u64);
    // Only `U` lines vote: those starting with a `U` found by a search, which skips the other
    // lines at memory speed. A search for one byte, then a look at the byte before, is
    // faster than one for "\nU" (a `U` inside a line is rare: records hold digits).
    let starts = memchr::memchr_iter(b'U', text).filter(|&p| p == 0 || text[p - 1] == b'\n');
    let mut reader = LineReader::default();
    for start in starts {
        // Canonical lines (most) are read by the fast reader; the others are classified.
        let line = match reader.read(text, start) {
            Some((r, _)) => Line::Canonical(r),
            None => {
                let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |p| start + p);
                classify_in(text, start, end)
            }
        };
        if let Line::Canonical(r) | Line::Spelled(r) = line {
            match u_order_vote(&r) {
                Some(UOrder::HolderFieldValue) => fv += 1,
                Some(UOrder::HolderValueField) => vf += 1,
                None => {}
            }
        }
    }
    if fv > vf {
        UOrder::HolderFieldValue
    } else if vf > fv {
        UOrder::HolderValueField
    } else {
        flavour.default_order
    }
}

/// Runs the model over one block.
///
/// A trace of one block runs on one thread: parsing on a second thread while this one models
/// (handing parsed lines over in batches) costs more CPU time in the hand-over than it saves,
/// and a loaded machine's wall time goes up, not down (docs/PERFORMANCE.md, "Designs tried and not kept").
///
/// `model` and `w` are the tables and buffers of the block before (or none): both are reset.
fn model_block(
    flavour: &Flavour,
    text: &[u8],
    lines: usize,
    first_line: u64,
    options: &EncodeOptions,
    model: &mut Option<Model>,
    w: &mut StreamWriter,
) -> Result<Modelled, FormatError> {
    let mut bad_lines = 0;
    let order = block_order(flavour, text);
    let model = match model {
        Some(model) => {
            model.reset(order);
            model
        }
        None => model.insert(Model::new(order)),
    };
    w.clear();
    w.reserve_lines(lines);
    let mut reader = LineReader::default();
    let mut start = 0;
    let mut k = 0u64;
    while start < text.len() {
        // Most lines are canonical records ending with `\n`, read straight through and
        // handed to the model with nothing in between: wrapping each in a `Line` (with its
        // place in the text) to share one path with the other lines would cost some 50
        // instructions of copies per line.
        if let Some((r, end)) = reader.read(text, start) {
            if end < text.len() && !(r.kind == Kind::W && r.fields[1] == u64::MAX) {
                model.encode(&r, w);
                start = end + 1;
                k += 1;
                continue;
            }
        }
        let end = other_line(text, start, first_line + k, options, model, w)?;
        bad_lines += end.1;
        start = end.0 + 1;
        k += 1;
    }
    Ok(Modelled {
        order,
        bad_lines,
        threads: model.threads_seen(),
    })
}

/// Encodes the line at `text[start]` that is not a canonical record ending with `\n` (or is
/// a `W` record whose class the model cannot code); `number` is its line number in the trace.
/// Returns where the line ends (its `\n`, or the end of `text`) and 1 for a bad line kept,
/// else 0.
#[cold]
#[inline(never)]
fn other_line(
    text: &[u8],
    start: usize,
    number: u64,
    options: &EncodeOptions,
    model: &mut Model,
    w: &mut StreamWriter,
) -> Result<(usize, u64), FormatError> {
    let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |p| start + p);
    let parsed = classify_in(text, start, end);
    let line = &text[start..end];
    let mut bad = 0;
    if let Line::Bad { column, reason } = &parsed {
        if !options.keep_bad_lines {
            return Err(FormatError {
                file: options.input_name.clone(),
                position: format!("{number}:{column}"),
                message: format!(
                    "not an Elephant Tracks record: {reason}\n  | {}\n  (use --keep-bad-lines to store such lines verbatim)",
                    crate::shared::text::lines::echo(line)
                ),
            });
        }
        bad = 1;
    }
    if end == text.len() {
        w.byte(id::KIND, code::UNTERMINATED);
        w.text(id::TEXT, line);
        return Ok((end, bad));
    }
    match parsed {
        Line::Canonical(r) if !(r.kind == Kind::W && r.fields[1] == u64::MAX) => {
            model.encode(&r, w)
        }
        Line::Canonical(_) | Line::Spelled(_) => {
            w.byte(id::KIND, code::SPELLED);
            w.text(id::TEXT, line);
        }
        Line::Blank => w.byte(id::KIND, code::BLANK),
        Line::Comment | Line::WhiteSpace => {
            w.byte(id::KIND, code::COMMENT);
            w.text(id::TEXT, line);
        }
        Line::Bad { .. } => {
            w.byte(id::KIND, code::BAD);
            w.text(id::TEXT, line);
        }
    }
    Ok((end, bad))
}

/// Per-stream sizes of the first block of a trace (raw bytes, zstd bytes), for measurements.
pub fn stream_sizes(
    flavour: &Flavour,
    text: &[u8],
    level: i32,
) -> Result<Vec<(String, usize, usize)>, FormatError> {
    let order = block_order(flavour, text);
    let mut model = Model::new(order);
    let mut w = StreamWriter::default();
    for (start, end, _) in lines_of(text).filter(|l| l.2) {
        let line = &text[start..end];
        match classify(line) {
            Line::Canonical(r) => model.encode(&r, &mut w),
            _ => {
                w.byte(id::KIND, code::SPELLED);
                w.text(id::TEXT, line);
            }
        }
    }
    w.packed_sizes(level).map_err(|e| io_error("<memory>", e))
}
