//! `hatf dtd check|infer|fmt|compile`.

use crate::args::{DtdCommand, OutputArgs};
use crate::error::{CliError, CliResult};
use crate::io::{create_output, Content};
use crate::Verbosity;
use std::path::{Path, PathBuf};

/// Runs `hatf dtd ...`.
pub fn run(command: &DtdCommand, verbosity: Verbosity) -> CliResult {
    match command {
        DtdCommand::Check { files } => check(files, verbosity),
        DtdCommand::Infer { file } => infer(file.as_deref()),
        DtdCommand::Fmt { file } => fmt(file),
        DtdCommand::Compile { file, out } => compile(file, out),
    }
}

fn read_dtd(path: &Path) -> CliResult<String> {
    std::fs::read_to_string(path)
        .map_err(|e| CliError::input(format!("{}: cannot read: {e}", path.display())))
}

/// Checks every file, printing all errors of all files before failing.
fn check(files: &[PathBuf], verbosity: Verbosity) -> CliResult {
    let mut failed = 0usize;
    for path in files {
        let name = path.display().to_string();
        let source = match read_dtd(path) {
            Ok(source) => source,
            Err(e) => {
                eprintln!("hatf: error: {e}");
                failed += 1;
                continue;
            }
        };
        match metatf_dtd::parse_schema(&source, &name) {
            Ok(schema) => {
                if !verbosity.quiet {
                    let records: usize = schema.sections.iter().map(|s| s.records.len()).sum();
                    crate::data_stdout::print(&format!(
                        "{name}: ok ({} sections, {records} records)\n",
                        schema.sections.len()
                    ))?;
                }
            }
            Err(diagnostics) => {
                eprint!("{diagnostics}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(CliError::input(format!(
            "{failed} of {} DTD files have errors",
            files.len()
        )));
    }
    Ok(())
}

/// Prints a DTD inferred from the start of a text trace.
fn infer(path: Option<&Path>) -> CliResult {
    let input = crate::io::open_input(path, crate::io::TEXT_READ_AHEAD)?;
    let (reader, _) = crate::lines_input::unwrap_text(input.reader, &input.name)?;
    let mut text = std::io::BufReader::new(reader);
    let sample = crate::lines_input::read_sample(&mut text, &input.name)?;
    let dtd = metatf::lines::infer::infer_dtd(&sample);
    let mut out = create_output(None, false, Content::Text)?;
    out.writer()
        .write_all(dtd.as_bytes())
        .map_err(|e| CliError::input(format!("<stdout>: cannot write: {e}")))?;
    out.commit()
}

fn fmt(path: &Path) -> CliResult {
    let name = path.display().to_string();
    let source = read_dtd(path)?;
    let formatted =
        metatf_dtd::format_dtd(&source, &name).map_err(|d| CliError::input(d.to_string()))?;
    let mut out = create_output(None, false, Content::Text)?;
    out.writer()
        .write_all(formatted.as_bytes())
        .map_err(|e| CliError::input(format!("<stdout>: cannot write: {e}")))?;
    out.commit()
}

/// Generates Rust types and codecs for the DTD, to stdout or `-o FILE`.
fn compile(path: &Path, out: &OutputArgs) -> CliResult {
    let name = path.display().to_string();
    let source = read_dtd(path)?;
    let schema =
        metatf_dtd::parse_schema(&source, &name).map_err(|d| CliError::input(d.to_string()))?;
    let code = metatf_dtd::codegen::generate(&schema, &source);
    let mut output = create_output(out.output.as_deref(), out.force, Content::Text)?;
    output
        .writer()
        .write_all(code.as_bytes())
        .map_err(|e| CliError::input(format!("{}: cannot write: {e}", output.name)))?;
    output.commit()
}
