//! `hatf verify`: every checksum, every block's numbering and claims, the index and the
//! trailer; the DTD a file names by reference; and, for a format this hatf knows, that the
//! records of every block decode and are as many as its header says.

use crate::args::VerifyArgs;
use crate::error::{CliError, CliResult};
use crate::io::{open_input, BINARY_READ_AHEAD};
use crate::runtime_error::from_runtime;
use crate::Verbosity;
use hatf::format::{DecodeOptions, TraceFormat};
use metatf::container::{ContainerHeader, ContainerReader, DtdIdentity};

/// Runs `hatf verify`.
pub fn run(args: &VerifyArgs, verbosity: Verbosity) -> CliResult {
    let input = crate::compressed::unwrap_binary(open_input(Some(&args.file), BINARY_READ_AHEAD)?)?;
    let name = input.name.clone();
    let regular_file = input.len.is_some();
    let mut reader = ContainerReader::new(input.reader).map_err(|e| from_runtime(&name, e))?;
    if let Some(id) = reader.dtd_reference() {
        check_reference(&name, id)?;
    }
    let mut blocks = 0u64;
    // The reader checks each section's CRCs and lengths, each block's numbering and what it may
    // claim (its decompressed size and record count against what the file can hold), then the
    // index and the trailer against the blocks it read.
    loop {
        match reader.next_block() {
            Ok(Some(_)) => blocks += 1,
            Ok(None) => break,
            Err(e) => {
                let intact = reader.records_read();
                return Err(CliError::input(format!(
                    "{name}: {e} ({blocks} blocks with {intact} records before it are intact; `hatf recover` can save them)"
                )));
            }
        }
    }
    let header = reader.header().clone();
    // Only a decoder knows how many records a block's sections really hold; it fails when a
    // block holds other than its header says.
    let records = match hatf::by_name(&header.format) {
        Some(chosen) if regular_file && !events_only(chosen, &header) => {
            Some(decode_all(args, chosen, &name)?)
        }
        _ => None,
    };
    if !verbosity.quiet {
        let verdict = match reader.compact_len() {
            // A compact file has one checksum over all of it, and no index.
            Some(n) => format!("{n} bytes in the compact form, its checksum verified"),
            None => format!(
                "{} bytes, every checksum and the index verified",
                reader.position()
            ),
        };
        let decoded = match records {
            Some(_) => ", every record decoded",
            None => "",
        };
        crate::data_stdout::print(&format!(
            "{name}: ok: format `{}`, {blocks} blocks, {} records, {verdict}{decoded}\n",
            header.format,
            reader.records_read(),
        ))?;
    }
    Ok(())
}

/// A file that names its DTD instead of carrying it must name one this hatf ships: a wrong
/// length or checksum means the records would be read with a DTD they were not written with.
fn check_reference(name: &str, id: DtdIdentity) -> CliResult {
    match hatf::dtds::by_identity(id) {
        Some(_) => Ok(()),
        None => Err(CliError::input(format!(
            "{name}: the file names its DTD by reference ({} bytes, CRC-32 {:#010x}), and no DTD this hatf ships has that length and checksum: the reference is damaged, or the file was written by another version",
            id.length, id.crc32
        ))),
    }
}

/// True when the file holds only events, which its format cannot decode back to text (see
/// [`TraceFormat::event_encodings`]); its records are then not decoded here.
fn events_only(chosen: &dyn TraceFormat, header: &ContainerHeader) -> bool {
    header
        .properties
        .iter()
        .any(|(k, v)| k == "encoding" && chosen.event_encodings().contains(&v.as_str()))
}

/// Decodes the whole file (opened again) into nothing; what the decoder counted.
fn decode_all(args: &VerifyArgs, chosen: &dyn TraceFormat, name: &str) -> CliResult<u64> {
    let mut input =
        crate::compressed::unwrap_binary(open_input(Some(&args.file), BINARY_READ_AHEAD)?)?;
    let options = DecodeOptions {
        input_name: name.to_string(),
        names_dir: None,
        threads: 1,
        positioned: None,
    };
    chosen
        .decode(&mut input.reader, &mut std::io::sink(), &options)
        .map_err(|e| CliError::input(format!("{name}: its records do not decode: {e}")))
}
