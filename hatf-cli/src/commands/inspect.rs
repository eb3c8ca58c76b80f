//! `hatf inspect`: header, blocks, sections and their sizes.

use std::fmt::Write as _;

use metatf::Inspection;

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
        describe(&inspection).map_err(|e| CliError::input(format!("cannot print: {e}")))?
    };
    let mut out = create_output(None, false, Content::Text)?;
    match out.writer().write_all(text.as_bytes()) {
        Ok(()) => out.commit(),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::input(format!("<stdout>: cannot write: {e}"))),
    }
}

/// The human-readable description `hatf inspect` prints: header, DTD, then each block with its
/// records and sections.
fn describe(i: &Inspection) -> Result<String, std::fmt::Error> {
    let mut f = String::new();
    writeln!(f, "format: {}", i.format)?;
    writeln!(f, "byte order: {:?}", i.byte_order)?;
    for (k, v) in &i.properties {
        writeln!(f, "property {k} = {v}")?;
    }
    match (i.dtd_reference, i.dtd.is_empty()) {
        (Some(id), true) => writeln!(
            f,
            "DTD: referenced, not carried ({} bytes, CRC-32 {:08x}); unknown to this reader",
            id.length, id.crc32
        )?,
        _ => writeln!(
            f,
            "DTD: {} bytes, {} lines, stored {}",
            i.dtd.len(),
            i.dtd.lines().count(),
            i.dtd_storage.name()
        )?,
    }
    if let Some(n) = i.compact_bytes {
        writeln!(
            f,
            "compact form (container version 3): {n} bytes on disk; the sizes and offsets \
             below are those of the full form it encodes"
        )?;
    }
    writeln!(
        f,
        "{} blocks, {} records, {} bytes",
        i.blocks.len(),
        i.total_records,
        i.total_bytes
    )?;
    for b in &i.blocks {
        writeln!(
            f,
            "block {} at byte {}: records {}..{} ({})",
            b.index,
            b.offset,
            b.first_record,
            b.first_record + b.record_count,
            b.record_count
        )?;
        if !b.threads.is_empty() {
            let ids: Vec<String> = b.threads.iter().map(u64::to_string).collect();
            writeln!(f, "  threads: {}", ids.join(", "))?;
        }
        for s in &b.sections {
            writeln!(
                f,
                "  section {}: element width {}, {}, {} bytes stored, {} uncompressed",
                s.number, s.element_width, s.codec, s.stored_len, s.uncompressed_len
            )?;
        }
    }
    Ok(f)
}
