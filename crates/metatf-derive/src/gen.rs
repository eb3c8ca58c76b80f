//! Phase two: code from the typed model. Everything generated names the runtime through
//! `<crate>::__private`, so it compiles under `#![no_implicit_prelude]`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::dtd;
use metatf_dtd::Interpretation;

use crate::model::{FieldModel, FieldType, FormatModel, RecordModel};

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
    let mut fast_encode = Vec::new();
    let mut fast_decode = Vec::new();
    let mut layout = Vec::new();
    for (ordinal, f) in model.fields.iter().enumerate() {
        let field = &f.ident;
        let label = f.ident.to_string();
        let label = label.trim_start_matches("r#");
        match f.ty {
            FieldType::Int(_) => {
                encode.push(quote_spanned!(f.span=> e.scalar(#ordinal, self.#field)?;));
                decode.push(quote_spanned!(f.span=> #field: d.scalar(#ordinal, #label)?,));
                let (enc, dec, state) = fast_field(&p, ordinal, f);
                fast_encode.push(quote_spanned!(f.span=> e.#enc?;));
                fast_decode.push(quote_spanned!(f.span=> #field: d.#dec?,));
                layout.push(state);
            }
            FieldType::Bytes => {
                encode.push(quote_spanned!(f.span=> e.vfield(#ordinal, &self.#field)?;));
                decode.push(quote_spanned!(f.span=> #field: d.vfield(#ordinal, #label)?,));
                fast_encode.push(quote_spanned!(f.span=> e.vfield(#ordinal, &self.#field)?;));
                fast_decode.push(quote_spanned!(f.span=> #field: d.vfield(#ordinal, #label)?,));
                layout.push(quote!(#p::Option::None));
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
                layout: &[#(#layout),*],
            };

            #[inline(always)]
            fn encode(&self, e: &mut #p::Encoder<'_>) -> #p::Result<(), #p::Stop> {
                if e.fast() {
                    #(#fast_encode)*
                } else {
                    #(#encode)*
                }
                #p::Result::Ok(())
            }

            #[inline(always)]
            fn decode(d: &mut #p::Decoder<'_>) -> #p::Result<Self, #p::Error> {
                if d.fast() {
                    #p::Result::Ok(Self { #(#fast_decode)* })
                } else {
                    #p::Result::Ok(Self { #(#decode)* })
                }
            }
        }
    }
}

/// The fast-path calls of an integer field (encode, decode) and the state they assume
/// (`None`: the field's interpretation reads a value section and takes the general path).
fn fast_field(
    p: &TokenStream,
    ordinal: usize,
    f: &FieldModel,
) -> (TokenStream, TokenStream, TokenStream) {
    let field = &f.ident;
    let label = f.ident.to_string();
    let label = label.trim_start_matches("r#");
    let v = quote!(self.#field);
    let (enc, dec) = match f.interpretation {
        Interpretation::None => (
            quote!(fixed_none(#ordinal, #v)),
            quote!(fixed_none(#ordinal, #label)),
        ),
        Interpretation::Default(c) => (
            quote!(fixed_default(#ordinal, #c, #v)),
            quote!(fixed_default(#ordinal, #c, #label)),
        ),
        Interpretation::BaseOffset(b) => (
            quote!(fixed_base_offset(#ordinal, #b, #v)),
            quote!(fixed_base_offset(#ordinal, #b, #label)),
        ),
        Interpretation::Delta(_) => (
            quote!(fixed_delta(#ordinal, #v)),
            quote!(fixed_delta(#ordinal, #label)),
        ),
        Interpretation::Stride { stride, .. } => (
            quote!(fixed_stride(#ordinal, #stride, #v)),
            quote!(fixed_stride(#ordinal, #stride, #label)),
        ),
        Interpretation::SectionOffset(_) | Interpretation::SectionStride { .. } => {
            return (
                quote!(scalar(#ordinal, #v)),
                quote!(scalar(#ordinal, #label)),
                quote!(#p::Option::None),
            )
        }
    };
    let i = interpretation_tokens(p, f.interpretation);
    (enc, dec, quote!(#p::Option::Some(#i)))
}

/// An interpretation as a constant expression.
fn interpretation_tokens(p: &TokenStream, i: Interpretation) -> TokenStream {
    let i_ = quote!(#p::Interpretation);
    match i {
        Interpretation::None => quote!(#i_::None),
        Interpretation::Default(v) => quote!(#i_::Default(#v)),
        Interpretation::BaseOffset(v) => quote!(#i_::BaseOffset(#v)),
        Interpretation::Delta(v) => quote!(#i_::Delta(#v)),
        Interpretation::Stride { initial, stride } => {
            quote!(#i_::Stride { initial: #initial, stride: #stride })
        }
        Interpretation::SectionOffset(s) => quote!(#i_::SectionOffset(#s)),
        Interpretation::SectionStride { section, stride } => {
            quote!(#i_::SectionStride { section: #section, stride: #stride })
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

            #[inline(always)]
            fn encode(&self, e: &mut #p::Encoder<'_>) -> #p::Result<(), #p::Stop> {
                match self {
                    #(Self::#names(r) => <#types as #p::Record>::encode(r, e),)*
                }
            }

            #[inline(always)]
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
