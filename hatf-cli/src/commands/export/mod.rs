//! `hatf export`: the records of a trace as one wide table (Parquet, Arrow IPC or CSV).
//!
//! One table, not one per record type: the order of records is what lifetimes and live bytes
//! are computed from, and a wide table keeps it in one `index` column without joins (see
//! [`columns`] for how the columns are made).
//!
//! Threads share the work. A Parquet table of a file whose blocks decode on their own is made
//! a row group a block, each on whichever thread is free (see [`by_block`]). Otherwise this
//! thread decodes the records and builds columns, batch after batch, and a writer thread
//! encodes and compresses each batch into the table while the next is built (a Parquet
//! table's columns with a helper, see [`parquet_table`]); at most [`BATCHES_IN_FLIGHT`]
//! batches wait between them. Either way the memory is bounded whatever the length of the
//! trace.

mod by_block;
mod columns;
mod parquet_table;
mod table;

use std::io::{BufReader, Read, Seek};
use std::sync::mpsc;

use arrow_array::ArrayRef;
use hatf::format::EncodeOptions;
use hatf::records::{Item, RecordFile};

use crate::args::{ExportArgs, TableFormat};
use crate::error::{CliError, CliResult};
use crate::io::{create_output, is_std, Content};
use crate::progress;
use crate::record_range;
use crate::text_input::open_text;
use crate::Verbosity;
use columns::{Plan, Rows};
use table::Table;

/// Rows of one batch handed to the writer: small enough that a column's buffer (64 KiB) is
/// below the allocator's threshold for mapping fresh pages, so the buffers of written
/// batches are reused instead of being unmapped and faulted in again (a tenth of the time
/// with 64 Ki rows), large enough that a batch's fixed cost is nothing.
pub(crate) const BATCH_ROWS: usize = 1 << 13;

/// Rows a row group holds at most, whatever the blocks: bounds the memory of the row group
/// the Parquet writer holds (encoded) until it is closed.
pub(crate) const MAX_GROUP_ROWS: usize = 1 << 20;

/// Batches built and not yet written, at most.
const BATCHES_IN_FLIGHT: usize = 8;

/// Key of the key-value metadata holding the trace's format.
pub const FORMAT_KEY: &str = "hatf.format";
/// Key of the key-value metadata holding the trace's DTD.
pub const DTD_KEY: &str = "hatf.dtd";

/// A batch for the writer thread (none when only the row group ends), and whether its row
/// group ends after it.
struct Batch {
    arrays: Option<Vec<ArrayRef>>,
    end_group: bool,
}

/// Runs `hatf export`.
pub fn run(args: &ExportArgs, verbosity: Verbosity) -> CliResult {
    let (first, end) = args
        .records
        .as_deref()
        .map(record_range::parse)
        .transpose()?
        .unwrap_or((0, u64::MAX));
    if args.out.output.is_none() || is_std(args.out.output.as_deref()) {
        return Err(CliError::usage(
            "export writes a file: give it with -o OUTPUT",
        ));
    }
    let name = args.file.display().to_string();
    let mut file = binary_of(args, &name, verbosity)?;
    let records = RecordFile::open(&mut file, &name)?;
    let plan = Plan::of(records.types());
    let mut output = create_output(args.out.output.as_deref(), args.out.force, Content::Binary)?;
    let metadata = [
        (FORMAT_KEY, records.format().to_string()),
        (DTD_KEY, records.dtd().to_string()),
    ];
    let schema = plan.schema(&metadata);
    let spinner = progress::spinner(verbosity, "exporting");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if args.to == TableFormat::Parquet && by_block::fits(&records, &(first..end), threads) {
        let written = Table::new(args.to, output.send_writer(), schema)
            .and_then(|mut table| {
                let count = match table.parquet() {
                    Some(parquet) => by_block::export(
                        &records,
                        file.get_ref(),
                        &name,
                        first..end,
                        &plan,
                        parquet,
                        threads,
                        spinner.as_ref(),
                    )?,
                    None => 0,
                };
                table.close().map(|()| count)
            })
            .map_err(CliError::input);
        let count = match written {
            Ok(count) => count,
            Err(e) => return Err(output.blame(e)),
        };
        return finish(output, count, spinner, verbosity);
    }
    let mut count = 0u64;
    let written = std::thread::scope(|scope| -> CliResult {
        let mut table =
            Table::new(args.to, output.send_writer(), schema).map_err(CliError::input)?;
        let (send, receive) = mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
        let writer = scope.spawn(move || -> Result<(), String> {
            for batch in receive {
                if let Some(arrays) = batch.arrays {
                    table.write(arrays)?;
                }
                if batch.end_group {
                    table.end_group()?;
                }
            }
            table.close()
        });
        let mut rows = Rows::new(&plan, BATCH_ROWS);
        let mut group_rows = 0usize;
        // A send fails only when the writer stopped, whose own error says why.
        let stopped = || hatf::FormatError {
            file: String::new(),
            position: String::new(),
            message: "the table writer stopped".to_string(),
        };
        let read = records.read(&mut file, &name, first..end, &mut |item| {
            let end_group = match item {
                // A block ends the row group of the records before it.
                Item::Block { .. } if rows.len() == 0 => {
                    if group_rows == 0 {
                        return Ok(());
                    }
                    group_rows = 0;
                    return send
                        .send(Batch {
                            arrays: None,
                            end_group: true,
                        })
                        .map_err(|_| stopped());
                }
                Item::Block { .. } => true,
                Item::Record(r) => {
                    rows.push(&plan, r.index, r.record_type, r.values);
                    count += 1;
                    if count.is_multiple_of(1 << 16) {
                        if let Some(s) = &spinner {
                            s.set_message(format!("exporting: {count} records"));
                        }
                    }
                    if rows.len() < BATCH_ROWS {
                        return Ok(());
                    }
                    group_rows + rows.len() >= MAX_GROUP_ROWS
                }
            };
            group_rows = if end_group {
                0
            } else {
                group_rows + rows.len()
            };
            let arrays = Some(rows.finish(&plan));
            send.send(Batch { arrays, end_group })
                .map_err(|_| stopped())
        });
        let last = match read {
            Ok(_) if rows.len() > 0 => send
                .send(Batch {
                    arrays: Some(rows.finish(&plan)),
                    end_group: true,
                })
                .map_err(|_| stopped()),
            other => other.map(|_| ()),
        };
        drop(send);
        let wrote = writer
            .join()
            .unwrap_or_else(|_| Err("the table writer failed".to_string()));
        // The writer's error comes first: a read stopped by it only says that it stopped.
        wrote.map_err(CliError::input)?;
        last.map_err(CliError::from)
    });
    if let Err(e) = written {
        return Err(output.blame(e));
    }
    finish(output, count, spinner, verbosity)
}

/// Puts the written table in its place and says so when asked.
fn finish(
    output: crate::io::Output,
    count: u64,
    spinner: Option<indicatif::ProgressBar>,
    verbosity: Verbosity,
) -> CliResult {
    drop(spinner);
    let out_name = output.name.clone();
    let bytes = output.commit_counted()?;
    if verbosity.verbose {
        eprintln!("hatf: {count} records, {bytes} bytes to {out_name}");
    }
    Ok(())
}

/// A file of any kind, seekable: the binary trace itself, or a text trace encoded into an
/// anonymous temporary file first (removed when it is closed).
fn binary_of(
    args: &ExportArgs,
    name: &str,
    verbosity: Verbosity,
) -> CliResult<BufReader<std::fs::File>> {
    let mut file = super::dump::open_seekable(&args.file)?;
    let mut magic = [0u8; 4];
    let got = file
        .read(&mut magic)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    file.rewind()
        .map_err(|e| CliError::input(format!("{name}: cannot seek: {e}")))?;
    if metatf::container::looks_like_container(&magic[..got]) {
        return Ok(file);
    }
    let input = crate::io::open_input(Some(&args.file), crate::io::TEXT_READ_AHEAD)?;
    let input = progress::track(input, verbosity, "encoding");
    let mut opened = open_text(input.reader, &args.from, name)?;
    let temp = tempfile::tempfile()
        .map_err(|e| CliError::input(format!("cannot create a temporary file: {e}")))?;
    let mut encoded = std::io::BufWriter::new(temp);
    let options = EncodeOptions {
        input_name: name.to_string(),
        ..EncodeOptions::default()
    };
    opened
        .format
        .encode(&mut opened.reader, &mut encoded, &options)?;
    let mut temp = encoded
        .into_inner()
        .map_err(|e| CliError::input(format!("cannot write a temporary file: {e}")))?;
    temp.rewind()
        .map_err(|e| CliError::input(format!("cannot seek a temporary file: {e}")))?;
    Ok(BufReader::with_capacity(1 << 20, temp))
}
