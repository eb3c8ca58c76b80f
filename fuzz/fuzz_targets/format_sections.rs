//! Fuzz each format's decoder behind valid container framing: one section of a valid encoding
//! replaced by fuzz bytes (see ../checks/format_sections.rs).
#![no_main]

#[path = "../checks/format_sections.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
