//! `hatf verify`.

use crate::args::VerifyArgs;
use crate::error::{CliError, CliResult};
use crate::Verbosity;

/// Runs `hatf verify`.
pub fn run(_args: &VerifyArgs, _verbosity: Verbosity) -> CliResult {
    Err(CliError::not_built("`hatf verify`"))
}
