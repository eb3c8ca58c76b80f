//! Commands that take several inputs (`encode`, `decode`): where each input's output goes, and
//! running every input even when one fails.

use crate::args::Destination;
use crate::data_stdout::data_stdout;
use crate::error::{CliError, CliResult, Failure};
use crate::io::is_std;
use std::path::{Path, PathBuf};

/// Where the output of `input` goes: `None` for standard output, else a file. `named` gives
/// the file named after the input.
///
/// `-o` wins, then `--stdout`; standard input goes to standard output; one input goes to
/// standard output when that is redirected or piped (so `hatf decode t.hatf | less` works);
/// otherwise (several inputs, or standard output is a terminal) each goes to its named file.
pub fn destination(
    dest: &Destination,
    input: Option<&Path>,
    several: bool,
    named: impl FnOnce(&Path) -> CliResult<PathBuf>,
) -> CliResult<Option<PathBuf>> {
    if let Some(out) = &dest.output {
        return Ok((!is_std(Some(out))).then(|| out.clone()));
    }
    let file = match input {
        Some(p) if !dest.stdout && !is_std(Some(p)) => p,
        _ => return Ok(None),
    };
    if !several && !data_stdout().is_terminal() {
        return Ok(None);
    }
    named(file).map(Some)
}

/// Runs `one` on every input (standard input when there is none), telling it whether there are
/// several. A failed input is reported and the others still run; the command then fails.
pub fn for_each_input(
    inputs: &[PathBuf],
    dest: &Destination,
    mut one: impl FnMut(Option<&Path>, bool) -> CliResult,
) -> CliResult {
    match inputs {
        [] => return one(None, false),
        [only] => return one(Some(only), false),
        _ => {}
    }
    if dest.output.is_some() {
        return Err(CliError::usage(
            "-o names one output, but several inputs were given; without -o each is written \
             to a file named after it",
        ));
    }
    if inputs.iter().filter(|p| is_std(Some(p))).count() > 1 {
        return Err(CliError::usage(
            "standard input ('-') can be read only once",
        ));
    }
    let mut failed = 0usize;
    let mut failure = Failure::Input;
    for input in inputs {
        if let Err(e) = one(Some(input), true) {
            if crate::io::is_broken_pipe(&e.message) {
                return Err(e);
            }
            crate::error::report(&e);
            failed += 1;
            failure = failure.max(e.failure);
        }
    }
    if failed == 0 {
        return Ok(());
    }
    Err(CliError {
        failure,
        message: format!("{failed} of {} inputs failed", inputs.len()),
    })
}
