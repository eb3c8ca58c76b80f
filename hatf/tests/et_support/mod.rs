//! Finding and reading the Elephant Tracks traces of the shared corpus (never copied here).
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use hatf::format::{DecodeOptions, EncodeOptions, EncodeReport, FormatError, TraceFormat};

/// The corpus folder, or `None` (with the reason printed) when it is absent.
pub fn corpus() -> Option<PathBuf> {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/et"
    ));
    if p.is_dir() {
        Some(p.to_path_buf())
    } else {
        eprintln!("SKIP: corpus folder {} is absent", p.display());
        None
    }
}

/// One corpus trace: where it is, its decompressed text, its name-file folder.
pub struct Trace {
    /// Path of the file in the corpus.
    pub path: PathBuf,
    /// The text trace, decompressed.
    pub text: Vec<u8>,
}

fn is_trace_name(name: &str) -> bool {
    name.starts_with("trace")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_trace_name)
        {
            out.push(p);
        }
    }
}

/// Every trace file under `sub` (e.g. `et2-java`), sorted by path.
pub fn trace_paths(sub: &str) -> Vec<PathBuf> {
    let Some(c) = corpus() else { return Vec::new() };
    let mut out = Vec::new();
    walk(&c.join(sub), &mut out);
    out
}

/// Reads and decompresses (`.bz2`, `.zst`) one trace.
pub fn read_trace(path: &Path) -> Trace {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = match path.extension().and_then(|e| e.to_str()) {
        Some("bz2") => {
            let mut out = Vec::new();
            bzip2::read::BzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out
        }
        Some("zst") => {
            zstd::decode_all(&raw[..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        }
        _ => raw,
    };
    Trace {
        path: path.to_path_buf(),
        text,
    }
}

/// Encodes `text` with `format`.
pub fn encode(
    format: &dyn TraceFormat,
    text: &[u8],
    name: &str,
    keep_bad_lines: bool,
    names_dir: Option<PathBuf>,
) -> Result<(Vec<u8>, EncodeReport), FormatError> {
    let options = EncodeOptions {
        input_name: name.to_string(),
        keep_bad_lines,
        names_dir,
        ..EncodeOptions::default()
    };
    let mut out = Vec::new();
    let report = format.encode(&mut &text[..], &mut out, &options)?;
    Ok((out, report))
}

/// Decodes `binary` with `format`.
pub fn decode(
    format: &dyn TraceFormat,
    binary: &[u8],
    names_dir: Option<PathBuf>,
) -> Result<Vec<u8>, FormatError> {
    let options = DecodeOptions {
        input_name: "<encoded>".to_string(),
        names_dir,
        threads: 1,
        positioned: None,
    };
    let mut out = Vec::new();
    format.decode(&mut &binary[..], &mut out, &options)?;
    Ok(out)
}

/// Line numbers (1-based) of lines that are not blank, a `#` comment or a well-formed ET
/// record, found by a scan written independently of the crate's parser.
pub fn bad_lines(text: &[u8]) -> Vec<u64> {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let mut out = Vec::new();
    if body.is_empty() {
        return out;
    }
    for (i, line) in body.split(|&b| b == b'\n').enumerate() {
        let s = String::from_utf8_lossy(line);
        if s.trim().is_empty() || s.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = s.split_whitespace().collect();
        let want: &[usize] = match parts.first().copied() {
            Some("N") | Some("A") => &[7],
            Some("D") => &[4, 5],
            Some("U") | Some("T") | Some("H") | Some("X") => &[5],
            Some("M") | Some("W") => &[4],
            Some("E") => &[3],
            _ => &[],
        };
        let numeric = parts[1..].iter().all(|p| p.parse::<u64>().is_ok());
        if !want.contains(&parts.len()) || !numeric {
            out.push(i as u64 + 1);
        }
    }
    out
}

/// The first of [`bad_lines`].
pub fn first_bad_line(text: &[u8]) -> Option<u64> {
    bad_lines(text).first().copied()
}
