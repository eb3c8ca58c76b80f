//! Phase one: from `syn` trees and parsed attributes to the typed model, checking everything
//! that can be checked without the other types of the format.

use metatf_dtd::Interpretation;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, GenericArgument, PathArguments, Type};

use crate::attr::{self, Entry, Errors, Place, Value};
use crate::model::{FieldModel, FieldType, FormatModel, RecordModel, VariantModel};

/// The crate path generated code uses (`::metatf` unless `crate = "..."` says otherwise).
pub fn crate_path(entries: &[Entry], errors: &mut Errors) -> syn::Path {
    for e in entries {
        if let (attr::Value::Str(s), "crate") = (&e.value, e.keyword.name) {
            match s.parse::<syn::Path>() {
                Ok(p) => return p,
                Err(err) => errors.push(syn::Error::new(s.span(), err)),
            }
        }
    }
    syn::parse_quote!(::metatf)
}

fn find<'a>(entries: &'a [Entry], name: &str) -> Option<&'a Entry> {
    entries.iter().find(|e| e.keyword.name == name)
}

fn str_of(entries: &[Entry], name: &str) -> Option<String> {
    match find(entries, name).map(|e| &e.value) {
        Some(Value::Str(s)) => Some(s.value()),
        _ => None,
    }
}

fn int_of(entries: &[Entry], name: &str) -> Option<(u64, proc_macro2::Span)> {
    match find(entries, name) {
        Some(Entry {
            value: Value::Int(v),
            span,
            ..
        }) => Some((*v, *span)),
        _ => None,
    }
}

/// `Alloc` → `alloc`, `CreateHeap` → `createHeap`.
pub fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn dtd_name_ok(name: &str) -> bool {
    let mut c = name.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// Lowers a struct deriving `MetaTf`.
pub fn record(input: &DeriveInput, entries: &[Entry], errors: &mut Errors) -> Option<RecordModel> {
    let Data::Struct(data) = &input.data else {
        return None;
    };
    record_of(&input.ident, entries, &data.fields, errors)
}

/// A record type from its Rust name, its `#[metatf(...)]` entries and its fields: a struct's,
/// or those of an enum variant written inline.
fn record_of(
    ident: &syn::Ident,
    entries: &[Entry],
    fields: &Fields,
    errors: &mut Errors,
) -> Option<RecordModel> {
    let tag = int_of(entries, "tag").map(|t| t.0);
    if tag.is_none() {
        errors.at(
            ident.span(),
            "missing `#[metatf(tag = ...)]`: every record type needs its tag value",
        );
    }
    let name = str_of(entries, "name").unwrap_or_else(|| lower_first(&ident.to_string()));
    if !dtd_name_ok(&name) {
        errors.at(ident.span(), format!("`{name}` is not a valid DTD name"));
    }
    let Fields::Named(named) = fields else {
        errors.at(
            ident.span(),
            "a record type must be a struct with named fields",
        );
        return None;
    };
    let mut out = Vec::new();
    for f in &named.named {
        if let Some(m) = field(f, errors) {
            out.push(m);
        }
    }
    check_shared_names(&out, errors);
    resolve_counts(&mut out, errors);
    Some(RecordModel {
        name,
        tag: tag?,
        fields: out,
    })
}

/// The integer size of `Vec<integer>`, for a repeated field.
fn vec_int(ty: &Type) -> Option<u8> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Vec" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(inner)) if args.args.len() == 1 => match field_type(inner) {
            Some(FieldType::Int(size)) => Some(size),
            _ => None,
        },
        _ => None,
    }
}

fn field_type(ty: &Type) -> Option<FieldType> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let last = p.path.segments.last()?;
    let name = last.ident.to_string();
    let int = match name.as_str() {
        "u8" | "i8" => Some(1),
        "u16" | "i16" => Some(2),
        "u32" | "i32" => Some(4),
        "u64" | "i64" => Some(8),
        _ => None,
    };
    if let Some(size) = int {
        return matches!(last.arguments, PathArguments::None).then_some(FieldType::Int(size));
    }
    if name != "Vec" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(Type::Path(inner)))
            if args.args.len() == 1 && inner.path.is_ident("u8") =>
        {
            Some(FieldType::Bytes)
        }
        _ => None,
    }
}

fn field(f: &syn::Field, errors: &mut Errors) -> Option<FieldModel> {
    let entries = attr::parse(&f.attrs, Place::Field, errors);
    let ident = f.ident.clone()?;
    let count = str_of(&entries, "count");
    let ty = match (&count, vec_int(&f.ty)) {
        (Some(_), Some(size)) => Some(FieldType::Repeated(size)),
        (Some(_), None) => {
            let span = find(&entries, "count").map_or(f.ty.span(), |e| e.span);
            errors.at(
                span,
                "`count` goes on a repeated field, a `Vec` of u8-u64 or i8-i64",
            );
            return None;
        }
        (None, _) => field_type(&f.ty),
    };
    let Some(ty) = ty else {
        errors.at(
            f.ty.span(),
            "unsupported field type: a record field must be u8, u16, u32, u64, i8, i16, i32, i64, Vec<u8> (a vfield) or a Vec of integers with `count = \"field\"`",
        );
        return None;
    };
    let rust_name = ident.to_string().trim_start_matches("r#").to_string();
    if ty == FieldType::Bytes {
        if let Some(e) = entries.iter().find(|e| e.keyword.name != "name") {
            errors.at(
                e.span,
                "a Vec<u8> field is a `vfield` (1-byte length, then the bytes) and takes only `name`",
            );
        }
        // The DTD spells it `note : vfield`, keeping the Rust name; `vfield` alone is the
        // plain built-in.
        let dtd_name = str_of(&entries, "name").unwrap_or(rust_name);
        if !dtd_name_ok(&dtd_name)
            || ["tag", "section", "comment", "metadata"].contains(&dtd_name.as_str())
        {
            let span = find(&entries, "name").map_or(ident.span(), |e| e.span);
            errors.at(
                span,
                format!("`{dtd_name}` cannot name a DTD field (reserved or not an identifier)"),
            );
        }
        if let Some(e) = find(&entries, "model") {
            errors.at(
                e.span,
                "`model` is not allowed on a byte string: the model engine codes byte strings itself",
            );
        }
        return Some(FieldModel {
            ident,
            dtd_name,
            ty,
            width: 0,
            interpretation: Interpretation::None,
            model: None,
            span: f.span(),
            count: None,
        });
    }
    let dtd_name = str_of(&entries, "name").unwrap_or(rust_name);
    if !dtd_name_ok(&dtd_name)
        || ["tag", "vfield", "section", "comment", "metadata"].contains(&dtd_name.as_str())
    {
        let span = find(&entries, "name").map_or(ident.span(), |e| e.span);
        errors.at(
            span,
            format!("`{dtd_name}` cannot name a DTD field (reserved or not an identifier)"),
        );
    }
    let interpretation = interpretation(&entries, errors);
    let zero = interpretation.is_zero_width();
    let (FieldType::Int(size) | FieldType::Repeated(size)) = ty else {
        return None;
    };
    let width = match int_of(&entries, "width") {
        Some((w, span)) => {
            if w > 8 {
                errors.at(
                    span,
                    format!("width {w} is too large: fields are 0-8 bytes"),
                );
            } else if w > u64::from(size) {
                errors.at(
                    span,
                    format!(
                        "width {w} does not fit the Rust type, which holds only {size} byte(s): use a wider integer type or a smaller width"
                    ),
                );
            } else if zero && w != 0 {
                errors.at(
                    span,
                    format!("width {w} conflicts with the interpretation, which stores nothing (width 0)"),
                );
            }
            w.min(8) as u8
        }
        None if zero => 0,
        None => size,
    };
    Some(FieldModel {
        ident,
        dtd_name,
        ty,
        width: if zero { 0 } else { width },
        interpretation,
        model: str_of(&entries, "model"),
        span: f.span(),
        count: count.map(|c| (c, None)),
    })
}

fn section_number(v: u64, span: proc_macro2::Span, errors: &mut Errors) -> u8 {
    match u8::try_from(v) {
        Ok(s) if s >= 1 => s,
        _ => {
            errors.at(span, format!("section number {v} is outside 1-255"));
            1
        }
    }
}

fn interpretation(entries: &[Entry], errors: &mut Errors) -> Interpretation {
    let Some(e) = entries
        .iter()
        .find(|e| e.keyword.group == attr::Group::Interpretation)
    else {
        return Interpretation::None;
    };
    match (e.keyword.name, &e.value) {
        ("none", _) => Interpretation::None,
        ("default", Value::Int(v)) => Interpretation::Default(*v),
        ("base_offset", Value::Int(v)) => Interpretation::BaseOffset(*v),
        ("delta", Value::Int(v)) => Interpretation::Delta(*v),
        ("stride", Value::Pair(i, k)) => Interpretation::Stride {
            initial: *i,
            stride: *k,
        },
        ("section_offset", Value::Int(s)) => {
            Interpretation::SectionOffset(section_number(*s, e.span, errors))
        }
        ("section_stride", Value::Pair(s, k)) => Interpretation::SectionStride {
            section: section_number(*s, e.span, errors),
            stride: *k,
        },
        ("interpretation", Value::Str(s)) => match parse_interpretation(&s.value()) {
            Ok(i) => i,
            Err(m) => {
                errors.at(s.span(), m);
                Interpretation::None
            }
        },
        _ => Interpretation::None,
    }
}

/// Parses the DTD spelling of an interpretation: `none`, `delta 0`, `stride 1 8`, ...
pub fn parse_interpretation(text: &str) -> Result<Interpretation, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let nums: Result<Vec<u64>, String> = words
        .iter()
        .skip(1)
        .map(|w| match w.strip_prefix('-') {
            Some(m) => m
                .parse::<u64>()
                .map(u64::wrapping_neg)
                .map_err(|_| format!("`{w}` is not an integer")),
            None => w
                .parse::<u64>()
                .map_err(|_| format!("`{w}` is not an integer")),
        })
        .collect();
    let nums = nums?;
    let section = |v: u64| match u8::try_from(v) {
        Ok(s) if s >= 1 => Ok(s),
        _ => Err(format!("section number {v} is outside 1-255")),
    };
    let want = |n: usize| {
        if nums.len() == n {
            Ok(())
        } else {
            Err(format!(
                "`{}` takes {n} number(s), {} given",
                words.first().copied().unwrap_or(""),
                nums.len()
            ))
        }
    };
    match words.first().copied() {
        Some("none") => want(0).map(|_| Interpretation::None),
        Some("default") => want(1).map(|_| Interpretation::Default(nums[0])),
        Some("baseOffset") => want(1).map(|_| Interpretation::BaseOffset(nums[0])),
        Some("delta") => want(1).map(|_| Interpretation::Delta(nums[0])),
        Some("stride") => want(2).map(|_| Interpretation::Stride {
            initial: nums[0],
            stride: nums[1],
        }),
        Some("sectionOffset") => {
            want(1)?;
            Ok(Interpretation::SectionOffset(section(nums[0])?))
        }
        Some("sectionStride") => {
            want(2)?;
            Ok(Interpretation::SectionStride {
                section: section(nums[0])?,
                stride: nums[1],
            })
        }
        _ => Err(format!(
            "unknown interpretation `{text}`; expected none, default V, baseOffset B, delta I, stride I S, sectionOffset N or sectionStride N S"
        )),
    }
}

/// Two fields with the same DTD name share their properties in the DTD, so they must agree.
fn check_shared_names(fields: &[FieldModel], errors: &mut Errors) {
    for (i, f) in fields.iter().enumerate() {
        if f.ty == FieldType::Bytes {
            continue;
        }
        if let Some(prev) = fields[..i].iter().find(|p| p.dtd_name == f.dtd_name) {
            if (prev.width, prev.interpretation, &prev.model)
                != (f.width, f.interpretation, &f.model)
            {
                errors.at(
                    f.span,
                    format!(
                        "fields `{}` and `{}` are both DTD field `{}` and must have the same width, interpretation and model",
                        prev.ident, f.ident, f.dtd_name
                    ),
                );
            }
        }
    }
}

/// Lowers an enum deriving `MetaTf`.
pub fn format(input: &DeriveInput, entries: &[Entry], errors: &mut Errors) -> Option<FormatModel> {
    let Data::Enum(data) = &input.data else {
        return None;
    };
    let section_name =
        str_of(entries, "name").unwrap_or_else(|| lower_first(&input.ident.to_string()));
    let section = int_of(entries, "section")
        .map(|(n, span)| (section_name.clone(), section_number(n, span, errors)));
    let format = str_of(entries, "format").unwrap_or_else(|| section_name.clone());
    let tag_width = match int_of(entries, "tag_width") {
        Some((w, span)) if !(1..=8).contains(&w) => {
            errors.at(span, format!("tag_width {w} is outside 1-8"));
            1
        }
        Some((w, _)) => w as u8,
        None => 1,
    };
    let sections = find(entries, "sections").is_some();
    if sections {
        for word in ["section", "tag_width", "name"] {
            if let Some(e) = find(entries, word) {
                errors.at(
                    e.span,
                    format!("`{word}` goes on the section enums a `sections` format wraps"),
                );
            }
        }
    }
    let source = match find(entries, "dtd").map(|e| &e.value) {
        Some(Value::Expr(e)) => Some((**e).clone()),
        _ => None,
    };
    let model_engine = match find(entries, "model").map(|e| &e.value) {
        Some(Value::Str(s)) => match s.value().as_str() {
            "auto" => true,
            "none" => false,
            other => {
                errors.at(
                    s.span(),
                    format!(
                        "`model = \"{other}\"` on a format: `auto` codes with the model engine, `none` (the default) with the record layout; fields' own models go on the fields"
                    ),
                );
                false
            }
        },
        _ => false,
    };
    if data.variants.is_empty() {
        errors.at(
            input.ident.span(),
            if sections {
                "a `sections` format needs at least one section enum"
            } else {
                "a format needs at least one record type"
            },
        );
    }
    let mut variants = Vec::new();
    for v in &data.variants {
        let attrs: Vec<&syn::Attribute> = v
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("metatf"))
            .collect();
        match &v.fields {
            Fields::Unnamed(u) if u.unnamed.len() == 1 => {
                if let Some(a) = attrs.first() {
                    errors.at(
                        a.span(),
                        "put `#[metatf(...)]` on the record struct the variant wraps",
                    );
                }
                variants.push(VariantModel::Wrapped(
                    v.ident.clone(),
                    u.unnamed[0].ty.clone(),
                ));
            }
            Fields::Named(_) if sections => errors.at(
                v.span(),
                "in a `sections` format each variant wraps the enum of one section, `Heap(Heap)`",
            ),
            Fields::Named(_) => {
                let entries = attr::parse(&v.attrs, Place::Struct, errors);
                if let Some(e) = find(&entries, "crate") {
                    errors.at(e.span, "`crate` goes on the enum, not on a variant");
                }
                if let Some(m) = record_of(&v.ident, &entries, &v.fields, errors) {
                    variants.push(VariantModel::Inline(v.ident.clone(), m));
                }
            }
            _ => errors.at(
                v.span(),
                "each variant must wrap one record struct, `Alloc(Alloc)`, or hold the record's fields inline, `#[metatf(tag = 4)] Alloc { size: u32 }`",
            ),
        }
    }
    Some(FormatModel {
        format,
        tag_width,
        section,
        variants,
        sections,
        source,
        model_engine,
    })
}

/// Points each repeated field at its count: the integer field just before it.
fn resolve_counts(fields: &mut [FieldModel], errors: &mut Errors) {
    for i in 0..fields.len() {
        let Some((name, _)) = fields[i].count.clone() else {
            continue;
        };
        // In the DTD, `n * element` is one item: the count field, then the repetition.
        let j = i.wrapping_sub(1);
        let found = fields.get(j).filter(|f| {
            f.ident.to_string().trim_start_matches("r#") == name
                && matches!(f.ty, FieldType::Int(_))
                && f.count.is_none()
        });
        match found {
            Some(_) => fields[i].count = Some((name, Some(j))),
            None => errors.at(
                fields[i].span,
                format!(
                    "`count = \"{name}\"` must name the integer field just before this one (the DTD's `{name} * element`)"
                ),
            ),
        }
    }
}
