//! The ZIP archive a JVM trace is shipped in: the text of its member `trace` goes through the
//! model; the rest of the archive (headers, other members, central directory) is kept as bytes.
//!
//! The member's compressed bytes are not stored when they can be made again: a stored member
//! (method 0) is the text itself, and a deflated one is kept only if flate2 (the deflater of the
//! `zip` crate) at some level 0–9 gives exactly the same bytes. Otherwise (another deflater, such
//! as Info-ZIP's, another method, a damaged archive) the archive is stored as is, like
//! `memory-replay-zip`, and the property `deflate-reason` says why.

use std::io::{Read, Write};

use flate2::write::DeflateEncoder;
use metatf::container::{ContainerHeader, PROPERTY_LAYOUT};

use super::decode;
use super::encode::{self, BlockPlan};
use super::DTD;
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError};
use crate::shared::archive::raw_store;
use crate::shared::archive::zip_entry::{self, Wanted};
use crate::shared::container::blocks::{self, container_error, write_error, BlockWriter};
use crate::shared::text::line_reader::{LongLines, MAX_LINE_BYTES};
use metatf::varint::{put_u64, Cursor as StreamCursor};

/// Format id stored in the container header.
pub const FORMAT: &str = "jvm-zip";
/// Name of the archive member holding the trace.
pub const MEMBER: &str = "trace";
/// The `layout` property of the fallback that keeps the archive's bytes as they are (what
/// [`raw_store::encode`] writes).
const ORIGINAL_BYTES: &str = "original-bytes";
/// Section of block 0: where the member's data sits and how to make it again.
pub const ZIP_INFO: u8 = 40;
/// Section of block 0: the archive without the member's data.
pub const ZIP_REST: u8 = 41;
/// Deflate levels tried, most likely first (6 is the default of zlib, flate2 and `zip`).
const LEVELS: [u32; 10] = [6, 9, 1, 2, 3, 4, 5, 7, 8, 0];

/// How the member's data is made from its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// Method 0: the data is the text.
    Stored,
    /// Method 8, reproduced by flate2 at this level.
    Deflated(u32),
}

/// Where the member's data is in the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Offset of the first data byte.
    pub start: usize,
    /// Length of the data (compressed size).
    pub len: usize,
    /// How the data is made again.
    pub data: Data,
}

/// True when `head` is a zip whose `trace` member (found by walking the local headers within
/// `head`) begins with a JVM trace record.
pub fn detect(head: &[u8]) -> bool {
    zip_entry::entry_start(head, Wanted::Named(MEMBER))
        .is_some_and(|start| super::looks_like_trace(&start))
}

/// Output of the member's data made again on decoding: counts and checksums it on its way.
struct DataCheck<'a> {
    out: &'a mut dyn Write,
    len: u64,
    crc: flate2::Crc,
}

impl Write for DataCheck<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(b)?;
        self.len += n as u64;
        self.crc.update(&b[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Output of the member's data that compares with the original instead of storing.
struct Compare<'a> {
    want: &'a [u8],
    pos: usize,
}

impl Write for Compare<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.want.get(self.pos..self.pos + b.len()) == Some(b) {
            self.pos += b.len();
            Ok(b.len())
        } else {
            Err(std::io::Error::other("differs"))
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Deflates `text` at `level`.
pub fn deflate(text: &[u8], level: u32) -> std::io::Result<Vec<u8>> {
    let mut e = DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(text)?;
    e.finish()
}

/// Candidate levels of a deflated member, each deflating the text as it streams and comparing
/// with the member's data (dropped at the first difference).
struct Candidates<'a> {
    want: &'a [u8],
    levels: Vec<(u32, DeflateEncoder<Compare<'a>>)>,
}

impl<'a> Candidates<'a> {
    fn new(want: &'a [u8]) -> Self {
        let levels = LEVELS
            .iter()
            .map(|&l| {
                let out = Compare { want, pos: 0 };
                (l, DeflateEncoder::new(out, flate2::Compression::new(l)))
            })
            .collect();
        Candidates { want, levels }
    }

    fn take(&mut self, text: &[u8]) {
        self.levels.retain_mut(|(_, e)| e.write_all(text).is_ok());
    }

    /// The first level, in [`LEVELS`]' order, that made exactly the member's data.
    fn finish(self) -> Option<u32> {
        let want = self.want.len();
        self.levels
            .into_iter()
            .find_map(|(l, e)| e.finish().is_ok_and(|c| c.pos == want).then_some(l))
    }
}

/// Finds the `trace` member and decides how its data can be made again, streaming its text
/// once (never held whole) through the deflate levels that may have made it; `Err` says why
/// the archive must be stored as is, including a line the text model cannot keep (longer
/// than [`MAX_LINE_BYTES`]), so that a zip bomb of one endless line is stored, not refused.
pub fn analyse(bytes: &[u8]) -> Result<Layout, String> {
    let found = zip_entry::with_entry_in(bytes, Wanted::Named(MEMBER), |entry, text| {
        let start = usize::try_from(entry.data_start).map_err(|_| "member too far")?;
        let len = usize::try_from(entry.compressed_size).map_err(|_| "member too big")?;
        // with_entry_in checked that the data lies inside the archive.
        let want = &bytes[start..start + len];
        let mut candidates = match entry.method {
            ::zip::CompressionMethod::Stored => None,
            ::zip::CompressionMethod::Deflated => Some(Candidates::new(want)),
            m => {
                return Err(format!(
                    "member `{MEMBER}` uses compression {m}, which is not modelled"
                ))
            }
        };
        let mut buf = vec![0u8; 64 << 10];
        let (mut long, mut at) = (LongLines::default(), 0usize);
        loop {
            let n = text
                .read(&mut buf)
                .map_err(|e| format!("member `{MEMBER}` does not read back: {e}"))?;
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            if long.take(at, chunk).is_err() {
                return Err(format!(
                    "member `{MEMBER}` holds a line longer than {MAX_LINE_BYTES} bytes"
                ));
            }
            at += n;
            if let Some(c) = &mut candidates {
                c.take(chunk);
            }
        }
        let data = match candidates {
            None => Data::Stored,
            Some(c) => Data::Deflated(
                c.finish()
                    .ok_or("its deflate stream is not what flate2 makes at any level 0-9")?,
            ),
        };
        Ok(Layout { start, len, data })
    })?;
    found.map_err(|e: String| e)
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(bytes);
    c.sum()
}

/// Hands the text of the `trace` member of the zip read from `input` to `f` as a stream (for
/// stats and validate): the archive is held (at most [`zip_entry::MAX_HELD`] bytes, so that
/// its central directory is read), its text never.
pub fn with_member_text<T>(
    input: &mut dyn Read,
    file: &str,
    f: impl FnOnce(&mut dyn Read) -> Result<T, FormatError>,
) -> Result<T, FormatError> {
    let fail = |message: String| FormatError {
        file: file.to_string(),
        position: String::new(),
        message,
    };
    let held = zip_entry::hold(input, file)?;
    if held.more {
        return Err(fail(format!(
            "the archive is larger than the {} bytes read into memory to find its member \
             `{MEMBER}`",
            zip_entry::MAX_HELD
        )));
    }
    zip_entry::with_entry_in(&held.bytes, Wanted::Named(MEMBER), |_, text| f(text)).map_err(fail)?
}

/// Encodes a zip holding a JVM trace, the member's text cut into blocks as `plan` says
/// ([`BlockPlan::DEFAULT`] is what `hatf encode` writes; other plans serve tests). The archive
/// is held in memory (a larger one than [`zip_entry::MAX_HELD`] is stored as its bytes); the
/// member's text is streamed twice, once to find how its data is made and once into the
/// model, and never held whole.
pub fn encode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
    plan: BlockPlan,
) -> Result<EncodeReport, FormatError> {
    zip_entry::encode_archive(
        FORMAT,
        DTD,
        input,
        output,
        options,
        analyse,
        |bytes, layout, output| write_parts(bytes, layout, output, options, plan),
    )
}

/// Writes the archive `bytes` taken apart as `layout` says: its layout and the rest of the
/// archive in block 0, the member's text through the model in the blocks after it.
fn write_parts(
    bytes: &[u8],
    layout: Layout,
    output: &mut dyn Write,
    options: &EncodeOptions,
    plan: BlockPlan,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let deflate = match layout.data {
        Data::Stored => "stored".to_string(),
        Data::Deflated(l) => format!("flate2-level-{l}"),
    };
    let mut header = plan.header(FORMAT);
    header.properties.push(("deflate".to_string(), deflate));
    let mut info = Vec::new();
    put_u64(&mut info, layout.start as u64);
    put_u64(&mut info, layout.len as u64);
    info.push(match layout.data {
        Data::Stored => 0,
        Data::Deflated(l) => l as u8 + 1,
    });
    info.extend_from_slice(&crc32(&bytes[layout.start..layout.start + layout.len]).to_be_bytes());
    let mut rest = bytes[..layout.start].to_vec();
    rest.extend_from_slice(&bytes[layout.start + layout.len..]);
    let mut out = BlockWriter::new(output, &header, options)?;
    out.block(0, &[(ZIP_INFO, &info), (ZIP_REST, &rest)])?;
    drop(rest);
    let member = EncodeOptions {
        input_name: format!("{file}!{MEMBER}"),
        ..options.clone()
    };
    let fail = |message: String| FormatError {
        file: file.to_string(),
        position: String::new(),
        message,
    };
    let report = zip_entry::with_entry_in(bytes, Wanted::Named(MEMBER), |_, text| {
        encode::encode_into(text, &mut out, &member, plan)
    })
    .map_err(fail)??;
    out.finish()?;
    Ok(report)
}

/// True when the file keeps the archive's bytes as they are (the fallback of [`encode`]), not
/// its member's lines through the model.
pub fn is_stored_as_is(header: &ContainerHeader) -> bool {
    header.property(PROPERTY_LAYOUT) == Some(ORIGINAL_BYTES)
}

/// Writes the archive back; returns the number of lines of its trace (blocks when stored as is).
pub fn decode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &DecodeOptions,
) -> Result<u64, FormatError> {
    let file = options.input_name.as_str();
    let mut r = blocks::open(input, FORMAT, file)?;
    let fail = |message: String| FormatError {
        file: file.to_string(),
        position: String::new(),
        message,
    };
    if is_stored_as_is(r.header()) {
        return raw_store::write_blocks(&mut r, output, file);
    }
    let first = r
        .next_block()
        .map_err(|e| container_error(file, e))?
        .ok_or_else(|| fail("no block with the archive's layout".to_string()))?;
    let mut c = StreamCursor::new(blocks::section(&first, ZIP_INFO), "zip_info");
    let bad = |m: String| fail(format!("block 0: {m}"));
    let start = c.u64().map_err(bad)? as usize;
    let len = c.u64().map_err(bad)? as usize;
    let mode = c.byte().map_err(bad)?;
    let crc = c.take(4).map_err(bad)?;
    let crc = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    let rest = blocks::section(&first, ZIP_REST);
    if start > rest.len() || mode > 10 {
        return Err(bad(format!(
            "data offset {start} or mode {mode} out of range"
        )));
    }
    super::check_layout(r.header(), file)?;
    output
        .write_all(&rest[..start])
        .map_err(|e| write_error(file, e))?;
    // The member's data is made as its text is decoded, and counted and checked on its way
    // out: neither is held whole.
    let mut data = DataCheck {
        out: &mut *output,
        len: 0,
        crc: flate2::Crc::new(),
    };
    let lines = match mode {
        0 => decode::decode_blocks(&mut r, &mut data, file)?,
        l => {
            let level = flate2::Compression::new(u32::from(l - 1));
            let mut e = DeflateEncoder::new(&mut data, level);
            let lines = decode::decode_blocks(&mut r, &mut e, file)?;
            e.finish().map_err(|e| write_error(file, e))?;
            lines
        }
    };
    if data.len != len as u64 || data.crc.sum() != crc {
        return Err(fail(format!(
            "the member's data made again differs from the original ({} bytes, expected {len}); \
             this build's deflate does not match the one that encoded the file",
            data.len
        )));
    }
    output
        .write_all(&rest[start..])
        .map_err(|e| write_error(file, e))?;
    output.flush().map_err(|e| write_error(file, e))?;
    Ok(lines)
}
