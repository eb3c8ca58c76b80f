//! `hatf validate`.

use crate::args::ValidateArgs;
use crate::error::{CliError, CliResult};
use crate::Verbosity;

/// Runs `hatf validate`.
pub fn run(_args: &ValidateArgs, _verbosity: Verbosity) -> CliResult {
    Err(CliError::not_built("`hatf validate`"))
}
