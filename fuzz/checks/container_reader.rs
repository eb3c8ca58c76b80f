//! The check behind the `container_reader` fuzz target, shared with the stable replay test
//! `crates/metatf/tests/fuzz_corpus.rs`: the container reader and the tools built on it take
//! any bytes and give blocks, records or an error — never a panic.

/// Reads every block, then dumps and inspects `data`.
pub fn check(data: &[u8]) {
    if let Ok(mut reader) = metatf::ContainerReader::new(data) {
        while let Ok(Some(_block)) = reader.next_block() {}
    }
    let _ = metatf::dump(data, std::io::sink(), false);
    let _ = metatf::inspect(data);
}
