//! The output file named after an input, when no `-o` is given (as `zstd` and `gzip` do):
//! `trace.mtrace` is encoded to `trace.mtrace.hatf`, which decodes back to `trace.mtrace`.

use crate::compressed::Wrapper;
use crate::error::{CliError, CliResult};
use std::path::{Path, PathBuf};

/// The suffix of an encoded file.
pub const SUFFIX: &str = ".hatf";

/// The name an encode of `input` writes to: `input.hatf`. When the input was a compressed text
/// that was unwrapped, its compression suffix is dropped first (`trace.bz2` → `trace.hatf`),
/// since the file keeps the text and a decode gives the text back.
pub fn encoded(input: &Path, unwrapped: Option<Wrapper>) -> PathBuf {
    let mut name = input.as_os_str().to_owned();
    if let Some(wrapper) = unwrapped {
        let suffixes: &[&str] = match wrapper {
            Wrapper::Gzip => &["gz", "gzip"],
            Wrapper::Bzip2 => &["bz2", "bzip2"],
            Wrapper::Xz => &["xz"],
            Wrapper::Zstd => &["zst", "zstd"],
        };
        let stem = input.file_stem().filter(|s| !s.is_empty());
        let ext = input.extension().and_then(|e| e.to_str());
        if let (Some(_), Some(ext)) = (stem, ext) {
            if suffixes.contains(&ext.to_ascii_lowercase().as_str()) {
                name = input.with_extension("").into_os_string();
            }
        }
    }
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// The name a decode of `input` writes to: `input` without its `.hatf` suffix.
pub fn decoded(input: &Path) -> CliResult<PathBuf> {
    let shown = input.display();
    let file_name = input.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match file_name.strip_suffix(SUFFIX) {
        Some(stem) if !stem.is_empty() => Ok(input.with_file_name(stem)),
        _ => Err(CliError::usage(format!(
            "{shown}: does not end in {SUFFIX}, so there is no output name to derive from it; \
             name one with -o, or use --stdout"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_adds_the_suffix_and_decode_takes_it_away() {
        let p = Path::new("dir/perl.mtrace");
        assert_eq!(encoded(p, None), Path::new("dir/perl.mtrace.hatf"));
        assert_eq!(decoded(&encoded(p, None)).unwrap(), p);
        assert_eq!(
            encoded(Path::new("a/trace.bz2"), Some(Wrapper::Bzip2)),
            Path::new("a/trace.hatf")
        );
        assert_eq!(
            encoded(Path::new("t.mtrace.ZST"), Some(Wrapper::Zstd)),
            Path::new("t.mtrace.hatf")
        );
        // A suffix that does not name the compression found is kept; so is one never unwrapped.
        assert_eq!(
            encoded(Path::new("t.gz"), Some(Wrapper::Zstd)),
            Path::new("t.gz.hatf")
        );
        assert_eq!(
            encoded(Path::new("x.trace.gz"), None),
            Path::new("x.trace.gz.hatf")
        );
        assert!(decoded(Path::new("trace.mtrace")).is_err());
        assert!(decoded(Path::new(".hatf")).is_err());
    }
}
