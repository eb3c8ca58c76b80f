//! `hatf decode`: binary trace → the original text.

use crate::args::DecodeArgs;
use crate::batch;
use crate::error::{CliError, CliResult};
use crate::io::{create_output_for, open_input, Content, BINARY_READ_AHEAD};
use crate::output_name;
use crate::peek::container_header;
use crate::progress;
use crate::record_range;
use crate::runtime_error::from_runtime;
use crate::summary;
use crate::thread_choice;
use crate::Verbosity;
use hatf::format::DecodeOptions;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

/// Formats whose original is a binary file (a gzip stream, a zip), refused on a terminal before
/// any work. Any other decode whose first bytes turn out binary is refused when it starts to
/// write (see [`Content::Decoded`]).
const BINARY_ORIGINALS: [&str; 3] = ["malloc-bench", "memory-replay-zip", "jvm-zip"];

/// Runs `hatf decode`.
pub fn run(args: &DecodeArgs, verbosity: Verbosity) -> CliResult {
    let range = args
        .records
        .as_deref()
        .map(record_range::parse)
        .transpose()?;
    if args.threads == Some(0) {
        return Err(CliError::usage("--threads must be at least 1"));
    }
    batch::for_each_input(&args.inputs, &args.out, |path, several| {
        decode_one(args, range, path, several, verbosity)
    })
}

/// Decodes one input (a file, or standard input when `path` is `None` or `-`).
fn decode_one(
    args: &DecodeArgs,
    range: Option<(u64, u64)>,
    path: Option<&Path>,
    several: bool,
    verbosity: Verbosity,
) -> CliResult {
    let started = Instant::now();
    let input = crate::compressed::unwrap_binary(open_input(path, BINARY_READ_AHEAD)?)?;
    let out_path = batch::destination(&args.out, path, several, output_name::decoded)?;
    let mut output = create_output_for(
        out_path.as_deref(),
        args.out.force,
        Content::Decoded,
        input.identity,
        &input.name,
    )?;
    // No bar on the terminal the text itself goes to (the output there is checked for binary
    // data before anything is written, so that is how a terminal output is known).
    let input = if output.refuses_binary() {
        input
    } else {
        progress::track(input, verbosity, "decoding")
    };
    let input_len = input.len;
    let (header, whole) = container_header(input.reader, &input.name)?;
    let mut whole = CountingReader::new(whole);
    let stored = header.format.as_str();
    if let Some(to) = &args.to {
        if to != stored {
            return Err(CliError::usage(format!(
                "{}: holds a `{stored}` trace; converting it to `{to}` is not supported (decode gives back the original `{stored}` text)",
                input.name
            )));
        }
    }
    let by_lines = stored == metatf::lines::LINES_FORMAT;
    if (stored.is_empty() || by_lines) && range.is_none() {
        // Records encoded from the text form (`encode --from text`): printed back as record
        // lines through the DTD the file carries. A text encoded by line patterns
        // (`encode --dtd`): its lines, byte for byte, through the same embedded DTD.
        let records = if by_lines {
            metatf::lines::decode_lines(&mut whole, output.writer())
        } else {
            metatf::print_records(&mut whole, output.writer())
        }
        .map_err(|e| from_runtime(&input.name, e))?;
        let read = whole.count();
        drop(whole);
        let output_name = output.name.clone();
        let written = output.commit_counted()?;
        if verbosity.verbose {
            eprintln!("hatf: {records} records decoded");
        }
        summary::print(
            verbosity,
            &input.name,
            input_len.unwrap_or(read),
            written,
            &output_name,
            started.elapsed(),
        );
        return Ok(());
    }
    let chosen = hatf::by_name(stored).ok_or_else(|| {
        CliError::input(format!(
            "{}: holds records of format `{stored}`, which this hatf cannot turn back into text; `hatf dump` prints them through the DTD the file carries",
            input.name
        ))
    })?;
    if output.refuses_binary() && BINARY_ORIGINALS.contains(&stored) {
        return Err(crate::io::Output::binary_refused());
    }
    if verbosity.verbose {
        eprintln!(
            "hatf: {}: format `{stored}` ({})",
            input.name,
            chosen.description()
        );
    }
    let options = DecodeOptions {
        input_name: input.name.clone(),
        names_dir: args.names.clone(),
        threads: thread_choice::threads_for(
            args.threads,
            input_len,
            thread_choice::DECODE_ONE_THREAD_BELOW,
            thread_choice::all_cores,
        ),
        // Only a whole decode writes at offsets (a range's text starts at the file's start).
        positioned: range.is_none().then(|| output.positioned_file()).flatten(),
    };
    if let Some((first, end)) = range {
        return decode_range(path, &options, chosen, first, end, verbosity, output);
    }
    let records = chosen
        .decode(&mut whole, output.writer(), &options)
        .map_err(|e| output.blame(e))?;
    let read = whole.count();
    drop(whole);
    let output_name = output.name.clone();
    let written = output.commit_counted()?;
    if verbosity.verbose {
        eprintln!("hatf: {records} records decoded");
    }
    summary::print(
        verbosity,
        &input.name,
        input_len.unwrap_or(read),
        written,
        &output_name,
        started.elapsed(),
    );
    Ok(())
}

/// Counts the bytes read through it (for the summary of a decode from a pipe).
struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R> CountingReader<R> {
    fn new(inner: R) -> Self {
        CountingReader { inner, count: 0 }
    }

    fn count(&self) -> u64 {
        self.count
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// `--records A..B`: seeks to the blocks holding the range, for every format whose blocks
/// can be found through the index. The same rules for every format: an empty range writes
/// nothing (and says so); a range that starts at or after the end of the trace is an error; one
/// that runs past the end is cut there, and the user told.
fn decode_range(
    path: Option<&Path>,
    options: &DecodeOptions,
    chosen: &dyn hatf::TraceFormat,
    first: u64,
    end: u64,
    verbosity: Verbosity,
    mut output: crate::io::Output,
) -> CliResult {
    let path = match path {
        Some(p) if p.as_os_str() != "-" => p,
        _ => {
            return Err(CliError::usage(
                "--records needs an input file it can seek in, not standard input",
            ))
        }
    };
    let shown = record_range::show(first, end);
    let mut note = |message: &str| {
        if !verbosity.quiet {
            eprintln!("hatf: {}: {message}", options.input_name);
        }
    };
    if first == end {
        note(&format!("--records {shown} is empty: nothing decoded"));
        output.commit()?;
        return Ok(());
    }
    let mut input = super::dump::open_seekable(path)?;
    let written = chosen
        .decode_records(&mut input, output.writer(), options, first..end, &mut note)
        .ok_or_else(|| {
            CliError::not_built(&format!(
                "`hatf decode --records` for format `{}`",
                chosen.name()
            ))
        })?
        .map_err(|e| output.blame(e))?;
    if written == 0 {
        // Nothing is committed, so no output file is left behind.
        let holds = match record_count(path) {
            Some(count) => format!("it holds {count} records (counted from 0)"),
            None => format!("it holds at most {first} records (counted from 0)"),
        };
        return Err(CliError::input(format!(
            "{}: --records {shown}: the trace has no record {first}: {holds}",
            options.input_name
        )));
    }
    if end != u64::MAX && written < end - first {
        note(&format!(
            "--records {shown}: the trace holds {} records, so records {first}..{} were decoded",
            first + written,
            first + written
        ));
    }
    output.commit()?;
    if verbosity.verbose {
        eprintln!("hatf: {written} records decoded");
    }
    Ok(())
}

/// How many records the trace at `path` holds, from its index, when the index is intact.
fn record_count(path: &Path) -> Option<u64> {
    let file = std::fs::File::open(path).ok()?;
    match metatf::container::load_index(std::io::BufReader::new(file)) {
        Ok((entries, None)) => Some(entries.iter().map(|e| e.record_count).sum()),
        _ => None,
    }
}
