//! Fuzz the memory_replay text front end: encode → decode gives the text back (see ../checks/text_front_end.rs).
#![no_main]

#[path = "../checks/text_front_end.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(
    "memory-replay",
    data,
    Some(hatf::internal::formats::memory_replay::read_events)
));
