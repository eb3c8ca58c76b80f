//! Loading a trace for `hatf compare`: the original text (unpacked from zip, zstd or gzip when the
//! file is packed), the format that reads it, and its allocation events when it is an
//! allocation trace.

use crate::format::{FormatError, TraceFormat};
use crate::shared::allocation::event::AllocEvent;
use std::io::Read;
use std::path::Path;

/// Largest text accepted (the comparison holds the text and every encoding in memory).
pub const MAX_TEXT: u64 = 1 << 30;

fn err(file: &str, message: impl Into<String>) -> FormatError {
    FormatError {
        file: file.to_string(),
        position: String::new(),
        message: message.into(),
    }
}

fn read_limited(r: &mut dyn Read, file: &str) -> Result<Vec<u8>, FormatError> {
    let mut out = Vec::new();
    r.take(MAX_TEXT + 1)
        .read_to_end(&mut out)
        .map_err(|e| err(file, format!("cannot read: {e}")))?;
    if out.len() as u64 > MAX_TEXT {
        return Err(err(file, "larger than 1 GiB of text; compare a part of it"));
    }
    Ok(out)
}

/// The text of `bytes`: the single file inside a zip, or the content of a zstd/gzip stream, or
/// the bytes themselves.
pub fn unpack(bytes: Vec<u8>, file: &str) -> Result<Vec<u8>, FormatError> {
    if bytes.starts_with(b"PK\x03\x04") {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| err(file, format!("not a readable zip: {e}")))?;
        let mut picked = None;
        for i in 0..zip.len() {
            let entry = zip
                .by_index(i)
                .map_err(|e| err(file, format!("zip entry {i}: {e}")))?;
            if entry.is_file() {
                if picked.is_some() {
                    return Err(err(
                        file,
                        "the zip holds more than one file; unpack the trace first",
                    ));
                }
                picked = Some(i);
            }
        }
        let i = picked.ok_or_else(|| err(file, "the zip holds no file"))?;
        let mut entry = zip
            .by_index(i)
            .map_err(|e| err(file, format!("zip entry {i}: {e}")))?;
        return read_limited(&mut entry, file);
    }
    if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        let mut d = zstd::stream::Decoder::new(bytes.as_slice())
            .map_err(|e| err(file, format!("zstd: {e}")))?;
        return read_limited(&mut d, file);
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut d = flate2::read::MultiGzDecoder::new(bytes.as_slice());
        return read_limited(&mut d, file);
    }
    Ok(bytes)
}

/// A trace as read from disk.
pub struct Loaded {
    /// The file's bytes as they are.
    pub original: Vec<u8>,
    /// The text the peers compress: the file unpacked (zip/zstd/gzip), or the bytes themselves.
    pub text: Vec<u8>,
}

/// Reads a file and unpacks it.
pub fn load_both(path: &Path) -> Result<Loaded, FormatError> {
    let name = path.display().to_string();
    let mut f = std::fs::File::open(path).map_err(|e| err(&name, format!("cannot open: {e}")))?;
    let original = read_limited(&mut f, &name)?;
    let text = unpack(original.clone(), &name)?;
    Ok(Loaded { original, text })
}

/// Reads and unpacks a file.
pub fn load(path: &Path) -> Result<Vec<u8>, FormatError> {
    load_both(path).map(|l| l.text)
}

/// The format that recognises `text` (any format hatf reads, as `hatf encode` detects it).
pub fn detect(text: &[u8], file: &str) -> Result<&'static dyn TraceFormat, FormatError> {
    let head = &text[..text.len().min(64 * 1024)];
    crate::detect(head).ok_or_else(|| {
        err(
            file,
            "no trace format recognises this file (name one with --from, or give --dtd)",
        )
    })
}

/// The allocation events of `text` through the front end of `format`; `None` for a format
/// whose records are not allocation events (Elephant Tracks, JVM).
pub fn events(
    format: &dyn TraceFormat,
    text: &[u8],
    file: &str,
) -> Result<Option<Vec<AllocEvent>>, FormatError> {
    let mut input: &[u8] = text;
    match format.name() {
        "mtrace" => crate::formats::mtrace::read_events(&mut input, file),
        "memory-replay" => crate::formats::memory_replay::read_events(&mut input, file),
        "wee-alloc" => crate::formats::wee_alloc::read_events(&mut input, file),
        "malloc-bench" => crate::formats::malloc_bench::read_events(&mut input, file),
        _ => return Ok(None),
    }
    .map(Some)
}
