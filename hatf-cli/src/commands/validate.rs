//! `hatf validate`: the checks a trace's format defines, each problem with its line.

use crate::args::ValidateArgs;
use crate::error::{CliError, CliResult};
use crate::io::{open_input, TEXT_READ_AHEAD};
use crate::progress;
use crate::text_input::{finish, open_text_trace};
use crate::Verbosity;

/// At most this many problems are printed; the total is always given.
const SHOWN_PROBLEMS: usize = 100;

/// Runs `hatf validate`.
pub fn run(args: &ValidateArgs, verbosity: Verbosity) -> CliResult {
    let input = progress::track(
        open_input(args.input.as_deref(), TEXT_READ_AHEAD)?,
        verbosity,
        "reading",
    );
    let name = input.name.clone();
    let mut trace = open_text_trace(input, &args.from)?;
    let problems = trace
        .format
        .validate(&mut trace.reader, &name)
        .ok_or_else(|| {
            CliError::not_built(&format!(
                "`hatf validate` for `{}` traces",
                trace.format.name()
            ))
        })?;
    let problems = problems?;
    drop(trace.reader);
    finish(trace.decoder)?;
    for problem in problems.iter().take(SHOWN_PROBLEMS) {
        eprintln!("{name}:{}: {}", problem.line, problem.message);
    }
    if problems.len() > SHOWN_PROBLEMS {
        eprintln!("... and {} more", problems.len() - SHOWN_PROBLEMS);
    }
    if problems.is_empty() {
        if !verbosity.quiet {
            crate::data_stdout::print(&format!("{name}: valid `{}` trace\n", trace.format.name()))?;
        }
        Ok(())
    } else {
        Err(CliError::input(format!(
            "{name}: {} problems found",
            problems.len()
        )))
    }
}
