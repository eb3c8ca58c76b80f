//! Line-based text traces read and written through the line patterns of a DTD
//! (`line = "+ " size " " address:x;`, docs/FORMAT.md §8).
//!
//! [`encode_lines`] splits the text into lines, matches each against the compiled patterns,
//! and writes the records through the universal writer (the model engine by default). Every
//! line comes back exactly: a line is stored as a record only when printing the record gives
//! the same bytes with the file's usual line ending; any other line (no pattern matches, a
//! number spelled with extra zeros or another letter case, another line ending, no final line
//! ending, a line longer than [`MAX_LINE`] bytes, in pieces) is stored verbatim as a built-in
//! `comment` record holding its bytes and line ending. [`decode_lines`] prints records and
//! copies comments, in order.
//!
//! ```
//! let dtd = r#"
//!     size.width = 8; size.interpretation = none;
//!     ptr.width = 8;  ptr.interpretation = none;
//!     alloc : (tag, size, ptr) { tag.value = 4; line = "+ " size " " ptr:x; }
//!     free : (tag, ptr) { tag.value = 5; line = "- " ptr:x; }
//! "#;
//! let text = b"+ 16 7f00\n- 7f00\nsomething else\n+ 016 7f00";
//! let mut file = Vec::new();
//! let report = metatf::lines::encode_lines(dtd, "heap.dtd", &text[..], &mut file, Default::default())?;
//! assert_eq!((report.records, report.verbatim), (2, 2));
//! let mut back = Vec::new();
//! metatf::lines::decode_lines(&file[..], &mut back)?;
//! assert_eq!(back, text);
//! # Ok::<(), metatf::Error>(())
//! ```

mod decode;
mod encode;
pub mod infer;
pub mod matcher;
pub mod printer;
mod split;

pub use decode::decode_lines;
pub use encode::{encode_lines, LineOptions, LineReport};

/// The container header's `format` for a text encoded by line patterns.
pub const LINES_FORMAT: &str = "text-lines";

/// Header property holding the usual line ending (`lf` or `crlf`).
pub const PROPERTY_LINE_END: &str = "line-end";

/// Longest piece of a line handled at once; a longer line is kept verbatim in pieces, so
/// memory stays bounded whatever the input.
pub const MAX_LINE: usize = 1 << 20;

/// The line ending printed after every record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnd {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

impl LineEnd {
    /// The bytes.
    pub fn bytes(self) -> &'static [u8] {
        match self {
            LineEnd::Lf => b"\n",
            LineEnd::CrLf => b"\r\n",
        }
    }

    /// The name stored in the header.
    pub fn name(self) -> &'static str {
        match self {
            LineEnd::Lf => "lf",
            LineEnd::CrLf => "crlf",
        }
    }

    /// The line ending a header names.
    pub fn from_name(name: &str) -> Option<LineEnd> {
        match name {
            "lf" => Some(LineEnd::Lf),
            "crlf" => Some(LineEnd::CrLf),
            _ => None,
        }
    }
}
