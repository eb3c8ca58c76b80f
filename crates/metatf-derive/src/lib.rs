//! `#[derive(MetaTf)]`: typed Meta-TF readers and writers generated from Rust types.

use proc_macro::TokenStream;

/// Derives a typed Meta-TF record codec. Not built yet: using it is a compile error that says so.
#[proc_macro_derive(MetaTf, attributes(metatf))]
pub fn derive_metatf(_input: TokenStream) -> TokenStream {
    quote::quote! { ::core::compile_error!("#[derive(MetaTf)] is not built yet"); }.into()
}
