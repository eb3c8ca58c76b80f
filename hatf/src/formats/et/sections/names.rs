//! Name files (class, method and field lists) stored beside the trace, byte for byte.
//!
//! Producers write them under several names and shapes (`classes.list` with `id  name`,
//! `methods.list` with `id, Class, method`, ET3 `classes.txt`, et3-large `classs.list` with
//! `name,id`, possibly compressed). They are kept as opaque bytes so every shape round-trips.

use std::collections::HashMap;
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

/// The name files stored in the first block of a binary ET trace, in stored order; empty when
/// none were stored.
pub fn stored(block: &metatf::container::Block) -> Result<Vec<(String, Vec<u8>)>, String> {
    let Some(index) = block.section(INDEX_SECTION) else {
        return Ok(Vec::new());
    };
    let list = parse_index(&index.bytes)?;
    let mut out = Vec::with_capacity(list.len());
    for (k, name) in list.into_iter().enumerate() {
        let number = u8::try_from(k + 1 + INDEX_SECTION as usize)
            .map_err(|_| "too many name files".to_string())?;
        let s = block
            .section(number)
            .ok_or_else(|| format!("name file `{name}` (section {number}) is missing"))?;
        out.push((name, s.bytes.clone()));
    }
    Ok(out)
}

/// Class and method names by id, read from name files of any of the shapes producers write.
#[derive(Debug, Clone, Default)]
pub struct Names {
    classes: HashMap<u64, String>,
    methods: HashMap<u64, String>,
}

impl Names {
    /// Reads the class and method lists among `files` (field lists are not needed to name what
    /// `stats` counts). A line that gives no id and name is skipped: the files are the
    /// producer's, and a stray line must not hide every other name.
    pub fn parse(files: &[(String, Vec<u8>)]) -> Names {
        let mut names = Names::default();
        for (file, bytes) in files {
            let stem = file.split(['.', '_']).next().unwrap_or("");
            let table = match stem {
                "classes" | "classs" | "class" => &mut names.classes,
                "methods" | "method" => &mut names.methods,
                _ => continue,
            };
            let Some(text) = unpacked(file, bytes) else {
                continue;
            };
            for line in String::from_utf8_lossy(&text).lines() {
                if let Some((id, name)) = parse_line(line) {
                    table.entry(id).or_insert(name);
                }
            }
        }
        names
    }

    /// True when no class or method name is known.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty() && self.methods.is_empty()
    }

    /// The name of class `id`, when a class list gives it.
    pub fn class(&self, id: u64) -> Option<&str> {
        self.classes.get(&id).map(String::as_str)
    }

    /// The name of method `id` (`Class.method`), when a method list gives it.
    pub fn method(&self, id: u64) -> Option<&str> {
        self.methods.get(&id).map(String::as_str)
    }
}

/// The text of a name file stored compressed (`.zst`, `.gz`, `.xz`) or as it is; `None` when
/// it does not unpack (or is bzip2).
fn unpacked(file: &str, bytes: &[u8]) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    let read = if file.ends_with(".zst") {
        zstd::stream::Decoder::new(bytes).and_then(|mut d| d.read_to_end(&mut out))
    } else if file.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out)
    } else if file.ends_with(".xz") {
        xz2::read::XzDecoder::new_multi_decoder(bytes).read_to_end(&mut out)
    } else if file.ends_with(".bz2") {
        // Kept byte for byte, but this library links no bzip2 reader of its own.
        return None;
    } else {
        return Some(bytes.to_vec());
    };
    read.ok().map(|_| out)
}

/// One line of a name file: `id  name` and `id name` (ET2 class and field lists, ET3 `.txt`),
/// `id, Class, method` and `id Class method` (method lists, joined as `Class.method`), or
/// `name,id` (the et3-large lists).
fn parse_line(line: &str) -> Option<(u64, String)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let first_end = line
        .find(|c: char| c == ',' || c.is_whitespace())
        .unwrap_or(line.len());
    if let Ok(id) = line[..first_end].parse::<u64>() {
        let parts: Vec<&str> = line[first_end..]
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .collect();
        return (!parts.is_empty()).then(|| (id, parts.join(".")));
    }
    let (name, id) = line.rsplit_once(',')?;
    let id = id.trim().parse::<u64>().ok()?;
    let name = name.trim();
    (!name.is_empty()).then(|| (id, name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_observed_shape() {
        let files = vec![
            (
                "classes.list".to_string(),
                b"123  java/lang/Class$MethodArray\n122  Methods\n".to_vec(),
            ),
            (
                "methods.list".to_string(),
                b"517, java/lang/Void, <clinit>\n# a comment\n\nnot a line\n".to_vec(),
            ),
            (
                "methods.txt".to_string(),
                b"100 java.security.PermissionsHash writeObject\n517, shadowed, x\n".to_vec(),
            ),
            (
                "classs.list".to_string(),
                b"com.sun.tools.javac.tree.JCTree$JCSwitchExpression,409\n".to_vec(),
            ),
            ("fields.list".to_string(), b"35  a/B/c\n".to_vec()),
        ];
        let names = Names::parse(&files);
        assert_eq!(names.class(123), Some("java/lang/Class$MethodArray"));
        assert_eq!(names.class(122), Some("Methods"));
        assert_eq!(
            names.class(409),
            Some("com.sun.tools.javac.tree.JCTree$JCSwitchExpression")
        );
        assert_eq!(names.method(517), Some("java/lang/Void.<clinit>"));
        assert_eq!(
            names.method(100),
            Some("java.security.PermissionsHash.writeObject")
        );
        // Field ids are not class ids.
        assert_eq!(names.class(35), None);
    }

    #[test]
    fn reads_compressed_name_files() {
        let packed = zstd::encode_all(&b"7,com.example.Main#main\n"[..], 3).unwrap();
        let names = Names::parse(&[("methods.list.zst".to_string(), packed)]);
        assert_eq!(names.method(7), Some("com.example.Main#main"));
        let broken = Names::parse(&[("methods.list.zst".to_string(), b"not zstd".to_vec())]);
        assert!(broken.is_empty());
    }

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
