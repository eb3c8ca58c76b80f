//! The text form of a trace: one line per record, exact and invertible, plus a JSON variant.
//!
//! ```text
//! #format "test"
//! #property "producer" "me"
//! #block 0
//! section number=1
//! alloc size=16 address=4096 time=0
//! metadata alloc size@1 width 8
//! comment length=5 data="hello"
//! pairs n=2 a+b=[{a=1 b=2} {a=3 b=4}]
//! ```
//!
//! See `docs/FORMAT.md §5` for the grammar.

mod dump;
mod encode;
mod parse;
mod print;
mod quote;

pub use dump::{dump, print_records};
pub use encode::{
    default_level, encode_text, encode_text_with, TextModel, DEFAULT_CODEC, MAX_TEXT_LINE,
};

pub(crate) use parse::{parse_line, Line};
pub(crate) use print::{record_json, record_line, record_line_into};
pub(crate) use quote::quote;
