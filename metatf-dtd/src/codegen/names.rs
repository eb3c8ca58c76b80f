//! DTD names to Rust names: `createHeap` → `CreateHeap` (types), `oldAddress` → `old_address`
//! (fields), Rust keywords and names of the prelude and `std::io` avoided, repeats numbered.

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where", "while",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try", "typeof",
    "unsized", "virtual", "yield", "gen",
];

/// Names that cannot be raw identifiers.
const UNRAWABLE: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Type names a glob import of the generated module would set against the prelude, `std::io`
/// or the derive: a record named `write` must not become `pub struct Write`.
const TAKEN_TYPES: &[&str] = &[
    // The prelude (types, traits, variants, derive macros).
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Vec",
    "String",
    "Box",
    "ToString",
    "ToOwned",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "Iterator",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "Extend",
    "Default",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "AsRef",
    "AsMut",
    "Into",
    "From",
    "TryFrom",
    "TryInto",
    "FromIterator",
    "Debug",
    "Hash",
    // `std::io`.
    "Read",
    "Write",
    "BufRead",
    "Seek",
    "Error",
    "ErrorKind",
    "Cursor",
    "Empty",
    "Sink",
    "Stdin",
    "Stdout",
    "Stderr",
    "Bytes",
    "Chain",
    "Take",
    "Lines",
    "Split",
    "BufReader",
    "BufWriter",
    "LineWriter",
    "IoSlice",
    "IoSliceMut",
    "SeekFrom",
    "Repeat",
    // The derive and the runtime's names generated code sits beside.
    "MetaTf",
    "Format",
    "Record",
];

/// `createHeap` → `CreateHeap`, `N` → `N`, `free_list` → `FreeList`.
pub fn type_name(dtd: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in dtd.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() || UNRAWABLE.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// [`type_name`], with `suffix` appended when the name is one a glob import would clash with
/// (`write` → `WriteRecord`).
pub fn safe_type_name(dtd: &str, suffix: &str) -> String {
    let name = type_name(dtd);
    if TAKEN_TYPES.contains(&name.as_str()) {
        name + suffix
    } else {
        name
    }
}

/// `oldAddress` → `old_address`; keywords get a trailing underscore (`type_`), as raw
/// identifiers (`r#type`) are awkward to write.
pub fn field_name(dtd: &str) -> String {
    let mut out = String::new();
    for (i, c) in dtd.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    if UNRAWABLE.contains(&out.as_str()) || KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_rust_conventions() {
        assert_eq!(type_name("createHeap"), "CreateHeap");
        assert_eq!(type_name("Ds"), "Ds");
        assert_eq!(type_name("self"), "Self_");
        assert_eq!(field_name("oldAddress"), "old_address");
        assert_eq!(field_name("type"), "type_");
        assert_eq!(field_name("ref"), "ref_");
        assert_eq!(safe_type_name("write", "Record"), "WriteRecord");
        assert_eq!(safe_type_name("result", "Section"), "ResultSection");
        assert_eq!(safe_type_name("alloc", "Record"), "Alloc");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(field_name("N"), "n");
    }
}
