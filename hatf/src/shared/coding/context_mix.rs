//! The context mixer that the `wee-alloc` and `malloc-bench` layouts store their streams with
//! ([`v2`]). It lives in the container crate, whose codec 3 is the same coder, and is
//! re-exported here under the path these formats use.

pub use metatf::container::context_mix::*;
