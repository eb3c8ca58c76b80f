//! `hatf stats`: numbers about a trace, from its text or its binary form.

use crate::args::StatsArgs;
use crate::error::{CliError, CliResult};
use crate::text_input::analyse;
use crate::Verbosity;

/// Runs `hatf stats`.
pub fn run(args: &StatsArgs, verbosity: Verbosity) -> CliResult {
    let report = analyse(
        args.input.as_deref(),
        &args.from,
        verbosity,
        "stats",
        |format, text, name| format.stats(text, name),
    )?
    .result;
    if args.json {
        let text = serde_json::to_string_pretty(&report.json)
            .map_err(|e| CliError::input(format!("cannot render JSON: {e}")))?;
        crate::data_stdout::print(&format!("{text}\n"))
    } else {
        crate::data_stdout::print(&report.text)
    }
}
