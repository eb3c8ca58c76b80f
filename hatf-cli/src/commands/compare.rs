//! `hatf compare`.

use crate::args::CompareArgs;
use crate::error::{CliError, CliResult};
use crate::io::{create_output, Content};
use crate::Verbosity;
use hatf::compare::{self, input, Comparison};

/// Runs `hatf compare`.
pub fn run(args: &CompareArgs, verbosity: Verbosity) -> CliResult {
    let mut comparison = Comparison::default();
    if args.inputs.is_empty() {
        let (name, text) = compare::sample();
        if verbosity.verbose {
            eprintln!("hatf: comparing the built-in sample {name}");
        }
        comparison.rows.push(compare::compare_text(name, text)?);
    }
    for path in &args.inputs {
        let name = path.display().to_string();
        if verbosity.verbose {
            eprintln!("hatf: reading {name}");
        }
        let loaded = input::load_both(path)?;
        let label = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.clone());
        let mut row = compare::compare_loaded(&name, &loaded)?;
        row.trace = label;
        if verbosity.verbose {
            eprintln!(
                "hatf: {name}: format {}, {} records, {} bytes of text",
                row.format, row.records, row.text.raw
            );
        }
        comparison.rows.push(row);
    }

    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&compare::render::json(&comparison))
            .map_err(|e| CliError::input(format!("cannot write JSON: {e}")))?;
        s.push('\n');
        s
    } else if args.csv {
        compare::render::csv(&comparison)
    } else {
        compare::render::table(&comparison)
    };
    if let Some(plot) = &args.plot {
        // The chart goes to a file next to the printed table; an existing file is replaced, as
        // asking for a plot by name is asking for that file.
        let mut out = create_output(Some(plot), true, Content::Text)?;
        out.writer()
            .write_all(crate::plot::svg(&comparison).as_bytes())
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
