//! Phase two: code from the typed model. Everything generated names the runtime through
//! `<crate>::__private`, so it compiles under `#![no_implicit_prelude]`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::dtd;
use crate::model::{FieldType, FormatModel, RecordModel};

/// `impl Record for Struct`: the record's spec, `encode` and `decode`.
pub fn record(krate: &syn::Path, ident: &syn::Ident, model: &RecordModel) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = &model.name;
    let tag = model.tag;
    let text = dtd::record_text(model);
    let scalars = dtd::scalar_count(model);
    let value_sections = dtd::value_sections(model);
    let mut encode = Vec::new();
    let mut decode = Vec::new();
    for (ordinal, f) in model.fields.iter().enumerate() {
        let field = &f.ident;
        let label = f.ident.to_string();
        let label = label.trim_start_matches("r#");
        match f.ty {
            FieldType::Int(_) => {
                encode.push(quote_spanned!(f.span=> e.scalar(#ordinal, self.#field)?;));
                decode.push(quote_spanned!(f.span=> #field: d.scalar(#ordinal, #label)?,));
            }
            FieldType::Bytes => {
                encode.push(quote_spanned!(f.span=> e.vfield(#ordinal, &self.#field)?;));
                decode.push(quote_spanned!(f.span=> #field: d.vfield(#ordinal, #label)?,));
            }
        }
    }
    quote! {
        impl #p::Record for #ident {
            const SPEC: #p::RecordSpec = #p::RecordSpec {
                name: #name,
                tag: #tag,
                dtd: #text,
                scalars: #scalars,
                value_sections: &[#(#value_sections),*],
            };

            fn encode(&self, e: &mut #p::Encoder<'_>) -> #p::Result<(), #p::Stop> {
                #(#encode)*
                #p::Result::Ok(())
            }

            fn decode(d: &mut #p::Decoder<'_>) -> #p::Result<Self, #p::Error> {
                #p::Result::Ok(Self { #(#decode)* })
            }
        }
    }
}

/// `impl Format for Enum`, and compile-time checks that tags are distinct and fit.
pub fn format(krate: &syn::Path, ident: &syn::Ident, model: &FormatModel) -> TokenStream {
    let p = quote!(#krate::__private);
    let format = &model.format;
    let tag_width = model.tag_width;
    let section = match &model.section {
        Some((name, number)) => quote!(#p::Option::Some((#name, #number))),
        None => quote!(#p::Option::None),
    };
    let types: Vec<_> = model.variants.iter().map(|(_, t)| t).collect();
    let names: Vec<_> = model.variants.iter().map(|(v, _)| v).collect();
    let indices: Vec<usize> = (0..model.variants.len()).collect();
    let mut checks = Vec::new();
    for (i, (vi, ti)) in model.variants.iter().enumerate() {
        if tag_width < 8 {
            let limit: u64 = 1u64 << (8 * u32::from(tag_width));
            let msg = format!("the tag of record type `{vi}` does not fit tag_width = {tag_width}");
            checks.push(quote_spanned! {ti.span()=>
                const _: () = if <#ti as #p::Record>::SPEC.tag >= #limit { ::core::panic!(#msg) };
            });
        }
        for (vj, tj) in &model.variants[..i] {
            let msg = format!("record types `{vj}` and `{vi}` have the same tag");
            checks.push(quote_spanned! {ti.span()=>
                const _: () = if <#tj as #p::Record>::SPEC.tag == <#ti as #p::Record>::SPEC.tag {
                    ::core::panic!(#msg)
                };
            });
        }
    }
    let unknown = quote!(#p::Result::Err(#p::unknown_variant(#format, variant)));
    quote! {
        impl #p::Format for #ident {
            fn plan() -> #p::Result<&'static #p::FormatPlan, #p::Error> {
                static PLAN: #p::OnceLock<#p::Result<#p::FormatPlan, #p::String>> =
                    #p::OnceLock::new();
                #p::plan_result(PLAN.get_or_init(|| {
                    #p::FormatPlan::new(&#p::FormatSpec {
                        format: #format,
                        tag_width: #tag_width,
                        section: #section,
                        records: #p::records(&[#(<#types as #p::Record>::SPEC),*]),
                    })
                }))
            }

            fn variant(&self) -> usize {
                match self {
                    #(Self::#names(_) => #indices,)*
                }
            }

            fn encode(&self, e: &mut #p::Encoder<'_>) -> #p::Result<(), #p::Stop> {
                match self {
                    #(Self::#names(r) => <#types as #p::Record>::encode(r, e),)*
                }
            }

            fn decode(variant: usize, d: &mut #p::Decoder<'_>) -> #p::Result<Self, #p::Error> {
                match variant {
                    #(#indices => #p::Result::Ok(Self::#names(<#types as #p::Record>::decode(d)?)),)*
                    _ => #unknown,
                }
            }
        }
        #(#checks)*
    }
}
