//! `hatf inspect`.

use crate::args::InspectArgs;
use crate::error::{CliError, CliResult};
use crate::Verbosity;

/// Runs `hatf inspect`.
pub fn run(_args: &InspectArgs, _verbosity: Verbosity) -> CliResult {
    Err(CliError::not_built("`hatf inspect`"))
}
