//! Fuzz the universal reader: any container bytes give events until the end or an error (see ../checks/universal_reader.rs).
#![no_main]

#[path = "../checks/universal_reader.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
