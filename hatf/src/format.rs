//! The seam between the `hatf` command and each source trace format.
//!
//! Every text format (glibc mtrace, Android memory_replay, Elephant Tracks, ...) implements
//! [`TraceFormat`]: it recognises its input, turns it into a self-describing binary file and
//! turns that file back into the exact same bytes. The command only picks a format and moves bytes.

use std::fmt;
use std::io::{Read, Write};
use std::path::PathBuf;

/// How sections are compressed inside the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Stored as is.
    None,
    /// DEFLATE in gzip framing.
    Gzip,
    /// Zstandard (the default).
    #[default]
    Zstd,
}

/// Options shared by every encoder.
#[derive(Debug, Clone)]
pub struct EncodeOptions {
    /// Name of the input for error messages (a path, or `<stdin>`).
    pub input_name: String,
    /// The encoding to use (`auto` unless the user chose one); formats list theirs.
    pub encoding: String,
    /// Section compression.
    pub compression: Compression,
    /// Compression level; `None` means the format's default.
    pub level: Option<i32>,
    /// Worker threads for block compression.
    pub threads: usize,
    /// Store lines that do not parse verbatim instead of failing.
    pub keep_bad_lines: bool,
    /// Folder holding name files (class/method/field lists) to embed, where the format has them.
    pub names_dir: Option<PathBuf>,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            input_name: "<stdin>".to_string(),
            encoding: "auto".to_string(),
            compression: Compression::Zstd,
            level: None,
            threads: 1,
            keep_bad_lines: false,
            names_dir: None,
        }
    }
}

/// What an encoder tells the user when it is done.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodeReport {
    /// Records written.
    pub records: u64,
    /// Input lines stored verbatim because they did not parse (`--keep-bad-lines`).
    pub bad_lines: u64,
    /// Input bytes read.
    pub input_bytes: u64,
}

/// Options shared by every decoder.
#[derive(Debug, Clone, Default)]
pub struct DecodeOptions {
    /// Name of the binary input for error messages.
    pub input_name: String,
    /// Folder to write name files into, where the format has them.
    pub names_dir: Option<PathBuf>,
    /// Threads decompressing blocks (0 or 1: the caller's only); the output is the same.
    pub threads: usize,
    /// The regular file the decoder's `output` writes into, empty and with nothing buffered
    /// for it yet, when the caller lets the decoder write the text at offsets instead (a
    /// decoder whose blocks know their text's length then writes each block where it goes, from
    /// several threads, without holding any block's text back for the order). `None`: the
    /// text goes through `output`, in order.
    pub positioned: Option<std::sync::Arc<std::fs::File>>,
}

/// A failure while converting a trace, with enough position to find the problem.
#[derive(Debug)]
pub struct FormatError {
    /// The file the problem is in.
    pub file: String,
    /// Where in it: `line:column` for text, `byte N` for binary.
    pub position: String,
    /// What is wrong, and what to do about it where that is known.
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.position.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.position, self.message)
        }
    }
}

impl std::error::Error for FormatError {}

/// The result of `hatf stats`: a human-readable table and the same numbers as JSON.
#[derive(Debug, Clone)]
pub struct StatsReport {
    /// What `hatf stats` prints.
    pub text: String,
    /// What `hatf stats --json` prints.
    pub json: serde_json::Value,
}

/// Where in a trace a problem shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum At {
    /// 1-based line of a text trace.
    Line(u64),
    /// 1-based record of a trace whose records are binary (malloc-bench's protobuf).
    Record(u64),
}

impl At {
    /// The number, whatever it counts.
    pub fn number(self) -> u64 {
        match self {
            At::Line(n) | At::Record(n) => n,
        }
    }
}

/// One problem `hatf validate` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where the problem shows.
    pub at: At,
    /// A short stable name for the kind of problem (`double-free`, `leak`, ...), for `--json`.
    pub kind: &'static str,
    /// What is wrong.
    pub message: String,
}

/// Hears each problem `hatf validate` finds, as it is found.
pub type ProblemSink<'a> = &'a mut dyn FnMut(Problem);

/// Lists the thread ids (ascending) of each block of one file again, from its records: called
/// with every block in file order, from the first. See [`TraceFormat::thread_lister`].
pub type ThreadLister = Box<dyn FnMut(&metatf::container::Block) -> Result<Vec<u64>, FormatError>>;

/// One source trace format.
pub trait TraceFormat: Sync {
    /// The name used with `--from` / `--to` and stored in encoded files (e.g. `mtrace`).
    fn name(&self) -> &'static str;
    /// One line for `--help` and `-v`.
    fn description(&self) -> &'static str;
    /// The encodings this format offers; the first is the default (`auto`).
    fn encodings(&self) -> &'static [&'static str] {
        &["auto"]
    }
    /// Encodings that keep only the trace's events, not its text (`hatf10-dtd`): `encode`
    /// accepts them, and the file is read with `hatf dump`, but `decode` cannot give the text
    /// back and refuses. Kept apart from [`TraceFormat::encodings`], every one of which
    /// round-trips the text byte for byte.
    fn event_encodings(&self) -> &'static [&'static str] {
        &[]
    }
    /// True when `head` (the first bytes of the input, up to 64 KiB) looks like this format.
    fn detect(&self, head: &[u8]) -> bool;
    /// Reads the text trace and writes the binary file. (The input may be read on worker
    /// threads, hence `Send`.)
    fn encode(
        &self,
        input: &mut (dyn Read + Send),
        output: &mut dyn Write,
        options: &EncodeOptions,
    ) -> Result<EncodeReport, FormatError>;
    /// Reads a binary file written by [`TraceFormat::encode`] and writes the original text back.
    fn decode(
        &self,
        input: &mut dyn Read,
        output: &mut dyn Write,
        options: &DecodeOptions,
    ) -> Result<u64, FormatError>;
    /// Decodes only records `first..end` (counted from 0, `end` exclusive), reading only the
    /// blocks that hold them (see [`crate::seek`]); `note` hears when the index had to be
    /// rebuilt. `None` when the format cannot decode a range.
    fn decode_records(
        &self,
        _input: &mut dyn crate::seek::ReadSeek,
        _output: &mut dyn Write,
        _options: &DecodeOptions,
        _range: std::ops::Range<u64>,
        _note: crate::seek::Note<'_>,
    ) -> Option<Result<u64, FormatError>> {
        None
    }
    /// For formats whose encoder lists each block's threads in the index: a function that
    /// lists them again from the blocks, giving the lists the encoder gave. `hatf recover` uses
    /// it when the damaged file's index is lost. `None` when the format lists no threads, or not
    /// for the file whose header is `header`.
    fn thread_lister(
        &self,
        _header: &metatf::container::ContainerHeader,
        _file: &str,
    ) -> Option<ThreadLister> {
        None
    }
    /// Computes the statistics of a text trace; `None` when the format has none.
    fn stats(
        &self,
        _input: &mut dyn Read,
        _input_name: &str,
    ) -> Option<Result<StatsReport, FormatError>> {
        None
    }
    /// Checks a text trace for the problems the format defines, handing each to `report` as it
    /// is found; `None` when the format defines none.
    fn validate(
        &self,
        _input: &mut dyn Read,
        _input_name: &str,
        _report: ProblemSink<'_>,
    ) -> Option<Result<(), FormatError>> {
        None
    }
    /// The name files (file name, bytes) a binary file of this format stores in its first
    /// block, such as Elephant Tracks' class and method lists; empty for formats that store
    /// none.
    fn stored_names(
        &self,
        _first_block: &metatf::container::Block,
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        Ok(Vec::new())
    }
    /// [`TraceFormat::stats`], naming what the top tables count through `name_files` (file
    /// name, bytes) where the format has such files; the others ignore them.
    fn stats_named(
        &self,
        input: &mut dyn Read,
        input_name: &str,
        _name_files: &[(String, Vec<u8>)],
    ) -> Option<Result<StatsReport, FormatError>> {
        self.stats(input, input_name)
    }
}

/// Every problem [`TraceFormat::validate`] finds, gathered in a list (for tests and small
/// traces; the command prints them as they are found instead).
pub fn problems(
    format: &dyn TraceFormat,
    input: &mut dyn Read,
    input_name: &str,
) -> Option<Result<Vec<Problem>, FormatError>> {
    let mut found = Vec::new();
    let result = format.validate(input, input_name, &mut |p| found.push(p))?;
    Some(result.map(|()| found))
}

/// Reads a text trace and writes its binary file (see [`TraceFormat::encode`]).
pub type EncodeFn =
    fn(&mut (dyn Read + Send), &mut dyn Write, &EncodeOptions) -> Result<EncodeReport, FormatError>;
/// Reads a binary file and writes its text back (see [`TraceFormat::decode`]).
pub type DecodeFn = fn(&mut dyn Read, &mut dyn Write, &DecodeOptions) -> Result<u64, FormatError>;
/// Writes records `range` of a binary file (see [`TraceFormat::decode_records`]).
pub type DecodeRecordsFn = fn(
    &mut dyn crate::seek::ReadSeek,
    &mut dyn Write,
    &DecodeOptions,
    std::ops::Range<u64>,
    crate::seek::Note<'_>,
) -> Result<u64, FormatError>;
/// Gives a file's thread lister (see [`TraceFormat::thread_lister`]).
pub type ThreadListerFn = fn(&metatf::container::ContainerHeader, &str) -> Option<ThreadLister>;
