//! The DTD text of a record type: what the derive embeds so that every trace it writes
//! describes itself, and what the universal reader decodes it with.

use std::fmt::Write;

use metatf_dtd::Interpretation;

use crate::model::{FieldType, RecordModel};

/// The DTD spelling of an interpretation, shared with the DTD compiler.
pub use metatf_dtd::codegen::interpretation_text;

/// `name : (tag, a, b) { tag.value = T; a.width = ..; a.interpretation = ..; }`, one property
/// per line; a field type used twice gets its properties once.
pub fn record_text(r: &RecordModel) -> String {
    let mut list = vec!["tag".to_string()];
    for (i, f) in r.fields.iter().enumerate() {
        // `n * element` is one item: the count field, then the repetition.
        let counts_next = r
            .fields
            .get(i + 1)
            .is_some_and(|next| matches!(next.count, Some((_, Some(j))) if j == i));
        match &f.count {
            Some((_, Some(j))) => list.push(format!("{} * {}", r.fields[*j].dtd_name, f.dtd_name)),
            _ if counts_next => {}
            _ if f.ty == FieldType::Bytes && f.dtd_name != "vfield" => {
                list.push(format!("{} : vfield", f.dtd_name));
            }
            _ => list.push(f.dtd_name.clone()),
        }
    }
    let mut out = format!(
        "{} : ({}) {{\n    tag.value = {};\n",
        r.name,
        list.join(", "),
        r.tag
    );
    let mut seen: Vec<&str> = Vec::new();
    for f in &r.fields {
        if f.ty == FieldType::Bytes || seen.contains(&f.dtd_name.as_str()) {
            continue;
        }
        seen.push(&f.dtd_name);
        if !f.interpretation.is_zero_width() {
            let _ = writeln!(out, "    {}.width = {};", f.dtd_name, f.width);
        }
        let _ = writeln!(
            out,
            "    {}.interpretation = {};",
            f.dtd_name,
            interpretation_text(f.interpretation)
        );
        if let Some(model) = &f.model {
            let _ = writeln!(out, "    {}.model = {model};", f.dtd_name);
        }
    }
    out.push_str("}\n");
    out
}

/// True when a `model` attribute names a field of another record (`live alloc.ptr`), which
/// only the format's whole DTD can resolve.
pub fn names_other_records(r: &RecordModel) -> bool {
    r.fields
        .iter()
        .filter_map(|f| f.model.as_deref())
        .any(|m| m.contains('.'))
}

/// Value sections the record's fields read from.
pub fn value_sections(r: &RecordModel) -> Vec<u8> {
    let mut v: Vec<u8> = r
        .fields
        .iter()
        .filter_map(|f| match f.interpretation {
            Interpretation::SectionOffset(s) => Some(s),
            Interpretation::SectionStride { section, .. } => Some(section),
            _ => None,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Number of scalar fields (a byte string counts its length field).
pub fn scalar_count(r: &RecordModel) -> usize {
    r.fields.len()
}
