//! The check behind the `universal_reader` fuzz target, shared with the stable replay test
//! `metatf/tests/fuzz_corpus.rs`: any bytes give events until the end or an error.

use metatf::UniversalReader;

/// Reads every event of `data`, stopping at the first error.
pub fn check(data: &[u8]) {
    if let Ok(mut reader) = UniversalReader::new(data) {
        let _ = reader.header();
        while let Ok(Some(_)) = reader.next_event() {}
    }
}
