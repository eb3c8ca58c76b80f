//! The predefined records (`vfield`, `comment`, `section`, `metadata`), written in the DTD
//! language itself and parsed before every user DTD.

/// Text of the built-in definitions (see `builtins.dtd` for the choices made).
pub const BUILTIN_DTD: &str = include_str!("builtins.dtd");

/// Names of the built-in records; a user DTD may not define records with these names.
pub const BUILTIN_NAMES: [&str; 4] = ["vfield", "comment", "section", "metadata"];

/// Tag values of the built-in trace records.
pub const COMMENT_TAG: u64 = 1;
/// Tag of the `section` record.
pub const SECTION_TAG: u64 = 2;
/// Tag of the `metadata` record.
pub const METADATA_TAG: u64 = 3;
