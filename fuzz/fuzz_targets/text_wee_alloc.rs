//! Fuzz the wee_alloc front end: encode → decode gives the text back (see ../checks/text_front_end.rs).
#![no_main]

#[path = "../checks/text_front_end.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(
    "wee-alloc",
    data,
    Some(hatf::internal::formats::wee_alloc::read_events)
));
