//! `hatf decode`: binary trace → the original text.

use crate::args::DecodeArgs;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, open_input, Content};
use crate::peek::container_header;
use crate::Verbosity;
use hatf::format::{self, DecodeOptions};

/// Runs `hatf decode`.
pub fn run(args: &DecodeArgs, verbosity: Verbosity) -> CliResult {
    if args.records.is_some() {
        return Err(CliError::not_built("`hatf decode --records`"));
    }
    let mut output = create_output(args.out.output.as_deref(), args.out.force, Content::Text)?;
    let input = open_input(args.input.as_deref())?;
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
    };
    let records = chosen.decode(&mut whole, output.writer(), &options)?;
    output.commit()?;
    if verbosity.verbose {
        eprintln!("hatf: {records} records decoded");
    }
    Ok(())
}
