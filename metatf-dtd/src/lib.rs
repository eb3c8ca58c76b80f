//! The Meta-TF DTD language: parsing, validation, the resolved schema model, formatting.
//!
//! A DTD (Appendix B of "Designing a Trace Format for Heap Allocation Events", ISMM 2000)
//! describes the records of a binary trace. This crate turns DTD text into a [`Schema`] in three
//! stages:
//!
//! 1. **parse** (`grammar.pest`, a [pest](https://pest.rs) grammar) into a syntax tree with byte
//!    spans;
//! 2. **validate** (`validate.rs`) what can be checked on declarations alone — sections, record
//!    names, tags, property values, duplicates — collecting *every* error, not just the first;
//! 3. **lower** (`lower/`) each trace record into the [`model`]: nested records and repetitions
//!    expanded, fields numbered by position, each field's initial width and interpretation
//!    resolved through the scopes record → nested record → section → global. The checks that
//!    need a whole record (unknown fields, missing widths, references, cycles) happen here and
//!    add to the same error list; a schema is returned only when the list is empty.
//!
//! Errors come back as [`Diagnostics`], which print like a compiler's. Section 4 of the
//! repository's `docs/FORMAT.md` describes the language and the meaning this crate gives to the
//! paper's open points.
//!
//! ```
//! let schema = metatf_dtd::parse_schema(
//!     "size.width = 4; size.interpretation = none;\n\
//!      section heap 1 { alloc : (tag, size) { tag.value = 4; } }",
//!     "heap.dtd",
//! ).unwrap();
//! assert_eq!(schema.sections[0].records[0].name, "alloc");
//!
//! let errors = metatf_dtd::parse_schema("alloc : (tag, sise) { tag.value = 4; }", "bad.dtd")
//!     .unwrap_err();
//! assert!(errors.to_string().contains("bad.dtd:1:15"));
//! ```
#![warn(missing_docs)]

pub mod ast;
pub mod builtins;
pub mod codegen;
mod diagnostic;
mod format;
pub mod lines;
mod lower;
pub mod model;
mod predictors;
mod source;
mod syntax;
mod validate;
mod values;

pub use diagnostic::{Diagnostic, Diagnostics};
pub use lines::LineSpec;
pub use model::{
    FieldDef, FieldKind, FieldModel, FieldRef, Interpretation, Predictor, RecordDef, Schema,
    Section,
};

use ast::Origin;
use diagnostic::Sources;

/// Parses, validates and lowers a DTD. `file_name` is only used in error messages.
///
/// The built-in records (`vfield`, `comment` tag 1, `section` tag 2, `metadata` tag 3) are
/// always defined; see [`builtins::BUILTIN_DTD`].
pub fn parse_schema(source: &str, file_name: &str) -> Result<Schema, Diagnostics> {
    parse_schema_with_lines(source, file_name).map(|(schema, _)| schema)
}

/// As [`parse_schema`], also giving the records' line patterns (`line = ...;`, docs/FORMAT.md
/// §8), which say how each record is spelled as one line of a text trace.
pub fn parse_schema_with_lines(
    source: &str,
    file_name: &str,
) -> Result<(Schema, LineSpec), Diagnostics> {
    let sources = Sources {
        user: (source, file_name),
        builtin: builtins::BUILTIN_DTD,
    };
    let builtin = builtin_ast().map_err(|p| sources.render(p.clone()))?;
    let user = syntax::parse(source, Origin::User).map_err(|p| sources.render(p))?;
    let mut problems = Vec::new();
    let scopes = validate::Scopes::new(builtin, &user, &mut problems);
    let lowered = lower::lower(&scopes, &mut problems);
    if problems.is_empty() {
        Ok(lowered)
    } else {
        Err(sources.render(problems))
    }
}

/// The built-in definitions, parsed once per process (they never change).
fn builtin_ast() -> Result<&'static ast::Dtd, &'static Vec<diagnostic::Problem>> {
    static BUILTIN: std::sync::OnceLock<Result<ast::Dtd, Vec<diagnostic::Problem>>> =
        std::sync::OnceLock::new();
    BUILTIN
        .get_or_init(|| syntax::parse(builtins::BUILTIN_DTD, Origin::Builtin))
        .as_ref()
}

/// Rewrites a DTD in canonical form: one statement per line, four-space indentation, a blank
/// line between records and sections, `name : (a, b)` spacing. Comments are kept (a comment
/// inside a field list moves to the line before the next property). Only *syntax* errors are
/// reported; a DTD that is well formed but invalid is still formatted.
///
/// The result parses to the same [`Schema`] as the input, and formatting it again changes nothing.
pub fn format_dtd(source: &str, file_name: &str) -> Result<String, Diagnostics> {
    let sources = Sources {
        user: (source, file_name),
        builtin: builtins::BUILTIN_DTD,
    };
    let user = syntax::parse(source, Origin::User).map_err(|p| sources.render(p))?;
    Ok(format::format(&user, source))
}
