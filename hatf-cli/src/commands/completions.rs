//! `hatf completions SHELL`: a completion script, generated from the command-line definitions.

use crate::args::{Cli, CompletionsArgs};
use crate::error::{CliError, CliResult};
use clap::CommandFactory;

/// Runs `hatf completions`.
pub fn run(args: &CompletionsArgs) -> CliResult {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "hatf", &mut script);
    let text = String::from_utf8(script)
        .map_err(|e| CliError::input(format!("the completion script is not UTF-8: {e}")))?;
    crate::data_stdout::print(&text)
}
