//! The formats' own modules, what they share, and the paper's comparison, for this workspace's
//! binary, tests, benchmarks and fuzz targets only.
//!
//! They are `pub` because Rust has no visibility between "this crate" and "everyone": the
//! `hatf` binary, the integration tests and the fuzz targets (a separate workspace) are other
//! crates. They sit under this one hidden module, not a cargo feature, so that the workspace
//! needs no feature switched on to build (and no build of the library differs from another),
//! while a library user meets them under a name that says what they are. Nothing here is
//! documented or stable: it may change in any release.

#[path = "compare/mod.rs"]
pub mod compare;
#[path = "formats/mod.rs"]
pub mod formats;
#[path = "paper/mod.rs"]
pub mod paper;
#[path = "shared/mod.rs"]
pub mod shared;
