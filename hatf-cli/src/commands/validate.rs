//! `hatf validate`: the checks a trace's format defines, each problem with its line.

use crate::args::ValidateArgs;
use crate::error::{CliError, CliResult};
use crate::text_input::analyse;
use crate::Verbosity;

/// At most this many problems are printed; the total is always given.
const SHOWN_PROBLEMS: usize = 100;

/// Runs `hatf validate`.
pub fn run(args: &ValidateArgs, verbosity: Verbosity) -> CliResult {
    let analysed = analyse(
        args.input.as_deref(),
        &args.from,
        verbosity,
        "validate",
        |format, text, name| format.validate(text, name),
    )?;
    let (problems, name, format) = (analysed.result, analysed.name, analysed.format);
    for problem in problems.iter().take(SHOWN_PROBLEMS) {
        eprintln!("{name}:{}: {}", problem.line, problem.message);
    }
    if problems.len() > SHOWN_PROBLEMS {
        eprintln!("... and {} more", problems.len() - SHOWN_PROBLEMS);
    }
    if problems.is_empty() {
        if !verbosity.quiet {
            crate::data_stdout::print(&format!("{name}: valid `{}` trace\n", format.name()))?;
        }
        Ok(())
    } else {
        Err(CliError::input(format!(
            "{name}: {} problems found",
            problems.len()
        )))
    }
}
