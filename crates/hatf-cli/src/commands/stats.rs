//! `hatf stats`.

use crate::args::StatsArgs;
use crate::error::{CliError, CliResult};
use crate::Verbosity;

/// Runs `hatf stats`.
pub fn run(_args: &StatsArgs, _verbosity: Verbosity) -> CliResult {
    Err(CliError::not_built("`hatf stats`"))
}
