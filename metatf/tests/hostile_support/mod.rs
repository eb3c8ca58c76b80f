//! Helpers shared by the hostile-input tests.
pub mod counting_alloc;
