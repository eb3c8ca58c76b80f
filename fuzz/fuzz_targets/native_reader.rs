//! Fuzz the HATF 1.0 native reader, plain and split-address (see ../checks/native_reader.rs).
#![no_main]

#[path = "../checks/native_reader.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
