//! `hatf inspect`: header, blocks, sections and their sizes.

use crate::args::InspectArgs;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, open_input, Content, BINARY_READ_AHEAD};
use crate::runtime_error::from_runtime;
use crate::Verbosity;

/// Runs `hatf inspect`.
pub fn run(args: &InspectArgs, _verbosity: Verbosity) -> CliResult {
    let input = crate::compressed::unwrap_binary(open_input(Some(&args.file), BINARY_READ_AHEAD)?)?;
    let mut inspection = metatf::inspect(input.reader).map_err(|e| from_runtime(&input.name, e))?;
    // A format model names its DTD instead of carrying it; show the shipped one it names.
    if let Some(text) = inspection.dtd_reference.and_then(hatf::dtds::by_identity) {
        inspection.resolve_dtd(text);
    }
    if args.dtd && inspection.dtd.is_empty() {
        return Err(CliError::input(format!(
            "{}: the file names a DTD this version of hatf does not ship",
            input.name
        )));
    }
    let text = if args.dtd {
        inspection.dtd.clone()
    } else if args.json {
        let mut json = serde_json::to_string_pretty(&inspection)
            .map_err(|e| CliError::input(format!("cannot render JSON: {e}")))?;
        json.push('\n');
        json
    } else {
        inspection.to_string()
    };
    let mut out = create_output(None, false, Content::Text)?;
    match out.writer().write_all(text.as_bytes()) {
        Ok(()) => out.commit(),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::input(format!("<stdout>: cannot write: {e}"))),
    }
}
