//! `hatf dump`: every record as text, through the DTD the file carries.

use crate::args::DumpArgs;
use crate::error::CliResult;
use crate::io::{create_output, open_input, Content, BINARY_READ_AHEAD};
use crate::runtime_error::from_runtime;
use crate::Verbosity;

/// Runs `hatf dump`.
pub fn run(args: &DumpArgs, verbosity: Verbosity) -> CliResult {
    let input = open_input(Some(&args.file), BINARY_READ_AHEAD)?;
    let mut out = create_output(None, false, Content::Text)?;
    let records = metatf::dump(input.reader, out.writer(), args.json)
        .map_err(|e| from_runtime(&input.name, e))?;
    out.commit()?;
    if verbosity.verbose {
        eprintln!("hatf: {records} records");
    }
    Ok(())
}
