//! Line patterns in the schema model: how a record is spelled as one line of text.
//!
//! A DTD record may carry `line = "+ " size " " address:x;` (docs/FORMAT.md §8). Lowering turns
//! it into a [`LineRecord`]: literal bytes and fields, each field naming its index in the
//! record's flattened value list (the order of [`crate::RecordDef::leaves`]), with the spelling
//! of numbers resolved. The runtime (`metatf::lines`) compiles these into a matcher and printer.

use serde::Serialize;

/// The line patterns of a DTD, in source order (which decides which record wins when several
/// patterns match a line).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LineSpec {
    /// Every record that has a line pattern.
    pub records: Vec<LineRecord>,
    /// What a line that no pattern spells becomes (`unmatched = ...;`).
    pub unmatched: Unmatched,
}

/// What a line that no pattern spells exactly becomes: `unmatched = verbatim | error | RECORD;`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub enum Unmatched {
    /// Kept verbatim, with its line ending, in the built-in `comment` record (the default).
    #[default]
    Verbatim,
    /// Refused: encoding stops at the line with its line and column (as `--strict` does).
    Error,
    /// Kept verbatim, with its line ending, in this record of the DTD, whose fields are one
    /// byte string and its length.
    Record {
        /// The record's name.
        name: String,
        /// The section the record is local to, `None` for a global record.
        section: Option<u8>,
        /// The record's tag value.
        tag: u64,
    },
}

impl LineSpec {
    /// True when no record has a line pattern.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// One record's line pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineRecord {
    /// The record's name.
    pub name: String,
    /// The section the record is local to, `None` for a global record.
    pub section: Option<u8>,
    /// The record's tag value.
    pub tag: u64,
    /// Number of values in the record's flattened field list (tag excluded).
    pub field_count: usize,
    /// The pattern, left to right. Two fields are never adjacent unless the first has an exact
    /// digit count or one of them is a run of spaces, and literals are never adjacent or empty.
    /// No pieces at all (`line = "";`) spells the empty line.
    pub pieces: Vec<LinePiece>,
}

/// A piece of a line pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum LinePiece {
    /// Bytes that must appear as written.
    Literal(Vec<u8>),
    /// An integer field spelled as digits.
    Number {
        /// Index of the field's value in the record.
        field: usize,
        /// How the digits are written.
        spelling: NumberSpelling,
    },
    /// A byte-string field: up to the next literal, or to the end of the line when last.
    Bytes {
        /// Index of the field's value in the record.
        field: usize,
        /// Index of the value holding its length (set from the bytes read).
        length_field: usize,
    },
    /// A run of one or more spaces whose length is the field's value. Why: tools pad columns
    /// to the width of the widest entry of a block (`ls -l`, `ps`), so the spaces between two
    /// columns vary from line to line; kept as a count, lines of one layout share a pattern
    /// and the count goes to the model engine, which can predict it from its neighbours.
    Spaces {
        /// Index of the field's value in the record.
        field: usize,
    },
}

/// How an integer is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NumberSpelling {
    /// 16 for hexadecimal, 10 for decimal.
    pub radix: u8,
    /// A leading `-` for negative values; the value is stored as its 64-bit two's complement.
    pub signed: bool,
    /// Hexadecimal digits `A`–`F` rather than `a`–`f`.
    pub upper: bool,
    /// Written with a `0x` prefix.
    pub prefix: bool,
    /// How many digits (of the integer part, for a fixed-point or clock spelling).
    pub digits: Digits,
    /// Digits after a decimal point, 0 for none: the value is the number scaled by
    /// 10^`fraction` (`12.345678` with 6 is 12345678). Why: tools print times as seconds and
    /// a fixed count of fraction digits; as one integer, the engine's delta and stride
    /// predictors see the time itself rather than two fields broken apart by the carry.
    pub fraction: u8,
    /// Spelled as a clock `H:MM:SS` (the hours as `digits` says, minutes and seconds as two
    /// digits below 60), then the fraction; the value is the count of seconds, scaled as
    /// above. Decimal only.
    pub clock: bool,
}

/// How many digits a number is written with (the sign and prefix not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Digits {
    /// As few as the value needs (one for zero).
    Minimal,
    /// At least this many, padded with leading zeros; more when the value needs them.
    AtLeast(u8),
    /// As few as the value needs, right-aligned with spaces before it (and before its sign and
    /// prefix) so that the whole spelling takes at least this many bytes. Why: tools print
    /// columns of numbers right-aligned (addresses in call stacks, sizes in listings, ids in
    /// tables), and without this the separator before each such number differs from line to
    /// line, so lines of one shape would not share a pattern.
    Spaced(u8),
    /// Exactly this many, padded with leading zeros; a value needing more cannot be spelled.
    Exactly(u8),
}
