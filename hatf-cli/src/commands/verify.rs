//! `hatf verify`: every checksum, every block's numbering, the index and the trailer.

use crate::args::VerifyArgs;
use crate::error::CliResult;
use crate::io::{open_input, BINARY_READ_AHEAD};
use crate::runtime_error::from_runtime;
use crate::Verbosity;
use metatf::container::ContainerReader;

/// Runs `hatf verify`.
pub fn run(args: &VerifyArgs, verbosity: Verbosity) -> CliResult {
    let input = open_input(Some(&args.file), BINARY_READ_AHEAD)?;
    let name = input.name.clone();
    let mut reader = ContainerReader::new(input.reader).map_err(|e| from_runtime(&name, e))?;
    let mut blocks = 0u64;
    // The reader checks each section's CRCs and lengths, block numbering, then the index and the
    // trailer against the blocks it read; reaching the end without an error is the verdict.
    loop {
        match reader.next_block() {
            Ok(Some(_)) => blocks += 1,
            Ok(None) => break,
            Err(e) => {
                let intact = reader.records_read();
                return Err(crate::error::CliError::input(format!(
                    "{name}: {e} ({blocks} blocks with {intact} records before it are intact; `hatf recover` can save them)"
                )));
            }
        }
    }
    if !verbosity.quiet {
        let verdict = match reader.compact_len() {
            // A compact file has one checksum over all of it, and no index.
            Some(n) => format!("{n} bytes in the compact form, its checksum verified"),
            None => format!(
                "{} bytes, every checksum and the index verified",
                reader.position()
            ),
        };
        crate::data_stdout::print(&format!(
            "{name}: ok: format `{}`, {blocks} blocks, {} records, {verdict}\n",
            reader.header().format,
            reader.records_read(),
        ))?;
    }
    Ok(())
}
