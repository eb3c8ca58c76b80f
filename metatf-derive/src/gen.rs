//! Phase two: code from the typed model. Everything generated names the runtime through
//! `<crate>::__private`, so it compiles under `#![no_implicit_prelude]`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::dtd;
use metatf_dtd::Interpretation;

use crate::model::{FieldModel, FieldType, FormatModel, RecordModel, VariantModel};

/// How generated code reaches a record's fields: through `self` (a record struct) or through
/// the bindings of a match on an enum variant with inline fields.
#[derive(Clone, Copy)]
pub enum Access {
    /// `self.field`.
    SelfField,
    /// `field`, bound by reference in a `match self` arm.
    Binding,
}

impl Access {
    /// The field's value: an integer by value, a byte string as a reference.
    fn value(self, f: &FieldModel) -> TokenStream {
        let field = &f.ident;
        match (self, f.ty) {
            (Access::SelfField, FieldType::Int(_)) => quote!(self.#field),
            (Access::SelfField, FieldType::Bytes | FieldType::Repeated(_)) => {
                quote!(&self.#field)
            }
            (Access::Binding, FieldType::Int(_)) => quote!(*#field),
            (Access::Binding, FieldType::Bytes | FieldType::Repeated(_)) => quote!(#field),
        }
    }
}

/// The pieces of code for one record type, whether a struct or an inline enum variant.
pub struct RecordParts {
    /// The `RecordSpec` constant expression.
    pub spec: TokenStream,
    /// Statements writing the fields with an encoder `e`, ending in `Ok(())`.
    pub encode: TokenStream,
    /// Statements reading the fields into locals with a decoder `d`, for the fast and the
    /// general path, the condition choosing between them, and the field initialisers
    /// (`a: local, ...`) that build the record from the locals.
    pub decode_fast: TokenStream,
    /// See [`Self::decode_fast`].
    pub decode_general: TokenStream,
    /// See [`Self::decode_fast`].
    pub decode_fields: TokenStream,
    /// `d.fast() && d.has_states(N)`.
    pub decode_condition: TokenStream,
}

/// The spec, `encode` body and `decode` field initialisers of a record.
pub fn record_parts(p: &TokenStream, model: &RecordModel, access: Access) -> RecordParts {
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
    // `delta`/`stride` fast paths return the field's new previous value; it is stored after
    // the last field, so that an attempt that fails part way has changed no state.
    let mut commit = Vec::new();
    // Fields are decoded into locals first (named so that no field name can shadow `d`): a
    // repeated field needs the value of its count field.
    let local = |i: usize| quote::format_ident!("__metatf_field_{}", i);
    let mut fields = Vec::new();
    for (ordinal, f) in model.fields.iter().enumerate() {
        let field = &f.ident;
        let label = f.ident.to_string();
        let label = label.trim_start_matches("r#");
        let v = access.value(f);
        let here = local(ordinal);
        fields.push(quote!(#field: #here,));
        match f.ty {
            FieldType::Repeated(_) => {
                let Some((_, Some(j))) = f.count else {
                    continue; // an error was reported when the count was resolved
                };
                let count = access.value(&model.fields[j]);
                let count_local = local(j);
                // Elements take the general path: their states chain from one to the next.
                let enc = quote_spanned!(f.span=> e.repeated(#ordinal, #count, #v)?;);
                encode.push(enc.clone());
                fast_encode.push(enc);
                let dec = quote_spanned!(f.span=> let #here = d.repeated(#ordinal, #count_local, #label)?;);
                decode.push(dec.clone());
                fast_decode.push(dec);
                layout.push(quote!(#p::Option::None));
            }
            FieldType::Int(_) => {
                encode.push(quote_spanned!(f.span=> e.scalar(#ordinal, #v)?;));
                decode.push(quote_spanned!(f.span=> let #here = d.scalar(#ordinal, #label)?;));
                let fast = fast_field(p, ordinal, f, &v);
                fast_encode.push(fast.encode);
                commit.extend(fast.commit);
                let fast_dec = fast.decode;
                fast_decode.push(quote_spanned!(f.span=> let #here = #fast_dec;));
                layout.push(fast.layout);
            }
            FieldType::Bytes => {
                encode.push(quote_spanned!(f.span=> e.vfield(#ordinal, #v)?;));
                decode.push(quote_spanned!(f.span=> let #here = d.vfield(#ordinal, #label)?;));
                // The length field is `none` unless a metadata record changed it.
                fast_encode.push(quote_spanned!(f.span=> e.fixed_vfield(#ordinal, #v)?;));
                fast_decode
                    .push(quote_spanned!(f.span=> let #here = d.fixed_vfield(#ordinal, #label)?;));
                layout.push(quote!(#p::Option::Some(#p::Interpretation::None)));
            }
        }
    }
    RecordParts {
        spec: quote! {
            #p::RecordSpec {
                name: #name,
                tag: #tag,
                dtd: #text,
                scalars: #scalars,
                value_sections: &[#(#value_sections),*],
                layout: &[#(#layout),*],
            }
        },
        encode: quote! {
            // One length check here spares one per field below.
            if e.fast() && e.has_states(#scalars) {
                #(#fast_encode)*
                #(#commit)*
            } else {
                #(#encode)*
            }
            #p::Result::Ok(())
        },
        decode_fast: quote!(#(#fast_decode)*),
        decode_general: quote!(#(#decode)*),
        decode_fields: quote!(#(#fields)*),
        decode_condition: quote!(d.fast() && d.has_states(#scalars)),
    }
}

/// `impl Record for Struct`: the record's spec, `encode` and `decode`.
pub fn record(krate: &syn::Path, ident: &syn::Ident, model: &RecordModel) -> TokenStream {
    let p = quote!(#krate::__private);
    let RecordParts {
        spec,
        encode,
        decode_fast,
        decode_general,
        decode_fields,
        decode_condition,
    } = record_parts(&p, model, Access::SelfField);
    quote! {
        impl #p::Record for #ident {
            const SPEC: #p::RecordSpec = #spec;

            #[inline(always)]
            fn encode(&self, e: &mut #p::Encoder<'_>) -> #p::Result<(), #p::Stop> {
                #encode
            }

            #[inline(always)]
            fn decode(d: &mut #p::Decoder<'_>) -> #p::Result<Self, #p::Error> {
                if #decode_condition {
                    #decode_fast
                    #p::Result::Ok(Self { #decode_fields })
                } else {
                    #decode_general
                    #p::Result::Ok(Self { #decode_fields })
                }
            }
        }
    }
}

/// The fast-path code of an integer field.
struct FastField {
    /// Statements writing the field with an encoder `e`.
    encode: TokenStream,
    /// A statement storing what the field's coding changed (a previous value or a cursor),
    /// run once every field is written, so that a failed attempt has changed no state.
    commit: Option<TokenStream>,
    /// An expression reading the field with a decoder `d`.
    decode: TokenStream,
    /// The state the fast path assumes (see `RecordSpec::layout`).
    layout: TokenStream,
}

/// The fast path of an integer field, for its declared interpretation and for `none` (what a
/// writer switches a misfit to): one branch on the field's current interpretation.
fn fast_field(p: &TokenStream, ordinal: usize, f: &FieldModel, v: &TokenStream) -> FastField {
    let label = f.ident.to_string();
    let label = label.trim_start_matches("r#");
    let span = f.span;
    let saved = quote::format_ident!("__metatf_saved_{}", ordinal);
    let none_enc = quote_spanned!(span=> e.fixed_none(#ordinal, #v)?;);
    let none_dec = quote_spanned!(span=> d.fixed_none(#ordinal, #label)?);
    // Declared encode statement, declared decode expression, and what to commit (a previous
    // value or a cursor) with the expression that keeps it unchanged under `none`.
    let (enc, dec, kept): (TokenStream, TokenStream, Option<(TokenStream, TokenStream)>) =
        match f.interpretation {
            Interpretation::None => {
                let layout = interpretation_tokens(p, f.interpretation);
                return FastField {
                    encode: none_enc,
                    commit: None,
                    decode: none_dec,
                    layout: quote!(#p::Option::Some(#layout)),
                };
            }
            Interpretation::Default(c) => (
                quote_spanned!(span=> e.fixed_default(#ordinal, #c, #v)?;),
                quote_spanned!(span=> d.fixed_default(#ordinal, #c, #label)?),
                None,
            ),
            Interpretation::BaseOffset(b) => (
                quote_spanned!(span=> e.fixed_base_offset(#ordinal, #b, #v)?;),
                quote_spanned!(span=> d.fixed_base_offset(#ordinal, #b, #label)?),
                None,
            ),
            Interpretation::Delta(_) => (
                quote_spanned!(span=> e.fixed_delta(#ordinal, #v)?),
                quote_spanned!(span=> d.fixed_delta(#ordinal, #label)?),
                Some((
                    quote!(e.set_previous(#ordinal, #saved);),
                    quote!(e.previous(#ordinal)),
                )),
            ),
            Interpretation::Stride { stride, .. } => (
                quote_spanned!(span=> e.fixed_stride(#ordinal, #stride, #v)?),
                quote_spanned!(span=> d.fixed_stride(#ordinal, #stride, #label)?),
                Some((
                    quote!(e.set_previous(#ordinal, #saved);),
                    quote!(e.previous(#ordinal)),
                )),
            ),
            Interpretation::SectionOffset(s) => (
                quote_spanned!(span=> e.fixed_section_offset(#ordinal, #s, #v)?;),
                quote_spanned!(span=> d.fixed_section_offset(#ordinal, #s, #label)?),
                None,
            ),
            Interpretation::SectionStride { section, stride } => (
                quote_spanned!(span=> e.fixed_section_stride(#ordinal, #section, #stride, #v)?),
                quote_spanned!(span=> d.fixed_section_stride(#ordinal, #section, #stride, #label)?),
                Some((
                    quote!(e.set_cursor(#ordinal, #saved);),
                    quote!(e.cursor(#ordinal)),
                )),
            ),
        };
    let (encode, commit) = match kept {
        None => (
            quote_spanned!(span=> if e.is_none(#ordinal) { #none_enc } else { #enc }),
            None,
        ),
        Some((commit, keep)) => (
            quote_spanned! {span=>
                let #saved = if e.is_none(#ordinal) { #none_enc #keep } else { #enc };
            },
            Some(commit),
        ),
    };
    let layout = interpretation_tokens(p, f.interpretation);
    FastField {
        encode,
        commit,
        decode: quote_spanned!(span=> if d.is_none(#ordinal) { #none_dec } else { #dec }),
        layout: quote!(#p::Option::Some(#layout)),
    }
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
    let mut specs = Vec::new();
    let mut tags = Vec::new();
    let mut spans = Vec::new();
    let mut variant_arms = Vec::new();
    let mut encode_arms = Vec::new();
    let mut decode_arms = Vec::new();
    for (i, v) in model.variants.iter().enumerate() {
        let name = v.ident();
        match v {
            VariantModel::Wrapped(_, ty) => {
                specs.push(quote!(<#ty as #p::Record>::SPEC));
                tags.push(quote!(<#ty as #p::Record>::SPEC.tag));
                spans.push(ty.span());
                variant_arms.push(quote!(Self::#name(_) => #i,));
                encode_arms.push(quote!(Self::#name(r) => <#ty as #p::Record>::encode(r, e),));
                decode_arms.push(
                    quote!(#i => #p::Result::Ok(Self::#name(<#ty as #p::Record>::decode(d)?)),),
                );
            }
            VariantModel::Inline(_, record) => {
                let parts = record_parts(&p, record, Access::Binding);
                let fields: Vec<_> = record.fields.iter().map(|f| &f.ident).collect();
                let tag = record.tag;
                let (spec, body) = (parts.spec, parts.encode);
                let (fast, general, condition, built) = (
                    parts.decode_fast,
                    parts.decode_general,
                    parts.decode_condition,
                    parts.decode_fields,
                );
                specs.push(spec);
                tags.push(quote!(#tag));
                spans.push(name.span());
                variant_arms.push(quote!(Self::#name { .. } => #i,));
                encode_arms.push(quote!(Self::#name { #(#fields),* } => { #body }));
                decode_arms.push(quote! {
                    #i => if #condition {
                        #fast
                        #p::Result::Ok(Self::#name { #built })
                    } else {
                        #general
                        #p::Result::Ok(Self::#name { #built })
                    },
                });
            }
        }
    }
    let mut checks = Vec::new();
    for (i, v) in model.variants.iter().enumerate() {
        let (vi, ti, span) = (v.ident(), &tags[i], spans[i]);
        if tag_width < 8 {
            let limit: u64 = 1u64 << (8 * u32::from(tag_width));
            let msg = format!("the tag of record type `{vi}` does not fit tag_width = {tag_width}");
            checks.push(quote_spanned! {span=>
                const _: () = if #ti >= #limit { ::core::panic!(#msg) };
            });
        }
        for (j, w) in model.variants[..i].iter().enumerate() {
            let (vj, tj) = (w.ident(), &tags[j]);
            let msg = format!("record types `{vj}` and `{vi}` have the same tag");
            checks.push(quote_spanned! {span=>
                const _: () = if #tj == #ti { ::core::panic!(#msg) };
            });
        }
    }
    let unknown = quote!(#p::Result::Err(#p::unknown_variant(#format, variant)));
    let count = model.variants.len();
    let source = source_tokens(&p, model);
    let plan = plan_fn(&p);
    let engine = model.model_engine;
    quote! {
        impl #p::Format for #ident {
            const VARIANTS: usize = #count;
            const TAG_WIDTH: u8 = #tag_width;
            const MODEL_ENGINE: bool = #engine;

            fn spec() -> #p::FormatSpec {
                #p::one_group(#format, #tag_width, #section, #source, &[#(#specs),*])
            }

            #plan

            fn variant(&self) -> usize {
                match self {
                    #(#variant_arms)*
                }
            }

            #[inline(always)]
            fn encode(&self, e: &mut #p::Encoder<'_>) -> #p::Result<(), #p::Stop> {
                match self {
                    #(#encode_arms)*
                }
            }

            #[inline(always)]
            fn decode(variant: usize, d: &mut #p::Decoder<'_>) -> #p::Result<Self, #p::Error> {
                match variant {
                    #(#decode_arms)*
                    _ => #unknown,
                }
            }
        }
        #(#checks)*
    }
}

/// `Option<&'static str>`: the DTD text given with `#[metatf(dtd = ...)]`, if any.
fn source_tokens(p: &TokenStream, model: &FormatModel) -> TokenStream {
    match &model.source {
        Some(e) => quote_spanned!(e.span()=> #p::Option::Some(#e)),
        None => quote!(#p::Option::None),
    }
}

/// `fn plan()`: the plan built from `spec()` once, cached for the program's life.
fn plan_fn(p: &TokenStream) -> TokenStream {
    quote! {
        fn plan() -> #p::Result<&'static #p::FormatPlan, #p::Error> {
            static PLAN: #p::OnceLock<#p::Result<#p::FormatPlan, #p::String>> =
                #p::OnceLock::new();
            #p::plan_result(PLAN.get_or_init(|| {
                #p::FormatPlan::new(&<Self as #p::Format>::spec())
            }))
        }
    }
}

/// `impl Format` for a `#[metatf(sections)]` enum: each variant wraps a format (one section's
/// records), whose variants follow those of the variants before it.
pub fn sections(krate: &syn::Path, ident: &syn::Ident, model: &FormatModel) -> TokenStream {
    let p = quote!(#krate::__private);
    let format = &model.format;
    let mut types = Vec::new();
    let mut names = Vec::new();
    for v in &model.variants {
        if let VariantModel::Wrapped(name, ty) = v {
            names.push(name.clone());
            types.push(ty.clone());
        }
    }
    let Some(first) = types.first() else {
        return TokenStream::new();
    };
    let count = |ts: &[syn::Type]| quote!(0usize #(+ <#ts as #p::Format>::VARIANTS)*);
    let mut variant_arms = Vec::new();
    let mut encode_arms = Vec::new();
    let mut decode_steps = Vec::new();
    let mut checks = Vec::new();
    for (i, (name, ty)) in names.iter().zip(&types).enumerate() {
        let before = count(&types[..i]);
        variant_arms.push(quote!(Self::#name(x) => #before + <#ty as #p::Format>::variant(x),));
        encode_arms.push(quote!(Self::#name(x) => <#ty as #p::Format>::encode(x, e),));
        decode_steps.push(quote! {
            // Below `start` the difference wraps past every variant count.
            let local = variant.wrapping_sub(#before);
            if local < <#ty as #p::Format>::VARIANTS {
                return #p::Result::Ok(Self::#name(<#ty as #p::Format>::decode(local, d)?));
            }
        });
        if i > 0 {
            let msg = format!(
                "the tag_width of `{}` differs from that of `{}`: a trace has one tag width",
                quote!(#ty),
                quote!(#first)
            );
            checks.push(quote_spanned! {ty.span()=>
                const _: () = if <#ty as #p::Format>::TAG_WIDTH != <#first as #p::Format>::TAG_WIDTH {
                    ::core::panic!(#msg)
                };
            });
        }
    }
    let total = count(&types);
    let source = source_tokens(&p, model);
    let plan = plan_fn(&p);
    let engine = model.model_engine;
    quote! {
        impl #p::Format for #ident {
            const VARIANTS: usize = #total;
            const TAG_WIDTH: u8 = <#first as #p::Format>::TAG_WIDTH;
            const MODEL_ENGINE: bool = #engine;

            fn spec() -> #p::FormatSpec {
                #p::join(
                    #format,
                    <Self as #p::Format>::TAG_WIDTH,
                    #source,
                    &[#(<#types as #p::Format>::spec()),*],
                )
            }

            #plan

            #[inline(always)]
            fn variant(&self) -> usize {
                match self {
                    #(#variant_arms)*
                }
            }

            #[inline(always)]
            fn encode(&self, e: &mut #p::Encoder<'_>) -> #p::Result<(), #p::Stop> {
                match self {
                    #(#encode_arms)*
                }
            }

            #[inline(always)]
            fn decode(variant: usize, d: &mut #p::Decoder<'_>) -> #p::Result<Self, #p::Error> {
                #(#decode_steps)*
                #p::Result::Err(#p::unknown_variant(#format, variant))
            }
        }
        #(#checks)*
    }
}
