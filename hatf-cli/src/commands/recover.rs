//! `hatf recover`: a valid file from the intact blocks of a damaged or truncated one.
//!
//! Blocks are self-contained and decoded in order, so the intact blocks before the first damage
//! form a valid trace: the original's first records. Everything from the damage on is lost, and
//! the command says how much was kept. When no record precedes the damage, or the blocks claim
//! none, there is nothing to keep: no file is written and the command fails.
//!
//! The thread lists of the index (formats whose records have threads) are carried over: from the
//! damaged file's own index when it is intact and lists exactly the blocks the file holds, or
//! else listed again from the records by the format ([`hatf::format::TraceFormat::thread_lister`]);
//! a format that cannot gets an index without thread lists, and the command says so.

use crate::args::RecoverArgs;
use crate::error::{CliError, CliResult};
use crate::io::{create_output_for, open_input, Content, BINARY_READ_AHEAD};
use crate::runtime_error::from_runtime;
use crate::Verbosity;
use metatf::container::{
    read_index_threads, scan_index, ContainerReader, ContainerWriter, SectionData,
};
use metatf::Codec;
use std::path::Path;

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
    let input = open_input(Some(&args.file), BINARY_READ_AHEAD)?;
    let mut output = create_output_for(
        args.out.output.as_deref(),
        args.out.force,
        Content::Binary,
        input.identity,
        &input.name,
    )?;
    let name = input.name.clone();
    let mut reader = ContainerReader::new(input.reader).map_err(|e| from_runtime(&name, e))?;
    let header = reader.header().clone();
    // Keep the DTD stored as the damaged file stored it.
    let writer = match reader.dtd_reference() {
        Some(id) => ContainerWriter::referencing(output.writer(), &header, id),
        None => ContainerWriter::with_dtd_storage(output.writer(), &header, reader.dtd_storage()),
    };
    let mut writer = writer.map_err(|e| CliError::input(format!("{}: {e}", "output")))?;
    let mut threads = ThreadSource::choose(&args.file, &header, &name);
    let mut damage = None;
    let mut blocks = 0u64;
    loop {
        match reader.next_block() {
            Ok(Some(block)) => {
                blocks += 1;
                if let Some(list) = threads.list(&block, verbosity) {
                    writer.set_block_threads(&list);
                }
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
    if kept == 0 {
        // No record kept: no output is written, and the exit status says the file could not be
        // recovered (a file of no blocks at all has nothing to lose and is written again).
        match &damage {
            Some(e) => {
                return Err(CliError::input(format!(
                    "{name}: nothing to recover: no record precedes the damage, so no file was written: {e}"
                )))
            }
            None if blocks > 0 => {
                return Err(CliError::input(format!(
                    "{name}: nothing to recover: its {blocks} blocks claim no records, so no file was written"
                )))
            }
            None => {}
        }
    }
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
        // Formats without threads (most allocation traces) need no word about them unless asked.
        if verbosity.verbose || !matches!(threads, ThreadSource::None { .. }) {
            eprintln!("hatf: {name}: {}", threads.describe());
        }
    }
    Ok(())
}

/// Where the thread list of each recovered block comes from.
enum ThreadSource {
    /// The damaged file's index, which lists the threads of every block the file holds.
    Index(std::vec::IntoIter<Vec<u64>>),
    /// The format lists them again from each block's records.
    Records(hatf::format::ThreadLister),
    /// Listing failed at the block named; no lists from there on.
    Failed(u64),
    /// The file's index is intact and lists no threads, or the format cannot list them.
    None { index_intact: bool },
}

impl ThreadSource {
    /// The damaged file's index when it can be read from the end of `path` (a regular file whose
    /// trailer and index are intact) and its entries are those of the blocks found by reading
    /// the block headers from the start; otherwise the format's lister.
    fn choose(path: &Path, header: &metatf::ContainerHeader, name: &str) -> ThreadSource {
        let index = std::fs::metadata(path)
            .is_ok_and(|m| m.is_file())
            .then(|| std::fs::File::open(path).ok())
            .flatten()
            .and_then(|mut f| {
                let index = read_index_threads(&mut f).ok()?;
                std::io::Seek::rewind(&mut f).ok()?;
                let (found, _) = scan_index(std::io::BufReader::new(f)).ok()?;
                // Blocks cut off or damaged are not kept, so the blocks found need only be the
                // first ones of the index; any other difference makes the index untrustworthy.
                (found.len() <= index.0.len() && found[..] == index.0[..found.len()])
                    .then_some(index.1)
            });
        match index {
            Some(Some(lists)) => ThreadSource::Index(lists.into_iter()),
            Some(None) => ThreadSource::None { index_intact: true },
            None => match hatf::by_name(&header.format).and_then(|f| f.thread_lister(header, name))
            {
                Some(lister) => ThreadSource::Records(lister),
                None => ThreadSource::None {
                    index_intact: false,
                },
            },
        }
    }

    /// The thread list of `block`, the next block kept, if there is one to write.
    fn list(&mut self, block: &metatf::container::Block, verbosity: Verbosity) -> Option<Vec<u64>> {
        match self {
            ThreadSource::Index(lists) => lists.next(),
            ThreadSource::Records(lister) => match lister(block) {
                Ok(list) => Some(list),
                Err(e) => {
                    if !verbosity.quiet {
                        eprintln!("hatf: warning: cannot list the threads of an intact block: {e}");
                    }
                    *self = ThreadSource::Failed(block.index);
                    None
                }
            },
            ThreadSource::Failed(_) | ThreadSource::None { .. } => None,
        }
    }

    /// One line for the user: where the recovered index's thread lists came from.
    fn describe(&self) -> String {
        match self {
            ThreadSource::Index(_) => {
                "the index's thread lists were carried over from the damaged file's intact index".into()
            }
            ThreadSource::Records(_) => {
                "the index's thread lists were listed again from the records of each block (the damaged file's index was missing, damaged or did not match its blocks)".into()
            }
            ThreadSource::Failed(block) => format!(
                "the index lists threads for the blocks before block {block} only (see the warning)"
            ),
            ThreadSource::None { index_intact: true } => {
                "the damaged file's index lists no threads, so neither does the recovered one".into()
            }
            ThreadSource::None {
                index_intact: false,
            } => "the recovered index lists no threads (this format does not record them per block, or its index was lost and this format cannot list them again)".into(),
        }
    }
}
