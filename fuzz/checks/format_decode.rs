//! The check behind the `format_decode` fuzz target, shared with the stable replay test
//! `hatf/tests/fuzz_corpus.rs`: every format's decoder takes any bytes and returns text
//! or an error, never panics.

use hatf::format::DecodeOptions;
use hatf::registry;

/// Decodes `data` with every known format.
pub fn check(data: &[u8]) {
    for f in registry() {
        let _ = f.decode(
            &mut &data[..],
            &mut std::io::sink(),
            &DecodeOptions::default(),
        );
    }
}
