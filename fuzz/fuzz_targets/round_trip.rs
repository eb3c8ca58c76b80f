//! Fuzz the universal writer and reader: drawn schema and records → write → read = identity (see ../checks/round_trip.rs).
#![no_main]

#[path = "../checks/round_trip.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
