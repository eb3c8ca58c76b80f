//! Opening a trace that may be text or binary as *text*, for commands that analyse text traces.
//!
//! A binary trace is decoded on a second thread and streamed through a pipe, so analysing it takes
//! no more memory than analysing its text.

use crate::compressed::Wrapper;
use crate::error::{CliError, CliResult};
use crate::io::Input;
use crate::peek::{container_first_block, Replayed};
use hatf::format::{DecodeOptions, TraceFormat};
use metatf::container::looks_like_container;
use std::io::{Cursor, Read};
use std::thread::JoinHandle;

/// How many bytes of the input the format detectors look at.
pub const DETECT_BYTES: usize = 64 * 1024;

/// A text trace ready to read, with its format.
pub struct TextTrace {
    /// The format of the text.
    pub format: &'static dyn TraceFormat,
    /// The text.
    pub reader: Box<dyn Read + Send>,
    /// The decoding thread, when the input was binary; join it to learn whether decoding failed.
    pub decoder: Option<JoinHandle<Result<u64, hatf::FormatError>>>,
    /// Name files (file name, bytes) stored in a binary input, to name what analyses count.
    pub name_files: Vec<(String, Vec<u8>)>,
}

/// Picks a format by name, or detects it from the first bytes when `from` is `auto`.
pub fn choose_format(from: &str, head: &[u8], name: &str) -> CliResult<&'static dyn TraceFormat> {
    if from != "auto" {
        return hatf::by_name(from).ok_or_else(|| {
            CliError::usage(format!(
                "unknown format `{from}`; known formats: {}",
                known_formats()
            ))
        });
    }
    hatf::detect(head).ok_or_else(|| {
        CliError::input(format!(
            "{name}: cannot tell what format this is; name it with --from (known formats: {})",
            known_formats()
        ))
    })
}

/// The names accepted by `--from`, for messages.
pub fn known_formats() -> String {
    let mut names: Vec<&str> = hatf::registry().iter().map(|f| f.name()).collect();
    names.push("text");
    names.join(", ")
}

/// Reads up to [`DETECT_BYTES`] from `reader` and returns a reader over the whole input, which
/// replays them first; [`head_of`] shows them.
pub fn read_head<R: Read>(mut reader: R, name: &str) -> CliResult<Replayed<R>> {
    let mut head = Vec::with_capacity(DETECT_BYTES);
    (&mut reader)
        .take(DETECT_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| CliError::input(format!("{name}: cannot read: {e}")))?;
    Ok(Cursor::new(head).chain(reader))
}

/// The first bytes [`read_head`] read (all of them while none were read through the result).
pub fn head_of<R>(whole: &Replayed<R>) -> &[u8] {
    whole.get_ref().0.get_ref()
}

/// A text input opened for reading: its format, and its text (decompressed when it was kept
/// compressed and no format claims the compressed bytes themselves).
pub struct OpenedText {
    /// The format of the text.
    pub format: &'static dyn TraceFormat,
    /// The whole text, the bytes of `head` first.
    pub reader: Box<dyn Read + Send>,
    /// The first bytes of the text (up to [`DETECT_BYTES`]; fewer means that is all of it).
    pub head: Vec<u8>,
    /// The compression the input was unwrapped from.
    pub wrapper: Option<Wrapper>,
}

/// Reads the start of `reader`, picks the format (`from`, or detected when `auto`) and unwraps
/// a gzip, bzip2, xz or zstd input that the format does not read as it is. A format that is
/// itself a compressed file (malloc-bench's `.trace.gz`) is tried on the raw bytes first, so it
/// keeps its bytes.
pub fn open_text(reader: Box<dyn Read + Send>, from: &str, name: &str) -> CliResult<OpenedText> {
    let whole = read_head(reader, name)?;
    let head = head_of(&whole).to_vec();
    let claimed = if from == "auto" {
        hatf::detect(&head)
    } else {
        choose_format(from, &head, name).map(|f| f.detect(&head).then_some(f))?
    };
    if let (None, Some(wrapper)) = (claimed, Wrapper::detect(&head)) {
        let unwrapped = wrapper
            .reader(Box::new(whole))
            .map_err(|e| CliError::input(format!("{name}: {e}")))?;
        let whole = read_head(unwrapped, name)?;
        let head = head_of(&whole).to_vec();
        let format = choose_format(from, &head, name)?;
        return Ok(OpenedText {
            format,
            reader: Box::new(whole),
            head,
            wrapper: Some(wrapper),
        });
    }
    let format = match claimed {
        Some(f) => f,
        None => choose_format(from, &head, name)?,
    };
    Ok(OpenedText {
        format,
        reader: Box::new(whole),
        head,
        wrapper: None,
    })
}

/// Opens `input` as a text trace: text is read as is or unwrapped (format from `from`), binary
/// is decoded.
pub fn open_text_trace(input: Input, from: &str) -> CliResult<TextTrace> {
    let name = input.name;
    let whole = read_head(input.reader, &name)?;
    // A binary trace kept compressed (`trace.hatf.zst`): what no format claims as it is, and
    // unwraps to a container, is read as that container.
    let head = head_of(&whole);
    let whole: Box<dyn Read + Send> = match Wrapper::detect(head) {
        Some(wrapper) if from == "auto" && hatf::detect(head).is_none() => {
            let unwrapped = wrapper
                .reader(Box::new(whole))
                .map_err(|e| CliError::input(format!("{name}: {e}")))?;
            Box::new(read_head(unwrapped, &name)?)
        }
        _ => Box::new(whole),
    };
    let whole = read_head(whole, &name)?;
    if !looks_like_container(head_of(&whole)) {
        let opened = open_text(Box::new(whole), from, &name)?;
        return Ok(TextTrace {
            format: opened.format,
            reader: opened.reader,
            decoder: None,
            name_files: Vec::new(),
        });
    }
    let (header, first_block, mut binary) = container_first_block(whole, &name)?;
    let format = hatf::by_name(&header.format).ok_or_else(|| {
        CliError::input(format!(
            "{name}: holds records of format `{}`, which this hatf cannot read as text",
            header.format
        ))
    })?;
    let name_files = match &first_block {
        Some(block) => format
            .stored_names(block)
            .map_err(|m| CliError::input(format!("{name}: block 0: {m}")))?,
        None => Vec::new(),
    };
    drop(first_block);
    let (pipe_reader, mut pipe_writer) =
        std::io::pipe().map_err(|e| CliError::input(format!("cannot create a pipe: {e}")))?;
    let options = DecodeOptions {
        input_name: name,
        names_dir: None,
        threads: 1,
        positioned: None,
    };
    let decoder =
        std::thread::spawn(move || format.decode(&mut binary, &mut pipe_writer, &options));
    Ok(TextTrace {
        format,
        reader: Box::new(pipe_reader),
        decoder: Some(decoder),
        name_files,
    })
}

/// Waits for a decoding thread and turns its failure into the command's error.
pub fn finish(trace_decoder: Option<JoinHandle<Result<u64, hatf::FormatError>>>) -> CliResult {
    match trace_decoder.map(|handle| handle.join()) {
        None | Some(Ok(Ok(_))) => Ok(()),
        Some(Ok(Err(e))) => Err(e.into()),
        Some(Err(_)) => Err(CliError::input(
            "decoding the binary trace failed unexpectedly",
        )),
    }
}

/// What an analysis of a text trace found, with the names it is reported under.
pub struct Analysed<T> {
    /// The analysis' result.
    pub result: T,
    /// The input's name, for messages.
    pub name: String,
    /// The trace's format.
    pub format: &'static dyn TraceFormat,
}

/// Opens `input` (a file, or standard input) as a text trace with a progress bar, runs one of
/// the format's analyses over it (`stats`, `validate`), and waits for the decoder behind a
/// binary input. `command` names the subcommand in the error for a format without it. The
/// analysis is also given the name files a binary input stores.
pub fn analyse<T>(
    input: Option<&std::path::Path>,
    from: &str,
    verbosity: crate::Verbosity,
    command: &str,
    analysis: impl FnOnce(
        &'static dyn TraceFormat,
        &mut dyn Read,
        &str,
        &[(String, Vec<u8>)],
    ) -> Option<Result<T, hatf::FormatError>>,
) -> CliResult<Analysed<T>> {
    let input = crate::progress::track(
        crate::io::open_input(input, crate::io::TEXT_READ_AHEAD)?,
        verbosity,
        "reading",
    );
    let name = input.name.clone();
    let mut trace = open_text_trace(input, from)?;
    let result = analysis(trace.format, &mut trace.reader, &name, &trace.name_files).ok_or_else(
        || {
            CliError::not_built(&format!(
                "`hatf {command}` for `{}` traces",
                trace.format.name()
            ))
        },
    )??;
    drop(trace.reader);
    finish(trace.decoder)?;
    Ok(Analysed {
        result,
        name,
        format: trace.format,
    })
}
