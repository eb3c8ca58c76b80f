//! `hatf compare`.

use crate::args::CompareArgs;
use crate::error::{CliError, CliResult};
use crate::Verbosity;

/// Runs `hatf compare`.
pub fn run(_args: &CompareArgs, _verbosity: Verbosity) -> CliResult {
    Err(CliError::not_built("`hatf compare`"))
}
