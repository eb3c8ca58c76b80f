//! `hatf decode`: binary trace → the original text.

use crate::args::DecodeArgs;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, open_input, Content};
use crate::Verbosity;

/// Runs `hatf decode`.
pub fn run(args: &DecodeArgs, _verbosity: Verbosity) -> CliResult {
    if args.records.is_some() {
        return Err(CliError::not_built("`hatf decode --records`"));
    }
    let _input = open_input(args.input.as_deref())?;
    let _output = create_output(args.out.output.as_deref(), args.out.force, Content::Text)?;
    Err(CliError::not_built("`hatf decode`"))
}
