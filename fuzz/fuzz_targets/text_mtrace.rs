//! Fuzz the mtrace front end: encode → decode gives the text back (see ../checks/text_front_end.rs).
#![no_main]

#[path = "../checks/text_front_end.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(
    "mtrace",
    data,
    Some(hatf::internal::formats::mtrace::read_events)
));
