//! The command line, as clap derive definitions. Validation and execution live elsewhere.

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Compact, lossless, self-describing binary traces of program execution.
#[derive(Debug, Parser)]
#[command(
    name = "hatf",
    version,
    about = "Compact, lossless, self-describing binary traces of heap allocation and program execution",
    long_about = None,
    after_help = "Examples:\n  hatf encode perl.mtrace                       convert a glibc mtrace log to perl.mtrace.hatf\n  hatf decode perl.mtrace.hatf                  get the exact text back in perl.mtrace\n  hatf inspect perl.hatf                        header, sections, sizes\n  hatf compare                                  compare encodings on the built-in sample\n\nAn absent INPUT or '-' means standard input. See `hatf encode --help` for where output goes.\nShell completions: `hatf completions bash`; manual page: `hatf man`."
)]
pub struct Cli {
    /// Print only errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Say more about what is happening (detected format, sizes).
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Every subcommand of `hatf`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Convert a text trace into a compact binary trace.
    #[command(
        after_help = "Examples:\n  hatf encode trace.mtrace -o trace.hatf\n  hatf encode *.mtrace                        each to its own .hatf file\n  hatf encode trace.bz2                       the bzip2-compressed text, to trace.hatf\n  hatf encode --from et2 --names data/ trace.txt -o trace.hatf\n  zcat t.mtrace.gz | hatf encode -o t.hatf\n  hatf encode --from text --dtd my.dtd records.txt -o my.hatf\n  hatf encode --dtd my-lines.dtd trace.txt -o trace.hatf     the trace's own lines\n  hatf encode --from any trace.txt -o trace.hatf              line patterns inferred"
    )]
    Encode(EncodeArgs),
    /// Convert a binary trace back into its original text, byte for byte.
    #[command(
        after_help = "Examples:\n  hatf decode trace.hatf -o trace.mtrace\n  hatf decode a.mtrace.hatf b.mtrace.hatf      to a.mtrace and b.mtrace\n  hatf decode -c a.hatf b.hatf > both.txt\n  hatf decode trace.hatf | less\n  hatf decode trace.hatf --records 1000..2000"
    )]
    Decode(DecodeArgs),
    /// Show a binary trace's header, sections and streams with their sizes and record counts.
    #[command(
        after_help = "Examples:\n  hatf inspect trace.hatf\n  hatf inspect trace.hatf --json\n  hatf inspect trace.hatf --dtd > embedded.dtd"
    )]
    Inspect(InspectArgs),
    /// Print every record of any binary trace as text, using the DTD it carries.
    #[command(
        after_help = "Examples:\n  hatf dump trace.hatf | head\n  hatf dump trace.hatf --json | jq .\n  hatf dump t.hatf > t.txt && hatf encode --from text --dtd t.dtd t.txt -o t2.hatf"
    )]
    Dump(DumpArgs),
    /// Write the records of any trace as a table for query engines (Parquet, Arrow IPC, CSV).
    #[command(
        after_help = "Examples:\n  hatf export trace.hatf --to parquet -o trace.parquet\n  hatf export perl.mtrace --to parquet -o perl.parquet   a text trace, encoded on the way\n  hatf export trace.hatf --to csv --records 0..1000 -o head.csv\n  duckdb -c \"select record, count(*) from 'trace.parquet' group by all\""
    )]
    Export(ExportArgs),
    /// Count records by kind, bytes allocated, lifetimes and calls, per thread.
    #[command(after_help = "Examples:\n  hatf stats trace.mtrace\n  hatf stats trace.hatf --json")]
    Stats(StatsArgs),
    /// Check a trace for the problems its format defines (unbalanced calls, double frees, ...).
    #[command(after_help = "Examples:\n  hatf validate trace.et2\n  hatf validate trace.hatf")]
    Validate(ValidateArgs),
    /// Compare the format-specific layout, the generic engine, the paper's encodings and gzip,
    /// zstd and xz on a trace (the paper's Table 4, extended).
    #[command(
        long_about = "Compare sizes (and times) of every way hatf can store a trace, side by side, \
per trace, as bytes per record:\n\n\
  simple .. hatf-splitaddr   the paper's encodings (allocation traces only), each as \
uncompressed / gzip -9 / zstd -19 on each of its streams\n\
  hatf auto        the format-specific layout: `hatf encode` with default settings\n\
  generic plain    the generic engine on the trace's records with the format's record DTD \
(dtds/records/, or --dtd): `hatf encode --from text --dtd X --model plain`, the paper's \
fixed-width records with zstd -3 per section\n\
  generic auto     the same with `--model auto`: predictors chosen per block by measured cost, \
adaptive range coding\n\
  auto ÷ hatf      generic auto over hatf auto on the same records: the gap between a DTD \
alone and the format-specific models\n\
  text gzip-9, text zstd-19-long27, text xz-9   general compressors on the trace's text; \
text best = the smallest of the three\n\n\
Every column is encoded, decoded again and checked equal to its input (the text byte for \
byte, or the same records). Lines the format does not parse are kept verbatim (`hatf encode \
--keep-bad-lines`) unless --strict. The generic engine gets a trace's first --generic-lines lines \
(1,000,000 unless told), as its auto model writes about 50,000 records a second; a note under \
the table says what it had, and its hatf auto size on those lines.",
        after_help = "Examples:\n  hatf compare                                 the built-in sample trace\n  hatf compare a.mtrace b.zip --csv\n  hatf compare trace.bz2 --from et2             an Elephant Tracks trace\n  hatf compare --dtd my.dtd records.txt         the record text form (or a trace's own lines, with line patterns)\n  hatf compare a.mtrace --plot sizes.svg"
    )]
    Compare(CompareArgs),
    /// Check every checksum and the index of a binary trace.
    #[command(after_help = "Examples:\n  hatf verify trace.hatf")]
    Verify(VerifyArgs),
    /// Write a valid file from the intact blocks of a damaged or truncated binary trace.
    #[command(after_help = "Examples:\n  hatf recover broken.hatf -o repaired.hatf")]
    Recover(RecoverArgs),
    /// Work with Meta-TF DTD files.
    #[command(subcommand)]
    Dtd(DtdCommand),
    /// Print a completion script for a shell.
    #[command(
        after_help = "Examples:\n  hatf completions bash > ~/.local/share/bash-completion/completions/hatf\n  hatf completions zsh > ~/.zfunc/_hatf\n  hatf completions fish > ~/.config/fish/completions/hatf.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the manual page (roff), for `man`.
    #[command(after_help = "Examples:\n  hatf man > hatf.1 && man ./hatf.1")]
    Man(ManArgs),
}

/// `hatf completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `hatf man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per subcommand (hatf.1, hatf-encode.1, ...) into this folder instead of
    /// printing the main page.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// What `--from` accepts: `auto`, every format this build knows, and `text`.
fn from_values() -> PossibleValuesParser {
    let mut values =
        vec![PossibleValue::new("auto").help("detect the format from the first bytes")];
    values.extend(
        hatf::registry()
            .into_iter()
            .map(|f| PossibleValue::new(f.name()).help(f.description())),
    );
    values.push(PossibleValue::new("text").help("`hatf dump` output, with --dtd"));
    values.push(PossibleValue::new("lines").help(
        "any line-based text, spelled by the line patterns of --dtd (the default with --dtd)",
    ));
    values.push(
        PossibleValue::new("any")
            .help("any line-based text: line patterns inferred from its first lines and stored"),
    );
    PossibleValuesParser::new(values)
}

/// What `--encoding` accepts: `auto` and every encoding some format offers (whether the input's
/// format offers it is checked once the format is known).
fn encoding_values() -> PossibleValuesParser {
    let mut names: Vec<&'static str> = vec!["auto"];
    for format in hatf::registry() {
        for name in format.encodings().iter().chain(format.event_encodings()) {
            if !names.contains(name) {
                names.push(name);
            }
        }
    }
    PossibleValuesParser::new(names)
}

/// Where section data is compressed, per section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompressArg {
    /// Store sections uncompressed.
    None,
    /// DEFLATE (gzip).
    Gzip,
    /// Zstandard.
    Zstd,
}

impl CompressArg {
    /// `--compress`'s default: the codec DTD-driven traces are written with
    /// ([`metatf::DEFAULT_CODEC`]); the context mixers are not a `--compress` choice.
    pub const DEFAULT: CompressArg = match metatf::DEFAULT_CODEC {
        metatf::Codec::None => CompressArg::None,
        metatf::Codec::Gzip => CompressArg::Gzip,
        _ => CompressArg::Zstd,
    };

    /// The container codec of this choice.
    pub fn codec(self) -> metatf::Codec {
        match self {
            CompressArg::None => metatf::Codec::None,
            CompressArg::Gzip => metatf::Codec::Gzip,
            CompressArg::Zstd => metatf::Codec::Zstd,
        }
    }
}

/// Options common to commands that write a file.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output file; absent or '-' means standard output.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: Option<PathBuf>,
    /// Overwrite OUTPUT if it exists.
    #[arg(short, long)]
    pub force: bool,
}

/// Where `encode` and `decode` write each input's output.
#[derive(Debug, Args)]
pub struct Destination {
    /// Output file, for one input; '-' means standard output. Without it: standard output when
    /// the input is standard input, or --stdout is given, or standard output is redirected or
    /// piped and there is one input; otherwise a file named after the input.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: Option<PathBuf>,
    /// Overwrite existing output files.
    #[arg(short, long)]
    pub force: bool,
    /// Write to standard output (decoded texts of several inputs one after the other).
    #[arg(short = 'c', long = "stdout", conflicts_with = "output")]
    pub stdout: bool,
}

/// `hatf encode`.
#[derive(Debug, Args)]
pub struct EncodeArgs {
    /// Text traces to read, plain or compressed with gzip, bzip2, xz or zstd (recognised by
    /// their first bytes); none or '-' means standard input. Each FILE is written to FILE.hatf
    /// (a compressed `trace.bz2` to `trace.hatf`, as its text is what is kept).
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub out: Destination,
    /// Input format (`auto` detects it; `text` reads `hatf dump` output with --dtd).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = from_values())]
    pub from: String,
    /// DTD describing the records: with line patterns (`line = ...;`) it reads the trace's own
    /// text; with `--from text`, `hatf dump`'s record text form.
    #[arg(long, value_name = "FILE")]
    pub dtd: Option<PathBuf>,
    /// With line patterns: refuse the first line no pattern spells exactly (FILE:LINE:COLUMN and
    /// what was expected) instead of keeping it verbatim.
    #[arg(long)]
    pub strict: bool,
    /// Record layout for `--from text`, `--dtd` and `--from any`: `auto` (predictors chosen
    /// per block by measured cost, adaptive range coding), `fast` (the same predictors, their
    /// symbols in zstd-compressed byte streams: a little larger, decodes several times
    /// faster) or `plain` (fixed-width fields, each section compressed).
    #[arg(long, value_name = "MODEL", default_value = "auto", value_parser = ["auto", "fast", "plain"])]
    pub model: String,
    /// Encoding to use; `auto` picks the smallest the format offers (each format offers only
    /// some of these; the error for one it lacks lists its own).
    #[arg(long, value_name = "ENC", default_value = "auto", value_parser = encoding_values())]
    pub encoding: String,
    /// Compression of each section.
    #[arg(long, value_enum, default_value_t = CompressArg::DEFAULT)]
    pub compress: CompressArg,
    /// Compression level (codec-specific; default chosen per codec). zstd's default is 19,
    /// except that mtrace and memory_replay traces get level 3, tens of times faster for
    /// files about a fifth larger; `--level 19` gives the smallest.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub level: Option<i32>,
    /// Worker threads (default: all cores, one for a text file under 16 MiB); the output is
    /// the same.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Store lines that do not parse verbatim (they come back on decode) instead of failing.
    #[arg(long)]
    pub keep_bad_lines: bool,
    /// Folder with name files (classes/methods/fields lists) to store inside the binary file.
    #[arg(long, value_name = "DIR")]
    pub names: Option<PathBuf>,
}

/// `hatf decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// Binary traces to read; none or '-' means standard input. Each FILE.hatf is written to
    /// FILE. The text is given back exactly as it was encoded; a trace encoded from a
    /// compressed text (`trace.bz2`) gives back the decompressed text, which is what it keeps.
    /// A format whose original is itself a compressed file (a malloc-bench `.trace.gz`, a
    /// memory_replay `.zip`) gives back that file byte for byte, and is not written to a
    /// terminal.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub out: Destination,
    /// Text format to write (default: the format the file was encoded from).
    #[arg(long, value_name = "FORMAT")]
    pub to: Option<String>,
    /// Only records A..B (counted from 0, B exclusive; either end may be left out).
    #[arg(long, value_name = "A..B")]
    pub records: Option<String>,
    /// Threads decompressing blocks (default: all cores, one for a file under 16 KiB); the
    /// output is the same.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Folder to write the stored name files into.
    #[arg(long, value_name = "DIR")]
    pub names: Option<PathBuf>,
}

/// `hatf inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Binary trace to inspect.
    pub file: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long, conflicts_with = "dtd")]
    pub json: bool,
    /// Print the embedded DTD verbatim.
    #[arg(long)]
    pub dtd: bool,
}

/// `hatf dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// Binary trace to dump.
    pub file: PathBuf,
    /// One JSON object per record (`{"record":"free","index":7,"address":...}`) instead of
    /// the text form.
    #[arg(long)]
    pub json: bool,
    /// Only records A..B (counted from 0, B exclusive; A.. or ..B leave an end open), reading
    /// only the blocks that hold them.
    #[arg(long, value_name = "A..B")]
    pub records: Option<String>,
}

/// What `hatf export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    /// Apache Parquet: typed columns, a row group per block, compressed.
    Parquet,
    /// Arrow IPC file (Feather 2).
    Arrow,
    /// Comma-separated values with a header line.
    Csv,
}

/// `hatf export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Binary trace, or a text trace of a built-in format (encoded on the way).
    pub file: PathBuf,
    /// Table format to write.
    #[arg(long, value_name = "FORMAT", default_value = "parquet")]
    pub to: TableFormat,
    /// Output file (written whole or not at all).
    #[command(flatten)]
    pub out: OutputArgs,
    /// Input format when FILE is text (`auto` detects it).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = from_values())]
    pub from: String,
    /// Only records A..B (counted from 0, B exclusive; A.. or ..B leave an end open).
    #[arg(long, value_name = "A..B")]
    pub records: Option<String>,
}

/// `hatf stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Text or binary trace (text may be gzip, bzip2, xz or zstd compressed); absent or '-'
    /// means standard input.
    pub input: Option<PathBuf>,
    /// Input format when INPUT is text (`auto` detects it).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = from_values())]
    pub from: String,
    /// Print JSON (one schema for every format; see the README).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the live set over time as CSV (time, live objects, live bytes).
    #[arg(long)]
    pub csv: bool,
    /// Also draw the live set over time to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    /// Folder with name files (classes/methods lists) naming the methods and classes of a text
    /// Elephant Tracks trace; a binary trace uses the name files stored in it.
    #[arg(long, value_name = "DIR")]
    pub names: Option<PathBuf>,
}

/// `hatf validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Text or binary trace (text may be gzip, bzip2, xz or zstd compressed); absent or '-'
    /// means standard input.
    pub input: Option<PathBuf>,
    /// Input format when INPUT is text (`auto` detects it).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = from_values())]
    pub from: String,
    /// Print one JSON object: `file`, `format`, `problems` (each with `line` or `record`,
    /// `kind` and `message`), `count` and `by_kind`.
    #[arg(long)]
    pub json: bool,
}

/// `hatf compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Traces to compare (text may be gzip, bzip2, xz or zstd compressed; '-' is standard
    /// input); none means the sample trace built into hatf.
    pub inputs: Vec<PathBuf>,
    /// Print CSV.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Also draw a grouped bar chart to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Input format (`auto` detects it).
    #[arg(long, value_name = "FORMAT", default_value = "auto", value_parser = from_values(), conflicts_with = "dtd")]
    pub from: String,
    /// DTD of the inputs' records: each input is the record text form (`hatf dump` output),
    /// or, when the DTD has line patterns and its records do not read it, the trace's own
    /// lines. Only the generic engine and the text peers apply.
    #[arg(long, value_name = "FILE")]
    pub dtd: Option<PathBuf>,
    /// Lines of each trace the generic engine gets (at least 1; a trace with fewer is taken
    /// whole). The generic engine holds their records in memory.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1_000_000,
        conflicts_with = "no_generic"
    )]
    pub generic_lines: u64,
    /// Leave the generic engine out.
    #[arg(long)]
    pub no_generic: bool,
    /// Fail on a line the format does not parse, as `hatf encode` does (by default compare
    /// keeps such lines verbatim, as `hatf encode --keep-bad-lines`).
    #[arg(long)]
    pub strict: bool,
}

/// `hatf verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Binary trace to check.
    pub file: PathBuf,
}

/// `hatf recover`.
#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// Damaged binary trace.
    pub file: PathBuf,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `hatf dtd ...`.
#[derive(Debug, Subcommand)]
pub enum DtdCommand {
    /// Validate DTD files and print every error found.
    #[command(after_help = "Examples:\n  hatf dtd check dtds/*.dtd")]
    Check {
        /// DTD files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Write a DTD with line patterns for the frequent line shapes of a text trace (read from
    /// its first 4 MiB); edit its names, then `hatf encode --dtd my.dtd trace.txt`.
    #[command(
        after_help = "Examples:\n  hatf dtd infer trace.txt > my.dtd\n  hatf encode --dtd my.dtd trace.txt -o trace.hatf"
    )]
    Infer {
        /// Text trace to learn from; none or '-' means standard input.
        file: Option<PathBuf>,
    },
    /// Print a DTD in canonical form.
    #[command(after_help = "Examples:\n  hatf dtd fmt my.dtd > my.formatted.dtd")]
    Fmt {
        /// DTD file to format.
        file: PathBuf,
    },
    /// Generate Rust types and codecs from a DTD.
    #[command(after_help = "Examples:\n  hatf dtd compile dtds/hatf10.dtd -o src/hatf10.rs")]
    Compile {
        /// DTD file to compile.
        file: PathBuf,
        #[command(flatten)]
        out: OutputArgs,
    },
}
