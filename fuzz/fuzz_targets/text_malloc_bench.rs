//! Fuzz the malloc-bench front end (stored gzip bytes, protobuf events) (see ../checks/text_front_end.rs).
#![no_main]

#[path = "../checks/text_front_end.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check_malloc_bench(data));
