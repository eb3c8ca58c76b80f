//! The check behind the `native_reader` fuzz target, shared with the stable replay test
//! `hatf/tests/fuzz_corpus.rs`: the HATF 1.0 reader takes any bytes (also split into a
//! main and an address stream) without panicking, and a stream it reads completely is written
//! back byte for byte by the writer.

use hatf::internal::formats::native::{self, NativeReader, NativeWriter, Record};

/// Reads `data` as one HATF stream, then as a main and an address stream.
pub fn check(data: &[u8]) {
    let records: Result<Vec<Record>, _> = NativeReader::new(data).collect();
    if let Ok(records) = records {
        let mut w = NativeWriter::new(Vec::new());
        let rewritten = records.iter().try_for_each(|r| w.write_record(r));
        if rewritten.is_ok() {
            if let Ok((bytes, _)) = w.finish() {
                assert!(bytes == data, "records read back were written differently");
            }
        }
    }
    let _ = native::read_events(data);
    if let Some((&cut, rest)) = data.split_first() {
        let (main, addresses) = rest.split_at(usize::from(cut).min(rest.len()));
        let reader = NativeReader::with_split_addresses(main, Box::new(addresses));
        let _ = native::model::collect_events(reader);
    }
}
