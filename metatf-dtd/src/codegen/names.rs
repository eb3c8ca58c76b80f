//! DTD names to Rust names: `createHeap` → `CreateHeap` (types), `oldAddress` → `old_address`
//! (fields), Rust keywords escaped, repeats numbered.

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where", "while",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try", "typeof",
    "unsized", "virtual", "yield", "gen",
];

/// Names that cannot be raw identifiers.
const UNRAWABLE: &[&str] = &["self", "Self", "super", "crate", "_"];

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

/// `oldAddress` → `old_address`; keywords become raw identifiers (`r#type`).
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
    if UNRAWABLE.contains(&out.as_str()) {
        out.push('_');
    } else if KEYWORDS.contains(&out.as_str()) {
        out.insert_str(0, "r#");
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
        assert_eq!(field_name("type"), "r#type");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(field_name("N"), "n");
    }
}
