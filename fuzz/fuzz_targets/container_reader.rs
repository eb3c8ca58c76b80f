//! Fuzz the Meta-TF container reader and the tools on it (dump, inspect): any input must give
//! blocks, records or an error (see ../checks/container_reader.rs).
#![no_main]

#[path = "../checks/container_reader.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
