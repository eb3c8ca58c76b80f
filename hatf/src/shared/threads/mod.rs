//! Handing work between threads.

pub mod spin_recv;
