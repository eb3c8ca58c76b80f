//! `hatf compare`: the measuring is the library's (`hatf::internal::compare`); printing the
//! table, CSV, JSON and chart is here.

mod plot;
mod render;
mod variants;

use crate::args::CompareArgs;
use crate::compressed::Wrapper;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, is_std, open_input, Content, TEXT_READ_AHEAD};
use crate::progress;
use crate::Verbosity;
use hatf::internal::compare::{self, input, Comparison};
use std::io::Read;
use std::path::Path;

/// Runs `hatf compare`.
pub fn run(args: &CompareArgs, verbosity: Verbosity) -> CliResult {
    if args.generic_lines == 0 {
        // The generic engine holds the record text of its lines and every file it writes in
        // memory: the whole of a large trace would not fit.
        return Err(CliError::usage(
            "--generic-lines 0: give how many lines of each trace the generic engine gets (at \
             least 1; a trace with fewer lines is taken whole), or --no-generic",
        ));
    }
    let options = compare::Options {
        generic: !args.no_generic,
        generic_lines: Some(args.generic_lines),
        keep_bad_lines: !args.strict,
    };
    let from = match args.from.as_str() {
        "auto" => None,
        name => Some(hatf::by_name(name).ok_or_else(|| {
            CliError::usage(format!(
                "--from {name}: compare reads a trace format (give the record text form with --dtd)"
            ))
        })?),
    };
    let dtd = match &args.dtd {
        Some(path) => {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
            if args.inputs.is_empty() {
                return Err(CliError::usage("--dtd needs the trace to compare"));
            }
            Some((text, name))
        }
        None => None,
    };
    let mut comparison = Comparison::default();
    let spinner = progress::spinner(verbosity, "comparing");
    if args.inputs.is_empty() {
        let (name, text) = compare::sample();
        if verbosity.verbose {
            eprintln!("hatf: comparing the built-in sample {name}");
        }
        comparison
            .rows
            .push(compare::compare_text_with(name, text, options)?);
    }
    for path in &args.inputs {
        let name = path.display().to_string();
        if verbosity.verbose {
            eprintln!("hatf: reading {name}");
        }
        let loaded = load(path)?;
        let name = loaded.0;
        let loaded = loaded.1;
        let label = path
            .file_name()
            .filter(|_| !is_std(Some(path)))
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone());
        let mut row = match &dtd {
            Some((dtd, dtd_name)) => compare::compare_dtd(&name, &loaded.text, dtd, dtd_name)?,
            None => compare::compare_loaded_with(&name, &loaded, from, options)?,
        };
        row.trace = label;
        if verbosity.verbose {
            eprintln!(
                "hatf: {name}: format {}, {} records, {} bytes of text",
                row.format, row.records, row.text.raw
            );
        }
        comparison.rows.push(row);
    }

    drop(spinner);
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&render::json(&comparison))
            .map_err(|e| CliError::input(format!("cannot write JSON: {e}")))?;
        s.push('\n');
        s
    } else if args.csv {
        render::csv(&comparison)
    } else {
        render::table(&comparison)
    };
    if let Some(plot) = &args.plot {
        // The chart goes to a file next to the printed table; an existing file is replaced, as
        // asking for a plot by name is asking for that file.
        let mut out = create_output(Some(plot), true, Content::Text)?;
        out.writer()
            .write_all(plot::svg(&comparison).as_bytes())
            .map_err(|e| CliError::input(format!("{}: cannot write: {e}", out.name)))?;
        out.commit()?;
        if verbosity.verbose {
            eprintln!("hatf: wrote {}", plot.display());
        }
    }
    let mut stdout = create_output(None, false, Content::Text)?;
    if !verbosity.quiet || args.json || args.csv {
        stdout
            .writer()
            .write_all(text.as_bytes())
            .map_err(|e| CliError::input(format!("<stdout>: cannot write: {e}")))?;
    }
    stdout.commit()
}

/// Reads a trace to compare (a file, or standard input for `-`) and its text: unpacked as
/// `hatf compare` always did (zip, zstd, gzip), or from bzip2 or xz. Returns the name to show.
fn load(path: &Path) -> CliResult<(String, input::Loaded)> {
    let opened = open_input(Some(path), TEXT_READ_AHEAD)?;
    let name = opened.name;
    let read_all = |reader: Box<dyn Read + Send>| -> CliResult<Vec<u8>> {
        let mut bytes = Vec::new();
        reader
            .take(input::MAX_TEXT + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
        if bytes.len() as u64 > input::MAX_TEXT {
            return Err(CliError::input(format!(
                "{name}: larger than 1 GiB of text; compare a part of it"
            )));
        }
        Ok(bytes)
    };
    let original = read_all(opened.reader)?;
    let text = match Wrapper::detect(&original) {
        Some(wrapper @ (Wrapper::Bzip2 | Wrapper::Xz)) => {
            let reader = wrapper
                .reader(Box::new(std::io::Cursor::new(original.clone())))
                .map_err(|e| CliError::input(format!("{name}: {e}")))?;
            read_all(reader)?
        }
        _ => input::unpack(original.clone(), &name)?,
    };
    Ok((name.clone(), input::Loaded { original, text }))
}
