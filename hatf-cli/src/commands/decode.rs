//! `hatf decode`: binary trace → the original text.

use crate::args::DecodeArgs;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, open_input, Content, BINARY_READ_AHEAD};
use crate::peek::container_header;
use crate::progress;
use crate::record_range;
use crate::runtime_error::from_runtime;
use crate::thread_choice;
use crate::Verbosity;
use hatf::format::{self, DecodeOptions};

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
    let mut output = create_output(args.out.output.as_deref(), args.out.force, Content::Text)?;
    let input = progress::track(
        open_input(args.input.as_deref(), BINARY_READ_AHEAD)?,
        verbosity,
        "decoding",
    );
    let input_len = input.len;
    let (header, mut whole) = container_header(input.reader, &input.name)?;
    let stored = header.format.as_str();
    if let Some(to) = &args.to {
        if to != stored {
            return Err(CliError::usage(format!(
                "{}: holds a `{stored}` trace; converting it to `{to}` is not supported (decode gives back the original `{stored}` text)",
                input.name
            )));
        }
    }
    if stored.is_empty() && range.is_none() {
        // Records encoded from the text form (`encode --from text`): printed back as record
        // lines through the DTD the file carries.
        let records = metatf::print_records(&mut whole, output.writer())
            .map_err(|e| from_runtime(&input.name, e))?;
        output.commit()?;
        if verbosity.verbose {
            eprintln!("hatf: {records} records decoded");
        }
        return Ok(());
    }
    let chosen = format::by_name(stored).ok_or_else(|| {
        CliError::input(format!(
            "{}: holds records of format `{stored}`, which this hatf cannot turn back into text; `hatf dump` prints them through the DTD the file carries",
            input.name
        ))
    })?;
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
        return decode_range(args, &options, chosen, first, end, verbosity, output);
    }
    let records = chosen.decode(&mut whole, output.writer(), &options)?;
    output.commit()?;
    if verbosity.verbose {
        eprintln!("hatf: {records} records decoded");
    }
    Ok(())
}

/// `--records A..B`: seeks to the blocks holding the range, for every format whose blocks
/// can be found through the index. The same rules for every format: an empty range writes
/// nothing (and says so); a range that starts at or after the end of the trace is an error; one
/// that runs past the end is cut there, and the user told.
fn decode_range(
    args: &DecodeArgs,
    options: &DecodeOptions,
    chosen: &dyn hatf::TraceFormat,
    first: u64,
    end: u64,
    verbosity: Verbosity,
    mut output: crate::io::Output,
) -> CliResult {
    let path = match args.input.as_deref() {
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
    let file = std::fs::File::open(path)
        .map_err(|e| CliError::input(format!("{}: cannot open: {e}", path.display())))?;
    let mut input = std::io::BufReader::new(file);
    let written = chosen
        .decode_records(&mut input, output.writer(), options, first..end, &mut note)
        .ok_or_else(|| {
            CliError::not_built(&format!(
                "`hatf decode --records` for format `{}`",
                chosen.name()
            ))
        })??;
    if written == 0 {
        // Nothing is committed, so no output file is left behind.
        return Err(CliError::input(format!(
            "{}: --records {shown}: the trace has no record {first}: it holds at most {first} \
             records (counted from 0)",
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
