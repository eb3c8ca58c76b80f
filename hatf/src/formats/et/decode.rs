//! Container → text trace: replays each block's model over its streams and prints the lines.

use std::io::{Read, Write};

use metatf::container::{Block, ContainerReader};

use super::check::thread_of;
use super::encode::{STREAMS_SECTION, TEXT_LEN_SECTION};
use super::line::{classify, Kind, Line, MAX_FIELDS};
use super::model::{Model, UOrder};
use super::sections::names;
use super::sections::streams::{id, StreamReader};
use super::text::positioned;
use super::text::print::{PrintTo, Printer, TextBuf, HUGE_PAGE, LINE_ROOM};
use crate::format::{DecodeOptions, FormatError};
use crate::shared::threads::{buffer_pool::BufferPool, streamed};

/// Format ids this decoder accepts.
pub const FORMATS: [&str; 2] = ["et2", "et3"];

/// Decodes a container written by [`super::encode::encode`]; returns the number of lines.
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.clone();
    let fail = |position: String, message: String| FormatError {
        file: file.clone(),
        position,
        message,
    };
    let mut reader = open(input, &fail)?;
    let threads = options.threads.max(1);
    let mut lines = 0u64;
    // A damaged block's error names the byte where it starts.
    let mut next = || {
        let at = reader.position();
        match reader.next_block() {
            Ok(Some(block)) => {
                if block.index == 0 {
                    write_names(&block, options).map_err(|m| block_error(&file, at, &block, m))?;
                }
                Ok(Some((at, block)))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(fail(String::new(), e.to_string())),
        }
    };
    let write_error =
        |e: std::io::Error| fail(String::new(), format!("cannot write the text trace: {e}"));
    // Blocks are independent (each starts a fresh model): several are decoded at once on
    // workers and written here in order. A file of one block is decoded on this thread.
    let first = next()?;
    let one_block = first
        .as_ref()
        .is_none_or(|(_, b)| b.record_count < super::encode::BLOCK_LINES as u64);
    // A file whose blocks say their text's length, written into a file: each block's text
    // goes straight to its place, decoded on whichever thread is free (`positioned.rs`).
    #[cfg(unix)]
    if let (false, Some(out_file)) = (one_block || threads == 1, &options.positioned) {
        if first
            .as_ref()
            .is_some_and(|(_, b)| b.section(TEXT_LEN_SECTION).is_some())
        {
            let out_file: &std::fs::File = out_file;
            return positioned::decode_at_offsets(
                threads - 1,
                first,
                next,
                |at, block| text_len(block).map_err(|m| block_error(&file, at, block, m)),
                |fault| fault_error(&file, fault),
                || (Scratch::default(), TextBuf::with_capacity(WRITE_BYTES)),
                |(scratch, out), job| write_block_at(out_file, scratch, out, job, &file),
            );
        }
    }
    if one_block || threads == 1 {
        // One block at a time: the text goes out in pieces as it is printed, through one
        // buffer, instead of being built whole first (1.8 MB of fresh pages for ET2
        // lots_of_allocs, which page-faulted in).
        let mut out = TextBuf::with_capacity(WRITE_BYTES);
        let mut scratch = Scratch::default();
        let mut item = first;
        while let Some((at, block)) = item {
            let mut write = |text: &mut TextBuf| {
                output.write_all(text.as_slice())?;
                text.clear();
                Ok(())
            };
            match block_text_to(
                &block,
                &mut scratch,
                &mut out,
                Some((WRITE_BYTES, &mut write)),
            ) {
                Ok(()) => {}
                Err(TextError::Block(m)) => return Err(block_error(&file, at, &block, m)),
                Err(TextError::Write(e)) => return Err(write_error(e)),
            }
            lines += block.record_count;
            item = next()?;
        }
    } else {
        // Each worker hands its block's text on in pieces as it prints it, and this thread
        // writes the pieces of the oldest block as they come: writing starts with the first
        // piece, not the first whole block, and a piece's memory (paged in once) goes back to
        // the workers as soon as it is written, instead of three 13 MB block texts in flight.
        let pieces = BufferPool::<TextBuf>::new(usize::MAX);
        let fresh = || {
            let mut t = pieces.take();
            if t.capacity() == 0 {
                t = TextBuf::huge_page();
            }
            t.clear();
            t
        };
        let mut first = first;
        // The workers are `threads - 1`, and this thread decodes a block itself whenever it
        // would otherwise wait for their text (`shared/threads/streamed.rs`): its writing is
        // about half as much work as decoding. With a worker per core and a writer only, the
        // writer falls behind and writes the last blocks alone, and the three threads' page
        // faults and writes contend in the kernel (half as much system time again).
        streamed::streamed(
            threads - 1,
            || {
                let item = match first.take() {
                    Some(b) => Some(b),
                    None => next()?,
                };
                lines += item.as_ref().map_or(0, |(_, b)| b.record_count);
                Ok(item)
            },
            Scratch::default,
            |scratch, (at, block): (u64, Block), emit| {
                let mut out = fresh();
                let mut hand_on = |text: &mut TextBuf| {
                    emit(std::mem::replace(text, fresh()));
                    Ok(())
                };
                block_text_to(&block, scratch, &mut out, Some((PIECE_BYTES, &mut hand_on)))
                    .map_err(|e| match e {
                        TextError::Block(m) => block_error(&file, at, &block, m),
                        TextError::Write(e) => write_error(e),
                    })?;
                pieces.give(out);
                Ok(())
            },
            |text: TextBuf| {
                output.write_all(text.as_slice()).map_err(write_error)?;
                pieces.give(text);
                Ok(())
            },
            || fail(String::new(), "a decoding thread failed".to_string()),
        )?;
    }
    output
        .flush()
        .map_err(|e| fail(String::new(), format!("cannot write the text trace: {e}")))?;
    Ok(lines)
}

/// Decodes `job`'s block into its place in `out_file` through `text` (reused from block to
/// block); `file` names the binary input in errors. A block whose text is not as long as it
/// said is damaged.
#[cfg(unix)]
fn write_block_at(
    out_file: &std::fs::File,
    scratch: &mut Scratch,
    text: &mut TextBuf,
    job: &positioned::Job,
    file: &str,
) -> Result<(), FormatError> {
    use std::os::unix::fs::FileExt;
    let mut done = 0u64;
    let mut too_long = false;
    text.clear();
    let limit = job.len.unwrap_or(u64::MAX);
    let mut write = |t: &mut TextBuf| {
        let bytes = t.as_slice();
        let end = done.saturating_add(bytes.len() as u64);
        if end > limit {
            too_long = true;
            return Err(std::io::Error::other("text longer than the block says"));
        }
        out_file.write_all_at(bytes, job.offset.saturating_add(done))?;
        done = end;
        t.clear();
        Ok(())
    };
    let result = block_text_to(&job.block, scratch, text, Some((WRITE_BYTES, &mut write)));
    let block_error = |m: String| block_error(file, job.at, &job.block, m);
    match result {
        Err(TextError::Block(m)) => Err(block_error(m)),
        Err(TextError::Write(_)) if too_long => Err(block_error(format!(
            "its text is longer than the {limit} bytes its text-length section gives"
        ))),
        Err(TextError::Write(e)) => Err(FormatError {
            file: file.to_string(),
            position: String::new(),
            message: format!("cannot write the text trace: {e}"),
        }),
        Ok(()) if job.len.is_some_and(|len| len != done) => Err(block_error(format!(
            "its text is {done} bytes, not the {limit} its text-length section gives"
        ))),
        Ok(()) => Ok(()),
    }
}

/// The error for a [`positioned::Fault`] of a block of `file`.
#[cfg(unix)]
fn fault_error(file: &str, fault: positioned::Fault<'_>) -> FormatError {
    match fault {
        positioned::Fault::Unsaid { at, index } => FormatError {
            file: file.to_string(),
            position: format!("byte {at}"),
            message: format!(
                "block {index}: has no text-length section, but another block follows it"
            ),
        },
        positioned::Fault::Panicked(job) => block_error(
            file,
            job.at,
            &job.block,
            "its decode failed (a panic: please report it)".to_string(),
        ),
    }
}

/// The length of `block`'s text, from its text-length section; `None` for a block without
/// one (only the last block of a trace may lack it).
#[cfg(unix)]
fn text_len(block: &Block) -> Result<Option<u64>, String> {
    let Some(section) = block.section(TEXT_LEN_SECTION) else {
        return Ok(None);
    };
    let mut c = metatf::varint::Cursor::new(&section.bytes, "text length");
    let len = c.u64()?;
    if !c.is_empty() {
        return Err("text length section has bytes after the length".to_string());
    }
    Ok(Some(len))
}

/// The error for block `block`, which starts at byte `at` of `file`.
pub(super) fn block_error(file: &str, at: u64, block: &Block, message: String) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: format!("byte {at}"),
        message: format!("block {}: {message}", block.index),
    }
}

/// Opens the container and checks that it holds an Elephant Tracks trace.
fn open<R: Read>(
    input: R,
    fail: &impl Fn(String, String) -> FormatError,
) -> Result<ContainerReader<R>, FormatError> {
    let reader = ContainerReader::new(input).map_err(|e| fail(String::new(), e.to_string()))?;
    let format = &reader.header().format;
    if !FORMATS.contains(&format.as_str()) {
        return Err(fail(
            String::new(),
            format!("this file holds format `{format}`, not an Elephant Tracks trace"),
        ));
    }
    Ok(reader)
}

/// Appends the text of every line of `block` to `out`. Each block starts a fresh model, so
/// this needs nothing from other blocks.
pub(super) fn block_text(block: &Block, out: &mut TextBuf) -> Result<(), String> {
    block_text_to(block, &mut Scratch::default(), out, None).map_err(|e| match e {
        TextError::Block(m) => m,
        TextError::Write(e) => e.to_string(),
    })
}

/// Text printed between two writes by [`block_text_to`] when a block is written as it is
/// decoded on the calling thread. At least the
/// CLI's output buffer (1 MiB), which then passes each piece straight to the file instead of
/// copying it (smaller pieces would be copied, a cost on every byte of the text).
const WRITE_BYTES: usize = 1 << 20;

/// Text per piece handed from a decoding worker to the writing thread: a piece fills one
/// huge page ([`TextBuf::huge_page`]), a line's room included, without growing.
const PIECE_BYTES: usize = HUGE_PAGE - 2 * LINE_ROOM;

/// Most bytes a record the model decodes prints: a letter, six fields of a space and 20
/// digits, a `\n`.
const LONGEST_RECORD_LINE: usize = 1 + MAX_FIELDS * 21 + 1;

/// Where [`block_text_to`] hands its text once it holds at least the given number of bytes:
/// the sink writes it out and clears it, or swaps in a fresh buffer.
type TextSink<'a> = (
    usize,
    &'a mut dyn FnMut(&mut TextBuf) -> std::io::Result<()>,
);

/// Why a block's text could not be written.
enum TextError {
    /// The block is damaged.
    Block(String),
    /// The output refused the text.
    Write(std::io::Error),
}

impl From<String> for TextError {
    fn from(m: String) -> Self {
        TextError::Block(m)
    }
}

/// What decoding a block needs besides the block, kept from block to block by one thread:
/// fresh tables and stream buffers for each block page-faulted in again as they filled.
#[derive(Default)]
pub(super) struct Scratch {
    model: Option<Model>,
    streams: StreamReader,
}

impl Scratch {
    /// Loads `block`'s streams and resets the model to its U field order, for decoding the
    /// block's records from the start.
    pub(super) fn start(
        &mut self,
        block: &Block,
    ) -> Result<(&mut StreamReader, &mut Model), String> {
        let section = block
            .section(STREAMS_SECTION)
            .ok_or_else(|| "has no stream section".to_string())?;
        let (&order, packed) = section
            .bytes
            .split_first()
            .ok_or_else(|| "stream section is empty".to_string())?;
        let order =
            UOrder::from_code(order).ok_or_else(|| format!("unknown U field order {order}"))?;
        self.streams.refill(packed).map_err(|e| e.message())?;
        if let Some(model) = &mut self.model {
            model.reset(order);
        }
        let model = self
            .model
            .get_or_insert_with(|| Model::for_decoding(order, block.record_count));
        Ok((&mut self.streams, model))
    }
}

/// [`block_text`], handing the text to `write` (when given) whenever it holds the sink's
/// number of bytes, and at the end, instead of collecting all of it in `out`.
///
/// The block is decoded with its problems checked once per batch of lines (see
/// [`StreamReader::failed`]); a damaged block is decoded again, checking after every line, to
/// name the line where it went wrong. The text handed to `write` is always that of lines
/// already checked.
fn block_text_to(
    block: &Block,
    scratch: &mut Scratch,
    out: &mut TextBuf,
    write: Option<TextSink<'_>>,
) -> Result<(), TextError> {
    match lines_to::<false>(block, scratch, out, write) {
        Err(TextError::Block(batch)) => {
            let mut text = TextBuf::default();
            match lines_to::<true>(block, scratch, &mut text, None) {
                Err(TextError::Block(line)) => Err(TextError::Block(line)),
                // Not met again (it cannot be: a decode depends only on the block).
                _ => Err(TextError::Block(batch)),
            }
        }
        done => done,
    }
}

/// Most lines decoded between two checks of the streams: a damaged block's garbage is never
/// more than this many lines of text, whatever number of records its header claims.
pub(super) const CHECK_LINES: u64 = 4096;

/// [`block_text_to`]'s decode: its problems checked after every line when `EACH_LINE`, else
/// after each batch of at most [`CHECK_LINES`] lines.
fn lines_to<const EACH_LINE: bool>(
    block: &Block,
    scratch: &mut Scratch,
    out: &mut TextBuf,
    mut write: Option<TextSink<'_>>,
) -> Result<(), TextError> {
    let (streams, model) = scratch.start(block)?;
    let mut printer = Printer::default();
    let line_of = |k: u64| block.first_record.saturating_add(k).saturating_add(1);
    let mut k = 0u64;
    while k < block.record_count {
        // Records printed before the text is next measured: as many lines of the longest
        // record as fit below the hand-on size (a comment's line may go past it; the text
        // grows), instead of a test per record.
        let batch = match write.as_mut() {
            Some((bytes, write)) => {
                if out.len() >= *bytes {
                    write(out).map_err(TextError::Write)?;
                }
                (bytes.saturating_sub(out.len()) / LONGEST_RECORD_LINE).max(1) as u64
            }
            None => u64::MAX,
        };
        let start = k;
        let end = block
            .record_count
            .min(k.saturating_add(batch.min(CHECK_LINES)));
        let mut sink = PrintTo {
            printer: &mut printer,
            out,
        };
        // Counted down to 0, not up to `end`: one test a line on a counter the compiler keeps
        // in memory, not a load, an add, a store and a comparison with another.
        let mut left = end - k;
        while left > 0 {
            let c = streams.byte(id::KIND);
            model.decode(c, streams, &mut sink);
            if EACH_LINE && streams.failed() {
                break;
            }
            left -= 1;
        }
        k = end - left;
        if let Some(e) = streams.take_failure() {
            let at = if EACH_LINE {
                format!("line {} (record {k} of the block)", line_of(k))
            } else {
                format!(
                    "lines {} to {} (records {start} to {} of the block)",
                    line_of(start),
                    line_of(end - 1),
                    end - 1
                )
            };
            return Err(TextError::Block(format!("{at}: {}", e.message())));
        }
    }
    let left = streams.leftovers();
    if !left.is_empty() {
        return Err(TextError::Block(format!(
            "bytes left over in streams {}",
            left.join(", ")
        )));
    }
    if let Some((_, write)) = write {
        write(out).map_err(TextError::Write)?;
    }
    Ok(())
}

/// The thread ids (ascending) of the records of `block` that went through the model, as the
/// encoder listed them in the index: what `hatf recover` uses when a damaged file's index is
/// lost. Each block decodes on its own.
pub fn block_threads(block: &Block) -> Result<Vec<u64>, String> {
    let mut text = TextBuf::default();
    block_text(block, &mut text)?;
    let mut ids = std::collections::BTreeSet::new();
    for raw in text.as_slice().split_inclusive(|&b| b == b'\n') {
        // The encoder models only terminated, canonical lines, and stores a `W` whose class
        // is the largest number verbatim.
        let Some(line) = raw.strip_suffix(b"\n") else {
            continue;
        };
        if let Line::Canonical(r) = classify(line) {
            if !(r.kind == Kind::W && r.fields[1] == u64::MAX) {
                ids.insert(thread_of(&r));
            }
        }
    }
    Ok(ids.into_iter().collect())
}

fn write_names(block: &metatf::container::Block, options: &DecodeOptions) -> Result<(), String> {
    let Some(dir) = &options.names_dir else {
        // Still refuse an index naming files this format never stores, as reading it would.
        return match block.section(names::INDEX_SECTION) {
            Some(index) => names::parse_index(&index.bytes).map(drop),
            None => Ok(()),
        };
    };
    if block.section(names::INDEX_SECTION).is_none() {
        return Ok(());
    }
    let files = names::stored(block)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, bytes) in &files {
        let path = dir.join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{EncodeOptions, TraceFormat};

    /// A block claiming more records than its streams hold fails at the first missing line,
    /// named exactly as a check after every line names it, having handed on only checked
    /// text (a prefix of the trace's); a claim of billions of records fails as quickly.
    #[test]
    fn a_block_short_of_records_names_the_first_missing_line() {
        let mut text = String::new();
        for k in 0..10_000u64 {
            text.push_str(&format!(
                "M {} 0 1496724653\nE {} 1496724653\n",
                k % 70,
                k % 70
            ));
        }
        let mut packed = Vec::new();
        super::super::ET3
            .encode(&mut text.as_bytes(), &mut packed, &EncodeOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut reader = ContainerReader::new(&packed[..]).expect("a container");
        let mut block = reader.next_block().expect("a block").expect("one block");
        assert_eq!(block.record_count, 20_000);
        for claim in [20_001, 20_500, u64::MAX] {
            block.record_count = claim;
            let mut joined = Vec::new();
            let mut sink = |t: &mut TextBuf| {
                joined.extend_from_slice(t.as_slice());
                t.clear();
                Ok(())
            };
            let mut out = TextBuf::default();
            let got = block_text_to(
                &block,
                &mut Scratch::default(),
                &mut out,
                Some((100, &mut sink)),
            );
            let Err(TextError::Block(m)) = got else {
                panic!("claim {claim}: no block error");
            };
            assert!(
                m.starts_with(
                    "line 20001 (record 20000 of the block): stream `control` ends early"
                ),
                "claim {claim}: {m}"
            );
            assert!(text.as_bytes().starts_with(&joined), "claim {claim}");
            assert!(
                joined.len() > text.len() / 2,
                "claim {claim}: checked text handed on"
            );
        }
        // Fewer records than the streams hold.
        block.record_count = 19_999;
        let m = block_text(&block, &mut TextBuf::default()).expect_err("bytes left over");
        assert!(
            m.starts_with("bytes left over in streams control, thread"),
            "{m}"
        );
    }

    /// A block handed on in pieces of any size (pieces are measured once per batch of
    /// records, and comments can be longer than a batch's room) gives its text whole and in
    /// order.
    #[test]
    fn pieces_of_any_size_join_into_the_block_text() {
        let mut text = String::new();
        for k in 0..4000u64 {
            match k % 9 {
                0 => text.push_str(&format!("# note {k} {}\n", "x".repeat((k % 700) as usize))),
                1 => text.push('\n'),
                2 => text.push_str(&format!("M {} 0 1496724653\n", k % 300)),
                3 => text.push_str(&format!("E {} 1496724653\n", k % 300)),
                _ => text.push_str(&format!(
                    "W {} {} {}\n",
                    100_000_000 + k * 7919 % 5000,
                    k % 40,
                    1_496_724_653 + k % 3
                )),
            }
        }
        text.push_str("E 3 1496724653");
        let mut packed = Vec::new();
        super::super::ET3
            .encode(&mut text.as_bytes(), &mut packed, &EncodeOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut reader = ContainerReader::new(&packed[..]).expect("a container");
        let block = reader.next_block().expect("a block").expect("one block");
        let mut whole = TextBuf::default();
        block_text(&block, &mut whole).expect("decodes");
        assert!(whole.as_slice() == text.as_bytes());
        for bytes in [0, 1, 100, 129, 4096, PIECE_BYTES] {
            let mut pieces = Vec::new();
            let mut joined = Vec::new();
            let mut sink = |t: &mut TextBuf| {
                pieces.push(t.len());
                joined.extend_from_slice(t.as_slice());
                t.clear();
                Ok(())
            };
            let mut out = TextBuf::huge_page();
            let mut scratch = Scratch::default();
            if block_text_to(&block, &mut scratch, &mut out, Some((bytes, &mut sink))).is_err() {
                panic!("pieces of {bytes} bytes: an error");
            }
            assert!(joined == text.as_bytes(), "pieces of {bytes} bytes");
            // A piece goes out as soon as it holds `bytes`: only a comment takes it further
            // than one record line.
            let longest_comment = 1000;
            assert!(
                pieces
                    .iter()
                    .all(|&n| n < bytes + LONGEST_RECORD_LINE + longest_comment),
                "pieces of {bytes} bytes: {:?}",
                pieces.iter().max()
            );
        }
    }
}
