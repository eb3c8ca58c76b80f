//! `#[derive(MetaTf)]`: typed Meta-TF readers and writers generated from Rust types.
//!
//! This crate is a thin shim: attributes are parsed into a typed model (`attr`, `lower`,
//! `model`), the model is checked and turned into DTD text (`dtd`), and code is generated from
//! the model (`gen`) against the runtime in the `metatf` crate, which re-exports the derive.
//! The attribute reference, with an example per attribute, is in the `metatf` crate's
//! `typed::attributes` documentation.

use proc_macro::TokenStream;
use syn::spanned::Spanned;
use syn::{parse_macro_input, Data, DeriveInput};

mod attr;
mod dtd;
mod gen;
mod lower;
mod model;

use attr::{Errors, Place};

/// Derives a typed Meta-TF record (on a struct) or format (on an enum whose variants wrap
/// record structs or hold a record's fields inline).
///
/// See the `metatf::typed` documentation for the attributes.
#[proc_macro_derive(MetaTf, attributes(metatf))]
pub fn derive_metatf(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.into_compile_error().into(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<proc_macro2::TokenStream> {
    let mut errors = Errors::default();
    if !input.generics.params.is_empty() {
        errors.at(
            input.generics.params[0].span(),
            "#[derive(MetaTf)] does not support generic types",
        );
    }
    let place = match &input.data {
        Data::Struct(_) => Place::Struct,
        Data::Enum(_) => Place::Enum,
        Data::Union(_) => {
            return Err(syn::Error::new(
                input.ident.span(),
                "#[derive(MetaTf)] works on structs (records) and enums (formats), not unions",
            ))
        }
    };
    let entries = attr::parse(&input.attrs, place, &mut errors);
    let krate = lower::crate_path(&entries, &mut errors);
    let tokens = match place {
        Place::Struct => lower::record(input, &entries, &mut errors).map(|m| {
            check_record_dtd(&input.ident, &m, &mut errors);
            gen::record(&krate, &input.ident, &m)
        }),
        _ => lower::format(input, &entries, &mut errors).map(|m| {
            if m.sections {
                return gen::sections(&krate, &input.ident, &m);
            }
            for v in &m.variants {
                if let model::VariantModel::Inline(ident, record) = v {
                    check_record_dtd(ident, record, &mut errors);
                }
            }
            gen::format(&krate, &input.ident, &m)
        }),
    };
    errors.finish()?;
    Ok(tokens.unwrap_or_default())
}

/// Validates the record's DTD text with the DTD front end, so that anything the derive's own
/// checks miss is still a compile error rather than a run-time one.
fn check_record_dtd(ident: &syn::Ident, m: &model::RecordModel, errors: &mut Errors) {
    // A model naming another record's field is checked with the format's whole DTD, when the
    // format's plan is built; alone, the record could not resolve it.
    let mut alone = m.clone();
    if dtd::names_other_records(m) {
        alone.fields.iter_mut().for_each(|f| f.model = None);
    }
    let m = &alone;
    let mut text = String::from("tag.width = 8;\n");
    text.push_str(&dtd::record_text(m));
    for s in dtd::value_sections(m) {
        text.push_str(&format!("section values{s} {s} {{ }}\n"));
    }
    if let Err(d) = metatf_dtd::parse_schema(&text, &ident.to_string()) {
        errors.at(
            ident.span(),
            format!("the record's DTD is invalid:\n{text}\n{d}"),
        );
    }
}
