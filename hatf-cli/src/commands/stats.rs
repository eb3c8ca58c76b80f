//! `hatf stats`: numbers about a trace, from its text or its binary form.

use crate::args::StatsArgs;
use crate::error::{CliError, CliResult};
use crate::io::{open_input, TEXT_READ_AHEAD};
use crate::progress;
use crate::text_input::{finish, open_text_trace};
use crate::Verbosity;

/// Runs `hatf stats`.
pub fn run(args: &StatsArgs, verbosity: Verbosity) -> CliResult {
    let input = progress::track(
        open_input(args.input.as_deref(), TEXT_READ_AHEAD)?,
        verbosity,
        "reading",
    );
    let name = input.name.clone();
    let mut trace = open_text_trace(input, &args.from)?;
    let report = trace
        .format
        .stats(&mut trace.reader, &name)
        .ok_or_else(|| {
            CliError::not_built(&format!(
                "`hatf stats` for `{}` traces",
                trace.format.name()
            ))
        })?;
    let report = report?;
    drop(trace.reader);
    finish(trace.decoder)?;
    if args.json {
        let text = serde_json::to_string_pretty(&report.json)
            .map_err(|e| CliError::input(format!("cannot render JSON: {e}")))?;
        crate::data_stdout::print(&format!("{text}\n"))
    } else {
        crate::data_stdout::print(&report.text)
    }
}
