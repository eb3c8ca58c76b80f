//! The context mixers that the `wee-alloc` and `malloc-bench` layouts store their streams with
//! (version 1 for older files, [`v2`] for new ones). They live in the container crate, whose
//! codec 3 is version 2, and are re-exported here under the path these formats use.

pub use metatf::container::context_mix::*;
