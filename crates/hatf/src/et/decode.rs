//! Container → text trace: replays each block's model over its streams and prints the lines.

use std::io::{Read, Seek, SeekFrom, Write};

use metatf::container::{load_index, scan_index, Block, ContainerReader};

use super::encode::STREAMS_SECTION;
use super::line::render;
use super::model::{code, Model, UOrder};
use super::names;
use super::streams::{id, StreamReader};
use crate::format::{DecodeOptions, FormatError};

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
    let mut lines = 0u64;
    let mut out = Vec::new();
    loop {
        let at = reader.position();
        let block = match reader.next_block() {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => return Err(fail(String::new(), e.to_string())),
        };
        let bfail = |msg: String| {
            fail(
                format!("byte {at}"),
                format!("block {}: {msg}", block.index),
            )
        };
        if block.index == 0 {
            write_names(&block, options).map_err(&bfail)?;
        }
        out.clear();
        block_text(&block, &mut out).map_err(&bfail)?;
        output
            .write_all(&out)
            .map_err(|e| fail(String::new(), format!("cannot write the text trace: {e}")))?;
        lines += block.record_count;
    }
    output
        .flush()
        .map_err(|e| fail(String::new(), format!("cannot write the text trace: {e}")))?;
    Ok(lines)
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
fn block_text(block: &Block, out: &mut Vec<u8>) -> Result<(), String> {
    let section = block
        .section(STREAMS_SECTION)
        .ok_or_else(|| "has no stream section".to_string())?;
    let (&order, packed) = section
        .bytes
        .split_first()
        .ok_or_else(|| "stream section is empty".to_string())?;
    let order = UOrder::from_code(order).ok_or_else(|| format!("unknown U field order {order}"))?;
    let mut streams = StreamReader::unpack(packed).map_err(|e| e.0)?;
    let mut model = Model::new(order);
    for k in 0..block.record_count {
        let rfail = |msg: String| {
            format!(
                "line {} (record {k} of the block): {msg}",
                block.first_record.saturating_add(k).saturating_add(1)
            )
        };
        let c = streams.byte(id::KIND).map_err(|e| rfail(e.0))?;
        match c {
            code::BLANK => out.push(b'\n'),
            code::COMMENT | code::SPELLED | code::BAD => {
                out.extend(streams.text(id::TEXT).map_err(|e| rfail(e.0))?);
                out.push(b'\n');
            }
            code::UNTERMINATED => out.extend(streams.text(id::TEXT).map_err(|e| rfail(e.0))?),
            c => {
                let r = model.decode(c, &mut streams).map_err(|e| rfail(e.0))?;
                render(&r, out);
                out.push(b'\n');
            }
        }
    }
    let left = streams.leftovers();
    if !left.is_empty() {
        return Err(format!("bytes left over in streams {}", left.join(", ")));
    }
    Ok(())
}

/// Decodes only records (lines) `first..end` (counted from 0, `end` exclusive and clipped to
/// the trace), reading only the blocks that hold them: the index says where they are, and
/// when it is missing, damaged or inconsistent it is rebuilt by reading the block headers and
/// `note` is told why. Returns the number of lines written. Name files are not written.
pub fn decode_records<R: Read + Seek>(
    mut input: R,
    output: &mut dyn Write,
    options: &DecodeOptions,
    first: u64,
    end: u64,
    note: &mut dyn FnMut(&str),
) -> Result<u64, FormatError> {
    let file = options.input_name.clone();
    let fail = |position: String, message: String| FormatError {
        file: file.clone(),
        position,
        message,
    };
    let (mut entries, why) =
        load_index(&mut input).map_err(|e| fail(String::new(), e.to_string()))?;
    // An index already rebuilt by scanning is not scanned again.
    let mut rebuilt = why.is_some();
    if let Some(why) = why {
        note(&format!(
            "the index could not be used ({why}); rebuilt it by scanning"
        ));
    }
    input
        .seek(SeekFrom::Start(0))
        .map_err(|e| fail(String::new(), e.to_string()))?;
    let mut reader = open(input, &fail)?;
    let mut written = 0u64;
    let mut out = Vec::new();
    let mut k = 0;
    while k < entries.len() {
        let entry = entries[k];
        let block_end = entry.first_record.saturating_add(entry.record_count);
        if block_end <= first || entry.first_record >= end {
            k += 1;
            continue;
        }
        let read = reader
            .seek_block(k as u64, &entry)
            .and_then(|()| reader.next_block());
        let block = match read {
            Ok(Some(b)) => b,
            // An index that points at the wrong bytes is rebuilt once, then trusted no more.
            Err(e) if !rebuilt => {
                note(&format!(
                    "the index is inconsistent with block {k} ({e}); rebuilt it by scanning"
                ));
                // The file's own index passed its checksum, so only a scan can replace it; a
                // scan stops at damage, and the blocks before it are indexed.
                let mut again = reader.into_inner();
                let rewind = |r: &mut R| {
                    r.seek(SeekFrom::Start(0))
                        .map_err(|e| fail(String::new(), e.to_string()))
                };
                rewind(&mut again)?;
                entries = scan_index(&mut again)
                    .map_err(|e| fail(String::new(), e.to_string()))?
                    .0;
                rewind(&mut again)?;
                reader = open(again, &fail)?;
                rebuilt = true;
                k = 0;
                continue;
            }
            Err(e) => return Err(fail(format!("byte {}", entry.offset), e.to_string())),
            Ok(None) => {
                return Err(fail(
                    format!("byte {}", entry.offset),
                    format!("block {k} of the index is not in the file"),
                ))
            }
        };
        out.clear();
        block_text(&block, &mut out)
            .map_err(|m| fail(format!("byte {}", entry.offset), format!("block {k}: {m}")))?;
        // Record i of the block is its line i; the last line may lack its newline.
        let skip = first.saturating_sub(entry.first_record);
        let take = end.min(block_end) - entry.first_record.max(first);
        let mut starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', &out).map(|p| p + 1));
        let from = starts.by_ref().nth(skip as usize).unwrap_or(out.len());
        let to = if take == 0 {
            from
        } else {
            starts.nth(take as usize - 1).unwrap_or(out.len())
        };
        output
            .write_all(&out[from..to])
            .map_err(|e| fail(String::new(), format!("cannot write the text trace: {e}")))?;
        written += take;
        k += 1;
    }
    output
        .flush()
        .map_err(|e| fail(String::new(), format!("cannot write the text trace: {e}")))?;
    Ok(written)
}

fn write_names(block: &metatf::container::Block, options: &DecodeOptions) -> Result<(), String> {
    let Some(index) = block.section(names::INDEX_SECTION) else {
        return Ok(());
    };
    let list = names::parse_index(&index.bytes)?;
    let Some(dir) = &options.names_dir else {
        return Ok(());
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (k, name) in list.iter().enumerate() {
        let number = u8::try_from(k + 1 + names::INDEX_SECTION as usize)
            .map_err(|_| "too many name files".to_string())?;
        let s = block
            .section(number)
            .ok_or_else(|| format!("name file `{name}` (section {number}) is missing"))?;
        let path = dir.join(name);
        std::fs::write(&path, &s.bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
