//! The command's errors and the exit status each one maps to.

use std::fmt;
use std::process::ExitCode;

/// Why a command failed, which decides the exit status (the later variant wins when several
/// inputs failed differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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

/// Prints `error` as `hatf: error: ...` on standard error. Control characters (bytes of a
/// binary file quoted in a message) are shown escaped, so a message never garbles a terminal.
pub fn report(error: &CliError) {
    eprintln!("hatf: error: {}", printable(&error.message));
}

/// `text` with every control character but newline and tab escaped, and at most 300 characters
/// of any one line.
fn printable(text: &str) -> String {
    const LONGEST_LINE: usize = 300;
    let mut out = String::with_capacity(text.len());
    let mut column = 0;
    for c in text.chars() {
        if c == '\n' {
            column = 0;
            out.push(c);
            continue;
        }
        column += 1;
        if column > LONGEST_LINE {
            if column == LONGEST_LINE + 1 {
                out.push_str("...");
            }
            continue;
        }
        if c.is_control() && c != '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Result type of every subcommand.
pub type CliResult<T = ()> = Result<T, CliError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_bytes_are_escaped_and_long_lines_cut() {
        assert_eq!(printable("a\u{1b}[2Jb\tc\nd"), "a\\u{1b}[2Jb\tc\nd");
        let long = "x".repeat(1000);
        let shown = printable(&format!("{long}\nend"));
        assert_eq!(shown, format!("{}...\nend", "x".repeat(300)));
    }
}
