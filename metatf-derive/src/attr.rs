//! Parsing `#[metatf(...)]` attributes into keyword/value pairs, with every keyword in one table
//! and every problem reported as a spanned error (all of them, not just the first).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Lit, LitStr, Meta, Token, UnOp};

/// Where an attribute may appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// On a struct (a record type).
    Struct,
    /// On a field of a record struct.
    Field,
    /// On an enum (a format).
    Enum,
}

/// The shape of an attribute's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `key = 12`
    Int,
    /// `key = "text"`
    Str,
    /// `key(a, b)`
    Pair,
    /// `key` alone
    Flag,
    /// `key = <expression>` (a `&'static str` constant: a literal, a path, `include_str!`)
    Expr,
}

/// Which attributes set the same thing, so that two of them conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Its own thing.
    Alone,
    /// One of the ways of giving a field's interpretation.
    Interpretation,
}

/// One entry of the keyword table.
#[derive(Debug)]
pub struct Keyword {
    /// The keyword.
    pub name: &'static str,
    /// Where it is allowed.
    pub places: &'static [Place],
    /// What value it takes.
    pub shape: Shape,
    /// What it conflicts with.
    pub group: Group,
}

use Group::{Alone, Interpretation as Interp};
use Place::{Enum, Field, Struct};

/// Every attribute keyword the derive knows.
pub const KEYWORDS: &[Keyword] = &[
    kw("tag", &[Struct], Shape::Int, Alone),
    kw("name", &[Struct, Field, Enum], Shape::Str, Alone),
    kw("crate", &[Struct, Enum], Shape::Str, Alone),
    kw("section", &[Enum], Shape::Int, Alone),
    kw("format", &[Enum], Shape::Str, Alone),
    kw("tag_width", &[Enum], Shape::Int, Alone),
    kw("sections", &[Enum], Shape::Flag, Alone),
    kw("dtd", &[Enum], Shape::Expr, Alone),
    kw("width", &[Field], Shape::Int, Alone),
    kw("count", &[Field], Shape::Str, Alone),
    kw("model", &[Field, Enum], Shape::Str, Alone),
    kw("interpretation", &[Field], Shape::Str, Interp),
    kw("none", &[Field], Shape::Flag, Interp),
    kw("default", &[Field], Shape::Int, Interp),
    kw("base_offset", &[Field], Shape::Int, Interp),
    kw("delta", &[Field], Shape::Int, Interp),
    kw("stride", &[Field], Shape::Pair, Interp),
    kw("section_offset", &[Field], Shape::Int, Interp),
    kw("section_stride", &[Field], Shape::Pair, Interp),
];

const fn kw(name: &'static str, places: &'static [Place], shape: Shape, group: Group) -> Keyword {
    Keyword {
        name,
        places,
        shape,
        group,
    }
}

/// A parsed attribute value.
#[derive(Debug, Clone)]
pub enum Value {
    /// An integer (negative ones as two's complement).
    Int(u64),
    /// A string.
    Str(LitStr),
    /// Two integers.
    Pair(u64, u64),
    /// No value.
    Flag,
    /// An expression, checked by the compiler where it is used.
    Expr(Box<Expr>),
}

/// One `key = value` found in the attributes.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The keyword's table entry.
    pub keyword: &'static Keyword,
    /// Its value.
    pub value: Value,
    /// The span of the whole `key = value`.
    pub span: Span,
}

/// Collects errors, combining them into one `syn::Error`.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds an error.
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    /// Adds an error at `span`.
    pub fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// `Err` with every error collected, if any.
    pub fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

fn allowed_here(place: Place) -> String {
    KEYWORDS
        .iter()
        .filter(|k| k.places.contains(&place))
        .map(|k| format!("`{}`", k.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses every `#[metatf(...)]` attribute for `place`; repeated and conflicting keywords are
/// errors at the later one.
pub fn parse(attrs: &[Attribute], place: Place, errors: &mut Errors) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("metatf")) {
        let nested = match attr
            .parse_args_with(syn::punctuated::Punctuated::<Meta, Token![,]>::parse_terminated)
        {
            Ok(n) => n,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        for meta in nested {
            let Some(entry) = parse_one(&meta, place, errors) else {
                continue;
            };
            if entries.iter().any(|e| e.keyword.name == entry.keyword.name) {
                errors.at(
                    entry.span,
                    format!("`{}` is given more than once", entry.keyword.name),
                );
                continue;
            }
            if entry.keyword.group == Interp {
                if let Some(prev) = entries.iter().find(|e| e.keyword.group == Interp) {
                    errors.at(
                        entry.span,
                        format!(
                            "`{}` conflicts with `{}`: a field has one interpretation",
                            entry.keyword.name, prev.keyword.name
                        ),
                    );
                    continue;
                }
            }
            entries.push(entry);
        }
    }
    entries
}

fn parse_one(meta: &Meta, place: Place, errors: &mut Errors) -> Option<Entry> {
    let path = meta.path();
    let name = path
        .get_ident()
        .map(|i| i.to_string())
        .or_else(|| path.is_ident("crate").then(|| "crate".to_string()))
        .unwrap_or_else(|| {
            path.segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect::<Vec<_>>()
                .join("::")
        });
    let name = name.trim_start_matches("r#").to_string();
    let Some(keyword) = KEYWORDS.iter().find(|k| k.name == name) else {
        errors.at(
            path.span(),
            format!(
                "unknown attribute `{name}`; expected one of {}",
                allowed_here(place)
            ),
        );
        return None;
    };
    if !keyword.places.contains(&place) {
        errors.at(
            path.span(),
            format!(
                "`{name}` is not allowed here; expected one of {}",
                allowed_here(place)
            ),
        );
        return None;
    }
    let value = match (keyword.shape, meta) {
        (Shape::Flag, Meta::Path(_)) => Some(Value::Flag),
        (Shape::Expr, Meta::NameValue(nv)) => Some(Value::Expr(Box::new(nv.value.clone()))),
        (Shape::Int, Meta::NameValue(nv)) => int(&nv.value, errors).map(Value::Int),
        (Shape::Str, Meta::NameValue(nv)) => match &nv.value {
            Expr::Lit(l) => match &l.lit {
                Lit::Str(s) => Some(Value::Str(s.clone())),
                _ => None,
            },
            _ => None,
        },
        (Shape::Pair, Meta::List(list)) => {
            let args = list
                .parse_args_with(syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated);
            match args {
                Ok(a) if a.len() == 2 => {
                    let a: Vec<_> = a.into_iter().collect();
                    match (int(&a[0], errors), int(&a[1], errors)) {
                        (Some(x), Some(y)) => Some(Value::Pair(x, y)),
                        _ => return None,
                    }
                }
                _ => None,
            }
        }
        _ => None,
    };
    let Some(value) = value else {
        let want = match keyword.shape {
            Shape::Int => format!("`{name} = <integer>`"),
            Shape::Str => format!("`{name} = \"...\"`"),
            Shape::Pair => format!("`{name}(<integer>, <integer>)`"),
            Shape::Flag => format!("`{name}` with no value"),
            Shape::Expr => format!("`{name} = <expression>`"),
        };
        errors.at(meta.span(), format!("expected {want}"));
        return None;
    };
    Some(Entry {
        keyword,
        value,
        span: meta.span(),
    })
}

/// An integer literal, or a negated one (stored as two's complement).
fn int(e: &Expr, errors: &mut Errors) -> Option<u64> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => match i.base10_parse::<u64>() {
                Ok(v) => Some(v),
                Err(err) => {
                    errors.push(err);
                    None
                }
            },
            _ => {
                errors.at(e.span(), "expected an integer");
                None
            }
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
            let v = int(&u.expr, errors)?;
            if v > 1 << 63 {
                errors.at(e.span(), "a negative value must fit in 64 bits");
                return None;
            }
            Some(v.wrapping_neg())
        }
        _ => {
            errors.at(e.span(), "expected an integer");
            None
        }
    }
}
