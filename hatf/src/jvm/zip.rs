//! The ZIP archive a JVM trace is shipped in: the text of its member `trace` goes through the
//! model; the rest of the archive (headers, other members, central directory) is kept as bytes.
//!
//! The member's compressed bytes are not stored when they can be made again: a stored member
//! (method 0) is the text itself, and a deflated one is kept only if flate2 (the deflater of the
//! `zip` crate) at some level 0–9 gives exactly the same bytes. Otherwise (another deflater, such
//! as Info-ZIP's, another method, a damaged archive) the archive is stored as is, like
//! `memory-replay-zip`, and the property `deflate-reason` says why.

use std::io::{Cursor, Read, Write};

use flate2::write::DeflateEncoder;
use metatf::container::{ContainerHeader, PROPERTY_LAYOUT};

use super::text::{self, BlockPlan};
use super::DTD;
use crate::alloc::blocks::{self, container_error, write_error, BlockWriter};
use crate::alloc::raw_store;
use crate::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError};
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
    let mut at = 0usize;
    while let Some(h) = head.get(at..at + 30) {
        if !h.starts_with(b"PK\x03\x04") {
            return false;
        }
        let u16_at = |o: usize| usize::from(u16::from_le_bytes([h[o], h[o + 1]]));
        let (flags, method, size) = (
            u16_at(6),
            u16_at(8),
            u32::from_le_bytes([h[18], h[19], h[20], h[21]]),
        );
        let name_at = at + 30;
        let data_at = name_at + u16_at(26) + u16_at(28);
        let Some(name) = head.get(name_at..name_at + u16_at(26)) else {
            return false;
        };
        let Some(data) = head.get(data_at..) else {
            return false;
        };
        if name == MEMBER.as_bytes() {
            let mut start = Vec::new();
            match method {
                0 => start.extend_from_slice(&data[..data.len().min(4096)]),
                8 => {
                    let _ = flate2::read::DeflateDecoder::new(data)
                        .take(4096)
                        .read_to_end(&mut start);
                }
                _ => return false,
            }
            return super::looks_like_trace(&start);
        }
        // A member written with a data descriptor gives no size here: cannot skip it.
        if flags & 8 != 0 {
            return false;
        }
        at = data_at + size as usize;
    }
    false
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

/// True when flate2 at `level` deflates `text` to exactly `want` (stops at the first difference).
fn reproduces(text: &[u8], want: &[u8], level: u32) -> bool {
    let mut e = DeflateEncoder::new(Compare { want, pos: 0 }, flate2::Compression::new(level));
    e.write_all(text).is_ok() && e.finish().is_ok_and(|c| c.pos == want.len())
}

/// Deflates `text` at `level`.
pub fn deflate(text: &[u8], level: u32) -> std::io::Result<Vec<u8>> {
    let mut e = DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(text)?;
    e.finish()
}

/// Finds the `trace` member, reads its text and decides how its data can be made again;
/// `Err` says why the archive must be stored as is.
pub fn analyse(bytes: &[u8]) -> Result<(Layout, Vec<u8>), String> {
    let mut a = ::zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| format!("not a readable zip archive: {e}"))?;
    let i = a
        .index_for_name(MEMBER)
        .ok_or_else(|| format!("the archive has no member named `{MEMBER}`"))?;
    let (start, len, method) = {
        let f = a.by_index_raw(i).map_err(|e| e.to_string())?;
        (f.data_start(), f.compressed_size(), f.compression())
    };
    let mut text = Vec::new();
    a.by_index(i)
        .map_err(|e| e.to_string())?
        .read_to_end(&mut text)
        .map_err(|e| format!("member `{MEMBER}` does not read back: {e}"))?;
    let start = usize::try_from(start).map_err(|_| "member too far".to_string())?;
    let len = usize::try_from(len).map_err(|_| "member too big".to_string())?;
    let want = start
        .checked_add(len)
        .and_then(|end| bytes.get(start..end))
        .ok_or("the member's data runs past the archive")?;
    let data = match method {
        ::zip::CompressionMethod::Stored if want == text.as_slice() => Data::Stored,
        ::zip::CompressionMethod::Deflated => LEVELS
            .iter()
            .find(|&&l| reproduces(&text, want, l))
            .map(|&l| Data::Deflated(l))
            .ok_or("its deflate stream is not what flate2 makes at any level 0-9")?,
        m => {
            return Err(format!(
                "member `{MEMBER}` uses compression {m}, which is not modelled"
            ))
        }
    };
    Ok((Layout { start, len, data }, text))
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(bytes);
    c.sum()
}

/// Reads the whole input (the central directory is at the end of an archive).
fn read_all(input: &mut dyn Read, file: &str) -> Result<Vec<u8>, FormatError> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes).map_err(|e| FormatError {
        file: file.to_string(),
        position: format!("byte {}", bytes.len()),
        message: format!("cannot read the input: {e}"),
    })?;
    Ok(bytes)
}

/// The text of the `trace` member of a zip read from `input` (for stats and validate).
pub fn member_text(input: &mut dyn Read, file: &str) -> Result<Vec<u8>, FormatError> {
    let bytes = read_all(input, file)?;
    let fail = |message: String| FormatError {
        file: file.to_string(),
        position: String::new(),
        message,
    };
    let mut a = ::zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| fail(format!("not a readable zip archive: {e}")))?;
    let mut text = Vec::new();
    a.by_name(MEMBER)
        .map_err(|e| fail(format!("member `{MEMBER}`: {e}")))?
        .read_to_end(&mut text)
        .map_err(|e| fail(format!("member `{MEMBER}` does not read back: {e}")))?;
    Ok(text)
}

/// Encodes a zip holding a JVM trace, the member's text cut into blocks as `plan` says
/// ([`BlockPlan::DEFAULT`] is what `hatf encode` writes; other plans serve tests).
pub fn encode(
    input: &mut dyn Read,
    output: &mut dyn Write,
    options: &EncodeOptions,
    plan: BlockPlan,
) -> Result<EncodeReport, FormatError> {
    let file = options.input_name.as_str();
    let bytes = read_all(input, file)?;
    if !bytes.starts_with(b"PK") {
        return Err(FormatError {
            file: file.to_string(),
            position: "byte 0".to_string(),
            message: "not a zip archive (it does not start with `PK`)".to_string(),
        });
    }
    let (layout, text) = match analyse(&bytes) {
        Ok(x) => x,
        Err(reason) => {
            return raw_store::encode(
                FORMAT,
                DTD,
                &reason,
                &mut Cursor::new(bytes),
                output,
                options,
            )
        }
    };
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
    let member = EncodeOptions {
        input_name: format!("{file}!{MEMBER}"),
        ..options.clone()
    };
    let mut report = text::encode_into(&mut text.as_slice(), &mut out, &member, plan)?;
    out.finish()?;
    report.input_bytes = bytes.len() as u64;
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
        let mut n = 0;
        while let Some(b) = r.next_block().map_err(|e| container_error(file, e))? {
            output
                .write_all(blocks::section(&b, raw_store::RAW))
                .map_err(|e| write_error(file, e))?;
            n += 1;
        }
        output.flush().map_err(|e| write_error(file, e))?;
        return Ok(n);
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
    let mut text = Vec::new();
    let lines = text::decode_blocks(&mut r, &mut text, file)?;
    let data = match mode {
        0 => text,
        l => deflate(&text, u32::from(l - 1)).map_err(|e| fail(e.to_string()))?,
    };
    if data.len() != len || crc32(&data) != crc {
        return Err(fail(format!(
            "the member's data made again differs from the original ({} bytes, expected {len}); \
             this build's deflate does not match the one that encoded the file",
            data.len()
        )));
    }
    for part in [&rest[..start], &data, &rest[start..]] {
        output.write_all(part).map_err(|e| write_error(file, e))?;
    }
    output.flush().map_err(|e| write_error(file, e))?;
    Ok(lines)
}
