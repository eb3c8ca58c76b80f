//! Turning the runtime's errors into the command's.

use crate::error::CliError;

/// A runtime error while reading `name`. A closed pipe on standard output becomes a message the
/// caller recognises as "not a failure".
pub fn from_runtime(name: &str, error: metatf::Error) -> CliError {
    match &error {
        metatf::Error::Output { source } if source.kind() == std::io::ErrorKind::BrokenPipe => {
            CliError::input("Broken pipe")
        }
        metatf::Error::Output { .. } => CliError::input(format!("<stdout>: {error}")),
        _ => CliError::input(format!("{name}: {error}")),
    }
}
