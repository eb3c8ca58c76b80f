//! One module per subcommand.

pub mod compare;
pub mod completions;
pub mod decode;
pub mod dtd;
pub mod dump;
pub mod encode;
pub mod export;
pub mod inspect;
pub mod man;
pub mod recover;
pub mod stats;
pub mod validate;
pub mod verify;
