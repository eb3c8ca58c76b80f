//! The check behind the `container_reader` fuzz target, shared with the stable replay test
//! `metatf/tests/fuzz_corpus.rs`: the container reader, its index readers and the tools
//! built on it take any bytes and give blocks, records, index entries or an error — never a
//! panic.

use std::io::Cursor;

use metatf::container::{load_index, read_index, scan_index};

/// Reads every block, reads and rebuilds the index, seeks to every block the index names, then
/// dumps and inspects `data`.
pub fn check(data: &[u8]) {
    if let Ok(mut reader) = metatf::ContainerReader::new(data) {
        while let Ok(Some(_block)) = reader.next_block() {}
    }
    let _ = read_index(&mut Cursor::new(data));
    let _ = scan_index(data);
    if let Ok((entries, _why_rebuilt)) = load_index(Cursor::new(data)) {
        // An index that passed its checksum can still lie; seeking by it must end in a block
        // or an error. Bounded: the entries come from `data`, at most one per few bytes.
        for (i, entry) in entries.iter().enumerate() {
            let Ok(mut reader) = metatf::ContainerReader::new(Cursor::new(data)) else {
                break;
            };
            if reader.seek_block(i as u64, entry).is_ok() {
                let _ = reader.next_block();
            }
        }
    }
    let _ = metatf::dump(data, std::io::sink(), false);
    let _ = metatf::inspect(data);
}
