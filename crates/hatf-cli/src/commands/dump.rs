//! `hatf dump`.

use crate::args::DumpArgs;
use crate::error::{CliError, CliResult};
use crate::Verbosity;

/// Runs `hatf dump`.
pub fn run(_args: &DumpArgs, _verbosity: Verbosity) -> CliResult {
    Err(CliError::not_built("`hatf dump`"))
}
