//! `hatf encode`: text trace → binary trace.

use crate::args::{CompressArg, EncodeArgs};
use crate::batch;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, create_output_for, open_input, Content, Input, TEXT_READ_AHEAD};
use crate::output_name;
use crate::progress;
use crate::runtime_error::from_runtime;
use crate::summary;
use crate::text_input::{open_text, DETECT_BYTES};
use crate::thread_choice;
use crate::Verbosity;
use hatf::format::{Compression, EncodeOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs `hatf encode`.
pub fn run(args: &EncodeArgs, verbosity: Verbosity) -> CliResult {
    if args.from == "text" {
        if args.inputs.len() > 1 {
            return Err(CliError::usage("--from text reads one input"));
        }
        return encode_text(args);
    }
    if args.from == "any" || (args.dtd.is_some() && matches!(args.from.as_str(), "auto" | "lines"))
    {
        if args.inputs.len() > 1 {
            return Err(CliError::usage("--dtd and --from any read one input"));
        }
        return crate::lines_input::encode(args, verbosity);
    }
    if args.from == "lines" {
        return Err(CliError::usage(
            "--from lines needs --dtd FILE, a DTD with line patterns",
        ));
    }
    if args.dtd.is_some() {
        return Err(CliError::usage(
            "--dtd goes with --from text (the record text form) or --from lines (the trace's own lines)",
        ));
    }
    if args.strict {
        return Err(CliError::usage("--strict goes with --dtd or --from any"));
    }
    if args.model != "auto" {
        return Err(CliError::usage("--model goes with --from text"));
    }
    if args.threads == Some(0) {
        return Err(CliError::usage("--threads must be at least 1"));
    }
    if args.out.stdout && args.inputs.len() > 1 {
        return Err(CliError::usage(
            "--stdout takes one input for encode (binary traces do not concatenate)",
        ));
    }
    batch::for_each_input(&args.inputs, &args.out, |path, several| {
        encode_one(args, path, several, verbosity)
    })
}

/// Encodes one input (a file, or standard input when `path` is `None` or `-`).
fn encode_one(
    args: &EncodeArgs,
    path: Option<&Path>,
    several: bool,
    verbosity: Verbosity,
) -> CliResult {
    let started = Instant::now();
    let input = progress::track(open_input(path, TEXT_READ_AHEAD)?, verbosity, "encoding");
    let Input {
        name,
        reader,
        len,
        identity,
        ..
    } = input;
    // Detection needs the first bytes; they are read once and then put back in front of the
    // rest. A compressed text no format claims as it is gets unwrapped here.
    let mut opened = open_text(reader, &args.from, &name)?;
    let chosen = opened.format;
    // The length that decides the thread count: an unwrapped text's is unknown; a head shorter
    // than asked for is the whole input, so its length is known even from a pipe.
    let input_len = match opened.wrapper {
        Some(_) => None,
        None => {
            len.or_else(|| (opened.head.len() < DETECT_BYTES).then_some(opened.head.len() as u64))
        }
    };
    if verbosity.verbose {
        let unwrapped = opened
            .wrapper
            .map(|w| format!(", {}-compressed", w.name()))
            .unwrap_or_default();
        eprintln!(
            "hatf: {name}: detected format `{}` ({}){unwrapped}",
            chosen.name(),
            chosen.description()
        );
    }
    let events_only = chosen.event_encodings().contains(&args.encoding.as_str());
    if !events_only && !chosen.encodings().contains(&args.encoding.as_str()) {
        let all: Vec<&str> = chosen
            .encodings()
            .iter()
            .chain(chosen.event_encodings())
            .copied()
            .collect();
        return Err(CliError::usage(format!(
            "format `{}` has no encoding `{}`; it offers: {}",
            chosen.name(),
            args.encoding,
            all.join(", ")
        )));
    }
    let wrapper = opened.wrapper;
    let out_path = batch::destination(&args.out, path, several, |p| {
        Ok(output_name::encoded(p, wrapper))
    })?;
    let mut output = create_output_for(
        out_path.as_deref(),
        args.out.force,
        Content::Binary,
        identity,
        &name,
    )?;
    if events_only && !verbosity.quiet {
        eprintln!(
            "hatf: note: encoding `{}` keeps the events only, not the text: `hatf dump` reads the file, `hatf decode` cannot give the text back",
            args.encoding
        );
    }
    let options = EncodeOptions {
        input_name: name.clone(),
        encoding: args.encoding.clone(),
        compression: match args.compress {
            CompressArg::None => Compression::None,
            CompressArg::Gzip => Compression::Gzip,
            CompressArg::Zstd => Compression::Zstd,
        },
        level: args.level,
        threads: thread_choice::threads_for(
            args.threads,
            thread_choice::encode_len(input_len, &opened.head),
            thread_choice::ENCODE_ONE_THREAD_BELOW,
            thread_choice::all_cores,
        ),
        keep_bad_lines: args.keep_bad_lines,
        names_dir: args.names.clone(),
    };
    let report = chosen
        .encode(&mut opened.reader, output.writer(), &options)
        .map_err(|e| output.blame(e))?;
    // The progress bar goes with the reader, before the lines below.
    drop(opened);
    let output_name = output.name.clone();
    let written = output.commit_counted()?;
    if verbosity.verbose {
        eprintln!(
            "hatf: {} records, {} input bytes",
            report.records, report.input_bytes
        );
    }
    if report.bad_lines > 0 && !verbosity.quiet {
        eprintln!(
            "hatf: {name}: {} lines did not parse and were stored verbatim",
            report.bad_lines
        );
    }
    summary::print(
        verbosity,
        &name,
        report.input_bytes,
        written,
        &output_name,
        started.elapsed(),
    );
    Ok(())
}

/// `--from text --dtd FILE`: reads `hatf dump`'s text form back into a binary trace.
fn encode_text(args: &EncodeArgs) -> CliResult {
    let dtd_path = args
        .dtd
        .as_deref()
        .ok_or_else(|| CliError::usage("--from text needs --dtd FILE, the DTD of the records"))?;
    let dtd_name = dtd_path.display().to_string();
    let dtd = std::fs::read_to_string(dtd_path)
        .map_err(|e| CliError::input(format!("{dtd_name}: cannot read: {e}")))?;
    let codec = args.compress.codec();
    let level = args.level.unwrap_or(metatf::default_level(codec));
    let model = match args.model.as_str() {
        "auto" => metatf::TextModel::Auto,
        "fast" => metatf::TextModel::Fast,
        "plain" => metatf::TextModel::Plain,
        other => {
            return Err(CliError::usage(format!(
                "--model {other}: expected `auto`, `fast` or `plain`"
            )))
        }
    };
    let mut output = create_output(args.out.output.as_deref(), args.out.force, Content::Binary)?;
    let input = open_input(args.inputs.first().map(PathBuf::as_path), TEXT_READ_AHEAD)?;
    let text = std::io::BufReader::with_capacity(1 << 20, input.reader);
    metatf::encode_text_with(&dtd, &dtd_name, text, output.writer(), codec, level, model)
        .map_err(|e| from_runtime(&input.name, e))?;
    output.commit()
}
