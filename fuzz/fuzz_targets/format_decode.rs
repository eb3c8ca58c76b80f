//! Fuzz every format's decoder with arbitrary bytes: an error, never a panic (see ../checks/format_decode.rs).
#![no_main]

#[path = "../checks/format_decode.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
