//! Text trace → container: reads lines in blocks, predicts each record from the block's model and
//! writes the residues into split streams.

use std::io::{BufRead, BufReader, Read, Write};

use metatf::container::{Codec, ContainerHeader, ContainerWriter, SectionData, PROPERTY_LAYOUT};

use super::line::{classify, Kind, Line};
use super::model::{code, u_order_vote, Model, UOrder};
use super::names;
use super::streams::{id, StreamWriter};
use crate::format::{Compression, EncodeOptions, EncodeReport, FormatError};

/// The value of the container's `layout` property for Elephant Tracks files.
pub const ET_LAYOUT: &str = "et-model-1";

/// Lines per block: big enough for the streams to compress well, small enough to bound memory.
pub const BLOCK_LINES: usize = 1 << 19;
/// Section holding a block's packed streams.
pub const STREAMS_SECTION: u8 = 1;
/// Default zstd level of the streams.
pub const DEFAULT_LEVEL: i32 = 19;

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
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut report = EncodeReport::default();
    let mut first_line = 1u64;
    let mut first_block = true;
    let threads = options.threads.max(1);
    let mut at_end = false;
    while !at_end {
        // Blocks are independent (each starts a fresh model). The model runs here, one block
        // of text at a time; compressing the streams, most of the work at high levels, runs
        // for a batch of blocks on as many threads, and the blocks are written in order: the
        // same bytes whatever the thread count, and only one block's text in memory.
        let mut batch = Vec::with_capacity(threads);
        while batch.len() < threads && !at_end {
            let (text, ends) = read_block(&mut reader).map_err(|e| io_error(file, e))?;
            at_end = ends.len() < BLOCK_LINES;
            if ends.is_empty() && !(first_block && batch.is_empty()) {
                break;
            }
            report.input_bytes += text.len() as u64;
            let modelled = model_block(flavour, &text, &ends, first_line, options)?;
            first_line += ends.len() as u64;
            batch.push((modelled, ends.len() as u64));
        }
        let packed = pack_batch(&batch, options, level);
        for ((modelled, lines), result) in batch.iter().zip(packed) {
            let packed = result?;
            report.bad_lines += modelled.bad_lines;
            let name_index = if first_block {
                names::index(&name_files)
            } else {
                Vec::new()
            };
            let mut sections = vec![SectionData {
                number: STREAMS_SECTION,
                element_width: 1,
                codec: Codec::None,
                level: 0,
                bytes: &packed,
            }];
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
            writer.set_block_threads(&modelled.threads);
            writer
                .write_block(*lines, &sections)
                .map_err(|e| io_error(file, e))?;
            report.records += lines;
            first_block = false;
        }
    }
    writer.finish().map_err(|e| io_error(file, e))?;
    Ok(report)
}

/// Reads up to [`BLOCK_LINES`] lines: the text and the end offset of each line in it.
fn read_block(reader: &mut impl BufRead) -> std::io::Result<(Vec<u8>, Vec<usize>)> {
    let mut text = Vec::new();
    let mut ends = Vec::new();
    while ends.len() < BLOCK_LINES {
        if reader.read_until(b'\n', &mut text)? == 0 {
            break;
        }
        ends.push(text.len());
    }
    Ok((text, ends))
}

/// One block after the model: its `U` order, its streams, and how many lines were bad.
struct Modelled {
    order: UOrder,
    streams: StreamWriter,
    bad_lines: u64,
    /// Thread ids of the block's records, for the index.
    threads: Vec<u64>,
}

/// Compresses and packs the streams of each block of `batch`, on its own thread when there
/// are several; results in order.
fn pack_batch(
    batch: &[(Modelled, u64)],
    options: &EncodeOptions,
    level: i32,
) -> Vec<Result<Vec<u8>, FormatError>> {
    let one = |(m, _): &(Modelled, u64)| {
        let mut out = vec![m.order.code()];
        out.extend(
            m.streams
                .pack(level)
                .map_err(|e| io_error(&options.input_name, e))?,
        );
        Ok(out)
    };
    if batch.len() <= 1 {
        return batch.iter().map(one).collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = batch.iter().map(|b| scope.spawn(move || one(b))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(io_error(&options.input_name, "an encoding thread failed"))
                })
            })
            .collect()
    })
}

/// Decides a block's `U` order by majority of the records that show it.
fn block_order(flavour: &Flavour, text: &[u8], ends: &[usize]) -> UOrder {
    let (mut fv, mut vf) = (0u64, 0u64);
    let mut start = 0;
    for &end in ends {
        let line = &text[start..end];
        start = end;
        if line.first() != Some(&b'U') {
            continue;
        }
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        if let Line::Canonical(r) | Line::Spelled(r) = classify(line) {
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

fn model_block(
    flavour: &Flavour,
    text: &[u8],
    ends: &[usize],
    first_line: u64,
    options: &EncodeOptions,
) -> Result<Modelled, FormatError> {
    let mut bad_lines = 0;
    let order = block_order(flavour, text, ends);
    let mut model = Model::new(order);
    let mut w = StreamWriter::default();
    let mut start = 0;
    for (k, &end) in ends.iter().enumerate() {
        let raw = &text[start..end];
        start = end;
        let (line, terminated) = match raw.strip_suffix(b"\n") {
            Some(l) => (l, true),
            None => (raw, false),
        };
        let parsed = classify(line);
        if let Line::Bad { column, reason } = &parsed {
            if !options.keep_bad_lines {
                return Err(FormatError {
                    file: options.input_name.clone(),
                    position: format!("{}:{}", first_line + k as u64, column),
                    message: format!(
                        "not an Elephant Tracks record: {reason}\n  | {}\n  (use --keep-bad-lines to store such lines verbatim)",
                        String::from_utf8_lossy(line)
                    ),
                });
            }
            bad_lines += 1;
        }
        if !terminated {
            w.byte(id::KIND, code::UNTERMINATED);
            w.text(id::TEXT, line);
            continue;
        }
        match parsed {
            Line::Canonical(r) if !(r.kind == Kind::W && r.fields[1] == u64::MAX) => {
                model.encode(&r, &mut w)
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
    }
    Ok(Modelled {
        order,
        streams: w,
        bad_lines,
        threads: model.threads_seen(),
    })
}

/// Per-stream sizes of the first block of a trace (raw bytes, zstd bytes), for measurements.
pub fn stream_sizes(
    flavour: &Flavour,
    text: &[u8],
    level: i32,
) -> Result<Vec<(String, usize, usize)>, FormatError> {
    let ends: Vec<usize> = memchr::memchr_iter(b'\n', text).map(|p| p + 1).collect();
    let order = block_order(flavour, text, &ends);
    let mut model = Model::new(order);
    let mut w = StreamWriter::default();
    let mut start = 0;
    for &end in &ends {
        let line = &text[start..end - 1];
        start = end;
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
