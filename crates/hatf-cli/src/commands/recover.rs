//! `hatf recover`.

use crate::args::RecoverArgs;
use crate::error::{CliError, CliResult};
use crate::Verbosity;

/// Runs `hatf recover`.
pub fn run(_args: &RecoverArgs, _verbosity: Verbosity) -> CliResult {
    Err(CliError::not_built("`hatf recover`"))
}
