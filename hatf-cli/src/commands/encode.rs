//! `hatf encode`: text trace → binary trace.

use crate::args::{CompressArg, EncodeArgs};
use crate::error::{CliError, CliResult};
use crate::io::{create_output, open_input, Content, TEXT_READ_AHEAD};
use crate::progress;
use crate::runtime_error::from_runtime;
use crate::text_input::{choose_format, head_of, read_head, DETECT_BYTES};
use crate::thread_choice;
use crate::Verbosity;
use hatf::format::{Compression, EncodeOptions};

/// Runs `hatf encode`.
pub fn run(args: &EncodeArgs, verbosity: Verbosity) -> CliResult {
    if args.from == "text" {
        return encode_text(args);
    }
    if args.dtd.is_some() {
        return Err(CliError::usage("--dtd goes with --from text"));
    }
    if args.model != "auto" {
        return Err(CliError::usage("--model goes with --from text"));
    }
    if args.threads == Some(0) {
        return Err(CliError::usage("--threads must be at least 1"));
    }
    // The output is opened first so that a refusal (existing file, terminal) costs no work.
    let mut output = create_output(args.out.output.as_deref(), args.out.force, Content::Binary)?;
    let input = progress::track(
        open_input(args.input.as_deref(), TEXT_READ_AHEAD)?,
        verbosity,
        "encoding",
    );
    let input_len = input.len;

    // Detection needs the first bytes; they are read once and then put back in front of the rest.
    let mut whole = read_head(input.reader, &input.name)?;
    // A head shorter than asked for is the whole input: its length is known even from a pipe.
    let input_len = input_len.or_else(|| {
        let head = head_of(&whole);
        (head.len() < DETECT_BYTES).then_some(head.len() as u64)
    });
    let chosen = choose_format(&args.from, head_of(&whole), &input.name)?;
    if verbosity.verbose {
        eprintln!(
            "hatf: {}: detected format `{}` ({})",
            input.name,
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
    if events_only && !verbosity.quiet {
        eprintln!(
            "hatf: note: encoding `{}` keeps the events only, not the text: `hatf dump` reads the file, `hatf decode` cannot give the text back",
            args.encoding
        );
    }
    let options = EncodeOptions {
        input_name: input.name.clone(),
        encoding: args.encoding.clone(),
        compression: match args.compress {
            CompressArg::None => Compression::None,
            CompressArg::Gzip => Compression::Gzip,
            CompressArg::Zstd => Compression::Zstd,
        },
        level: args.level,
        threads: thread_choice::threads_for(
            args.threads,
            thread_choice::encode_len(input_len, head_of(&whole)),
            thread_choice::ENCODE_ONE_THREAD_BELOW,
            thread_choice::all_cores,
        ),
        keep_bad_lines: args.keep_bad_lines,
        names_dir: args.names.clone(),
    };
    let report = chosen.encode(&mut whole, output.writer(), &options)?;
    output.commit()?;
    if verbosity.verbose {
        eprintln!(
            "hatf: {} records, {} input bytes",
            report.records, report.input_bytes
        );
    }
    if report.bad_lines > 0 && !verbosity.quiet {
        eprintln!(
            "hatf: {}: {} lines did not parse and were stored verbatim",
            input.name, report.bad_lines
        );
    }
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
    let codec = match args.compress {
        CompressArg::None => metatf::Codec::None,
        CompressArg::Gzip => metatf::Codec::Gzip,
        CompressArg::Zstd => metatf::Codec::Zstd,
    };
    let level = args.level.unwrap_or(match codec {
        metatf::Codec::Gzip => 6,
        _ => 3,
    });
    let model = match args.model.as_str() {
        "auto" => metatf::TextModel::Auto,
        "plain" => metatf::TextModel::Plain,
        other => {
            return Err(CliError::usage(format!(
                "--model {other}: expected `auto` or `plain`"
            )))
        }
    };
    let mut output = create_output(args.out.output.as_deref(), args.out.force, Content::Binary)?;
    let input = open_input(args.input.as_deref(), TEXT_READ_AHEAD)?;
    let text = std::io::BufReader::with_capacity(1 << 20, input.reader);
    metatf::encode_text_with(&dtd, &dtd_name, text, output.writer(), codec, level, model)
        .map_err(|e| from_runtime(&input.name, e))?;
    output.commit()
}
