//! The `hatf` command.

mod args;
mod batch;
mod commands;
mod compressed;
mod data_stdout;
mod error;
mod io;
mod lines_input;
mod live_chart;
mod malloc_tuning;
mod output_name;
mod partial;
mod peek;
mod progress;
mod record_range;
mod runtime_error;
mod summary;
mod text_input;
mod thread_choice;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

/// How chatty the command should be.
#[derive(Debug, Clone, Copy)]
pub struct Verbosity {
    /// `-q`: only errors.
    pub quiet: bool,
    /// `-v`: extra information on stderr.
    pub verbose: bool,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    malloc_tuning::bound_retained_memory(match cli.command {
        Command::Encode(_) => malloc_tuning::ENCODING_MMAP_THRESHOLD,
        _ => malloc_tuning::DEFAULT_MMAP_THRESHOLD,
    });
    data_stdout::reserve();
    partial::clean_up_on_signals();
    let verbosity = Verbosity {
        quiet: cli.quiet,
        verbose: cli.verbose,
    };
    let result = match &cli.command {
        Command::Encode(a) => commands::encode::run(a, verbosity),
        Command::Decode(a) => commands::decode::run(a, verbosity),
        Command::Inspect(a) => commands::inspect::run(a, verbosity),
        Command::Dump(a) => commands::dump::run(a, verbosity),
        Command::Export(a) => commands::export::run(a, verbosity),
        Command::Stats(a) => commands::stats::run(a, verbosity),
        Command::Validate(a) => commands::validate::run(a, verbosity),
        Command::Compare(a) => commands::compare::run(a, verbosity),
        Command::Verify(a) => commands::verify::run(a, verbosity),
        Command::Recover(a) => commands::recover::run(a, verbosity),
        Command::Dtd(c) => commands::dtd::run(c, verbosity),
        Command::Completions(a) => commands::completions::run(a),
        Command::Man(a) => commands::man::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if io::is_broken_pipe(&e.message) => ExitCode::SUCCESS,
        Err(e) => {
            error::report(&e);
            e.exit_code()
        }
    }
}
