//! Name files (class, method and field lists) stored beside the trace, byte for byte.
//!
//! Producers write them under several names and shapes (`classes.list` with `id  name`,
//! `methods.list` with `id, Class, method`, ET3 `classes.txt`, et3-large `classs.list` with
//! `name,id`, possibly compressed). They are kept as opaque bytes so every shape round-trips.

use std::path::Path;

use crate::format::FormatError;

/// Section (in the first block) listing the stored name files, one file name per line; the
/// files follow in sections `INDEX_SECTION + 1`, `+ 2`, ... in that order.
pub const INDEX_SECTION: u8 = 2;
/// Most name files stored.
pub const MAX_FILES: usize = 64;

const STEMS: [&str; 7] = [
    "classes", "classs", "class", "methods", "method", "fields", "field",
];
const EXTENSIONS: [&str; 3] = [".list", ".txt", ".csv"];
/// Names used bare, without an extension (the ET3 documentation's `class_list`, ...).
const BARE: [&str; 3] = ["class_list", "method_list", "field_list"];
const COMPRESSIONS: [&str; 5] = ["", ".zst", ".bz2", ".gz", ".xz"];

/// True when `name` is one of the name-file names ET producers are known to write.
pub fn is_name_file(name: &str) -> bool {
    COMPRESSIONS.iter().any(|c| {
        let Some(base) = name.strip_suffix(c) else {
            return false;
        };
        BARE.contains(&base)
            || STEMS.iter().any(|stem| {
                EXTENSIONS
                    .iter()
                    .any(|ext| base.strip_prefix(stem) == Some(ext))
            })
    })
}

/// Reads every name file in `dir`, sorted by file name.
pub fn read_dir(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, FormatError> {
    let err = |e: std::io::Error| FormatError {
        file: dir.display().to_string(),
        position: String::new(),
        message: format!("cannot read the name-file folder: {e}"),
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !is_name_file(&name) || !entry.path().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).map_err(err)?;
        out.push((name, bytes));
    }
    out.sort();
    if out.len() > MAX_FILES {
        return Err(FormatError {
            file: dir.display().to_string(),
            position: String::new(),
            message: format!("{} name files; at most {MAX_FILES} are stored", out.len()),
        });
    }
    Ok(out)
}

/// The index section: one file name per line.
pub fn index(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, _) in files {
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Parses the index section back into file names, refusing names that could escape the folder.
pub fn parse_index(bytes: &[u8]) -> Result<Vec<String>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "name index is not UTF-8".to_string())?;
    let names: Vec<String> = text.lines().map(str::to_string).collect();
    for n in &names {
        if !is_name_file(n) {
            return Err(format!("`{n}` is not a name-file name this format stores"));
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_observed_names() {
        for n in [
            "classes.list",
            "methods.list",
            "fields.list",
            "classes.txt",
            "methods.txt",
            "fields.txt",
            "classs.list",
            "classs.list.zst",
            "class_list",
            "method_list",
        ] {
            assert!(is_name_file(n), "{n}");
        }
        for n in [
            "trace",
            "../classes.list",
            "classes",
            "classes.zst",
            "oracle.csv",
        ] {
            assert!(!is_name_file(n), "{n}");
        }
    }
}
