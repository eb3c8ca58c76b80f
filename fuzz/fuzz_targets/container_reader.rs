//! Fuzz the Meta-TF container reader and the universal reader: any input must give blocks,
//! records or an error — never a panic, a hang or an allocation the input does not justify.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Container layer: every block until the end or the first error.
    if let Ok(mut reader) = metatf::ContainerReader::new(data) {
        while let Ok(Some(_block)) = reader.next_block() {}
    }
    // Record layer, with the DTD embedded in the input, through the text dump.
    let _ = metatf::dump(data, std::io::sink(), false);
    let _ = metatf::inspect(data);
});
