//! Splitting a gzip file into what a model can compress well (the uncompressed bytes) and the
//! little that is needed to rebuild the original deflate stream exactly (preflate's
//! reconstruction data), for gzip writers that zlib does not reproduce (GNU gzip).
//!
//! The split is only used when rebuilding gives the original bytes back: [`split`] rebuilds
//! and compares before it returns, so a caller that gets `Ok` can store the parts instead of
//! the file.

use std::panic::{catch_unwind, AssertUnwindSafe};

use preflate_rs::{preflate_whole_deflate_stream, recreate_whole_deflate_stream, PreflateConfig};

/// Largest uncompressed size handled (above it the caller stores the file as it is): the
/// split holds the whole text in memory.
pub const MAX_TEXT: usize = 512 << 20;

/// A gzip file taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GzipParts {
    /// The bytes before the deflate stream (the gzip header, with its optional fields).
    pub head: Vec<u8>,
    /// preflate's reconstruction data for the deflate stream.
    pub corrections: Vec<u8>,
    /// The uncompressed bytes.
    pub text: Vec<u8>,
    /// The bytes after the deflate stream: CRC-32 and size, and anything that follows.
    pub tail: Vec<u8>,
}

/// Length of the gzip header at the start of `gz` (RFC 1952: fixed 10 bytes, then FEXTRA,
/// FNAME, FCOMMENT, FHCRC as the flags say).
pub fn header_len(gz: &[u8]) -> Result<usize, String> {
    if gz.len() < 10 || gz[0] != 0x1f || gz[1] != 0x8b || gz[2] != 8 {
        return Err("not a gzip file with deflate (magic 1f 8b 08)".to_string());
    }
    let flags = gz[3];
    if flags & 0xe0 != 0 {
        return Err(format!("reserved gzip flag bits set ({flags:#04x})"));
    }
    let mut at = 10usize;
    let short = || "the gzip header is cut short".to_string();
    if flags & 4 != 0 {
        let n = gz.get(at..at + 2).ok_or_else(short)?;
        at += 2 + usize::from(u16::from_le_bytes([n[0], n[1]]));
    }
    for flag in [8u8, 16] {
        if flags & flag != 0 {
            let nul = gz.get(at..).and_then(|r| r.iter().position(|&b| b == 0));
            at += nul.ok_or_else(short)? + 1;
        }
    }
    if flags & 2 != 0 {
        at += 2;
    }
    if at > gz.len() {
        return Err(short());
    }
    Ok(at)
}

/// Runs a preflate call, turning a panic inside the library into an error (its inputs here can
/// come from a damaged file).
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(format!("{what}: preflate panicked")))
}

/// Splits the first gzip member of `gz`; fails (and the caller stores the file unchanged) when
/// the file is not gzip, its text exceeds [`MAX_TEXT`], or the deflate stream cannot be rebuilt
/// byte for byte.
pub fn split(gz: &[u8]) -> Result<GzipParts, String> {
    let head_len = header_len(gz)?;
    let (corrections, text, used) = split_deflate(&gz[head_len..])?;
    let parts = GzipParts {
        head: gz[..head_len].to_vec(),
        corrections,
        text,
        tail: gz[head_len + used..].to_vec(),
    };
    // Lossless always: the parts are used only if they give the file back.
    if join(&parts.head, &parts.corrections, &parts.text, &parts.tail)? != gz {
        return Err("the rebuilt deflate stream differs from the original".to_string());
    }
    Ok(parts)
}

/// Takes apart the raw deflate stream at the start of `deflate`: preflate's reconstruction data,
/// the uncompressed bytes, and how many bytes of `deflate` the stream takes. The caller must
/// still check that [`join`] gives the input back.
pub fn split_deflate(deflate: &[u8]) -> Result<(Vec<u8>, Vec<u8>, usize), String> {
    let config = PreflateConfig {
        plain_text_limit: MAX_TEXT,
        ..PreflateConfig::default()
    };
    let (result, plain) = guarded("analysing the deflate stream", || {
        preflate_whole_deflate_stream(deflate, &config).map_err(|e| format!("preflate: {e:?}"))
    })?;
    let used = result.compressed_size;
    if used > deflate.len() {
        return Err("preflate reports more deflate bytes than there are".to_string());
    }
    Ok((result.corrections, plain.text().to_vec(), used))
}

/// Rebuilds the file from its parts: `head`, the deflate stream, `tail`.
pub fn join(head: &[u8], corrections: &[u8], text: &[u8], tail: &[u8]) -> Result<Vec<u8>, String> {
    let deflate = guarded("rebuilding the deflate stream", || {
        recreate_whole_deflate_stream(text, corrections).map_err(|e| format!("preflate: {e:?}"))
    })?;
    let mut out = Vec::with_capacity(head.len() + deflate.len() + tail.len());
    out.extend_from_slice(head);
    out.extend_from_slice(&deflate);
    out.extend_from_slice(tail);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::GzBuilder::new()
            .filename("x.pb")
            .write(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn zlib_output_splits_and_joins() {
        let data: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 977).to_le_bytes())
            .collect();
        let gz = gzip(&data, 6);
        let p = split(&gz).unwrap();
        assert_eq!(p.text, data);
        assert_eq!(p.tail.len(), 8);
        assert_eq!(header_len(&gz).unwrap(), p.head.len());
        assert!(p.head.ends_with(b"x.pb\0"));
        assert_eq!(join(&p.head, &p.corrections, &p.text, &p.tail).unwrap(), gz);
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(split(b"not gzip").is_err());
        let mut gz = gzip(b"hello hello hello", 9);
        gz.truncate(14);
        assert!(split(&gz).is_err());
        // A damaged deflate stream (invalid block type 3).
        let mut bad = gz[..10].to_vec();
        bad.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]);
        assert!(split(&bad).is_err());
        // Wrong reconstruction data gives an error or some bytes, never a panic.
        let _ = join(&[], b"garbage", b"text", &[]);
        let _ = join(&[], &[], b"text", &[]);
    }
}
