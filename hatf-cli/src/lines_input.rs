//! `hatf encode --dtd FILE trace.txt` and `--from any`: a line-based text trace encoded through
//! line patterns, given or inferred from the trace's first lines.

use crate::args::{CompressArg, EncodeArgs};
use crate::batch;
use crate::compressed::Wrapper;
use crate::error::{CliError, CliResult};
use crate::io::{create_output_for, open_input, Content, TEXT_READ_AHEAD};
use crate::output_name;
use crate::runtime_error::from_runtime;
use crate::summary;
use crate::text_input::{head_of, read_head};
use crate::Verbosity;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::time::Instant;

/// Bytes of the trace's start that `--from any` and `hatf dtd infer` learn line shapes from.
pub const SAMPLE_BYTES: usize = 4 << 20;

/// Runs `hatf encode` for `--dtd` with line patterns or `--from any`.
pub fn encode(args: &EncodeArgs, verbosity: Verbosity) -> CliResult {
    let started = Instant::now();
    let path = args.inputs.first().map(PathBuf::as_path);
    let input = open_input(path, TEXT_READ_AHEAD)?;
    let name = input.name.clone();
    let (reader, wrapper) = unwrap_text(input.reader, &name)?;
    let mut text: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1 << 20, reader));
    let (dtd, dtd_name) = match &args.dtd {
        Some(path) => {
            let dtd_name = path.display().to_string();
            let dtd = std::fs::read_to_string(path)
                .map_err(|e| CliError::input(format!("{dtd_name}: cannot read: {e}")))?;
            (dtd, dtd_name)
        }
        None => {
            let sample = read_sample(&mut text, &name)?;
            let dtd = metatf::lines::infer::infer_dtd_to_store(&sample);
            // The sample goes back in front of the rest.
            let rest = std::mem::replace(&mut text, Box::new(std::io::empty()));
            text = Box::new(BufReader::new(SampleThenRest {
                sample,
                at: 0,
                rest,
            }));
            (dtd, format!("{name} (inferred DTD)"))
        }
    };
    let codec = args.compress.codec();
    let level = match args.compress {
        CompressArg::None => 0,
        _ => args.level.unwrap_or(metatf::default_level(codec)),
    };
    let options = metatf::lines::LineOptions {
        strict: args.strict,
        model: args.model != "plain",
        stage: if args.model == "fast" {
            metatf::model::Stage::Bytes
        } else {
            metatf::model::Stage::Smallest
        },
        codec,
        level,
    };
    let out_path = batch::destination(&args.out, path, false, |p| {
        Ok(output_name::encoded(p, wrapper))
    })?;
    let mut output = create_output_for(
        out_path.as_deref(),
        args.out.force,
        Content::Binary,
        input.identity,
        &name,
    )?;
    let report = metatf::lines::encode_lines(&dtd, &dtd_name, &mut text, output.writer(), options)
        .map_err(|e| from_runtime(&name, e))?;
    let output_name = output.name.clone();
    let written = output.commit_counted()?;
    if verbosity.verbose {
        eprintln!(
            "hatf: {} lines: {} records, {} kept verbatim",
            report.lines, report.records, report.verbatim
        );
    }
    summary::print(
        verbosity,
        &name,
        report.bytes,
        written,
        &output_name,
        started.elapsed(),
    );
    Ok(())
}

/// The text of `reader`, read through its decompressor when it is kept compressed (gzip,
/// bzip2, xz or zstd, recognised by its first bytes), and the compression it had.
pub fn unwrap_text(
    reader: Box<dyn Read + Send>,
    name: &str,
) -> CliResult<(Box<dyn Read + Send>, Option<Wrapper>)> {
    let whole = read_head(reader, name)?;
    let wrapper = Wrapper::detect(head_of(&whole));
    let text: Box<dyn Read + Send> = match wrapper {
        Some(w) => w
            .reader(Box::new(whole))
            .map_err(|e| CliError::input(format!("{name}: {e}")))?,
        None => Box::new(whole),
    };
    Ok((text, wrapper))
}

/// The sample a DTD was inferred from, then the rest of the text. Why not a `Cursor` chained
/// to the rest: the sample's memory (up to [`SAMPLE_BYTES`]) is freed as soon as it is read,
/// not held while the model codes the blocks, when memory peaks.
struct SampleThenRest<R> {
    sample: Vec<u8>,
    at: usize,
    rest: R,
}

impl<R: Read> Read for SampleThenRest<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at >= self.sample.len() {
            return self.rest.read(buf);
        }
        let n = (self.sample.len() - self.at).min(buf.len());
        buf[..n].copy_from_slice(&self.sample[self.at..self.at + n]);
        self.at += n;
        if self.at == self.sample.len() {
            self.sample = Vec::new();
            self.at = 0;
        }
        Ok(n)
    }
}

/// The first [`SAMPLE_BYTES`] of the text, cut after the last whole line (or all of it).
pub fn read_sample(text: &mut impl BufRead, name: &str) -> CliResult<Vec<u8>> {
    let mut sample = Vec::with_capacity(SAMPLE_BYTES);
    text.take(SAMPLE_BYTES as u64)
        .read_to_end(&mut sample)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    if sample.len() == SAMPLE_BYTES {
        // Finish the last line so that the sample holds whole lines only.
        // At most one more line's worth, so one huge line cannot fill memory.
        text.take(SAMPLE_BYTES as u64)
            .read_until(b'\n', &mut sample)
            .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    }
    Ok(sample)
}
