//! `hatf dtd check|fmt|compile`.

use crate::args::DtdCommand;
use crate::error::{CliError, CliResult};
use crate::Verbosity;

/// Runs `hatf dtd ...`.
pub fn run(command: &DtdCommand, _verbosity: Verbosity) -> CliResult {
    match command {
        DtdCommand::Check { .. } => Err(CliError::not_built("`hatf dtd check`")),
        DtdCommand::Fmt { .. } => Err(CliError::not_built("`hatf dtd fmt`")),
        DtdCommand::Compile { .. } => Err(CliError::not_built("`hatf dtd compile`")),
    }
}
