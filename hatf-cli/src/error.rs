//! The command's errors and the exit status each one maps to.

use std::fmt;
use std::process::ExitCode;

/// Why a command failed, which decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Bad or corrupt input, or a check that found problems: exit 1.
    Input,
    /// The command line asks for something impossible or not built: exit 2.
    Usage,
}

/// An error printed as `hatf: error: ...` on stderr.
#[derive(Debug)]
pub struct CliError {
    /// Which exit status to use.
    pub failure: Failure,
    /// The message, already naming the file and position.
    pub message: String,
}

impl CliError {
    /// Bad input or a failed check (exit 1).
    pub fn input(message: impl Into<String>) -> Self {
        CliError {
            failure: Failure::Input,
            message: message.into(),
        }
    }

    /// A usage problem (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            failure: Failure::Usage,
            message: message.into(),
        }
    }

    /// A subcommand or option that a later piece of work will build. Never prints invented output.
    pub fn not_built(what: &str) -> Self {
        CliError::usage(format!("{what} is not built yet in this version of hatf"))
    }

    /// The exit status for this error.
    pub fn exit_code(&self) -> ExitCode {
        match self.failure {
            Failure::Input => ExitCode::from(1),
            Failure::Usage => ExitCode::from(2),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<hatf::FormatError> for CliError {
    fn from(e: hatf::FormatError) -> Self {
        CliError::input(e.to_string())
    }
}

/// Result type of every subcommand.
pub type CliResult<T = ()> = Result<T, CliError>;
