//! `hatf recover`: a valid file from the intact blocks of a damaged or truncated one.
//!
//! Blocks are self-contained and decoded in order, so the intact blocks before the first damage
//! form a valid trace: the original's first records. Everything from the damage on is lost, and
//! the command says how much was kept.

use crate::args::RecoverArgs;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, open_input, Content};
use crate::runtime_error::from_runtime;
use crate::Verbosity;
use metatf::container::{ContainerReader, ContainerWriter, SectionData};
use metatf::Codec;

/// Compression levels used when the intact sections are written again (the original levels are
/// not stored in the file; the bytes they decompress to are what matters).
fn level_for(codec: Codec) -> i32 {
    match codec {
        Codec::Gzip => 6,
        Codec::Zstd => 19,
        _ => 0,
    }
}

/// Runs `hatf recover`.
pub fn run(args: &RecoverArgs, verbosity: Verbosity) -> CliResult {
    let mut output = create_output(args.out.output.as_deref(), args.out.force, Content::Binary)?;
    let input = open_input(Some(&args.file))?;
    let name = input.name.clone();
    let mut reader = ContainerReader::new(input.reader).map_err(|e| from_runtime(&name, e))?;
    let header = reader.header().clone();
    // Keep the DTD stored as the damaged file stored it.
    let writer = match reader.dtd_reference() {
        Some(id) => ContainerWriter::referencing(output.writer(), &header, id),
        None => ContainerWriter::with_dtd_storage(output.writer(), &header, reader.dtd_storage()),
    };
    let mut writer = writer.map_err(|e| CliError::input(format!("{}: {e}", "output")))?;
    let mut damage = None;
    loop {
        match reader.next_block() {
            Ok(Some(block)) => {
                let descriptors = reader.last_descriptors().to_vec();
                let sections: Vec<SectionData<'_>> = block
                    .sections
                    .iter()
                    .zip(&descriptors)
                    .map(|(section, descriptor)| SectionData {
                        number: section.number,
                        element_width: section.element_width,
                        codec: descriptor.codec,
                        level: level_for(descriptor.codec),
                        bytes: &section.bytes,
                    })
                    .collect();
                writer
                    .write_block(block.record_count, &sections)
                    .map_err(|e| CliError::input(format!("{}: {e}", "output")))?;
            }
            Ok(None) => break,
            Err(e) => {
                damage = Some(e);
                break;
            }
        }
    }
    let kept = writer.records_written();
    writer
        .finish()
        .map_err(|e| CliError::input(format!("output: {e}")))?;
    output.commit()?;
    if !verbosity.quiet {
        match &damage {
            Some(e) => eprintln!(
                "hatf: {name}: kept {} records in the intact blocks before the damage; lost everything from it on: {e}",
                reader.records_read()
            ),
            None => eprintln!("hatf: {name}: no damage found; all {kept} records kept"),
        }
    }
    Ok(())
}
