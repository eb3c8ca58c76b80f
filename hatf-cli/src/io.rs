//! Opening inputs and outputs with the command's conventions.
//!
//! - an absent path or `-` is standard input / standard output;
//! - binary output is never written to a terminal;
//! - an existing output file is kept unless `--force`;
//! - files are written to a temporary file in the same folder and renamed into place only when
//!   everything succeeded, so a failed or killed run never leaves a partial file under the final name;
//! - a closed pipe on standard output ends the command quietly.

use crate::data_stdout::{data_stdout, DataStdout};
use crate::error::{CliError, CliResult};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// A readable input and the name to use for it in messages.
pub struct Input {
    /// `<stdin>` or the path as given.
    pub name: String,
    /// The bytes.
    pub reader: Box<dyn Read + Send>,
    /// Size in bytes, when the input is a regular file.
    pub len: Option<u64>,
}

/// True when `path` means standard input/output.
fn is_std(path: Option<&Path>) -> bool {
    path.is_none_or(|p| p.as_os_str() == "-")
}

/// Bytes read ahead from a binary input file (the container readers ask for small pieces).
pub const BINARY_READ_AHEAD: usize = 1 << 20;

/// Bytes read ahead from a text input file. The text encoders read their input in pieces of
/// a quarter of a megabyte or more, which go past a smaller buffer straight into theirs; with
/// a 1 MiB buffer the first megabyte was read into it and then copied (256 more pages to fault
/// in, a fixed cost of every encode). Encoders that read in small pieces are still buffered.
pub const TEXT_READ_AHEAD: usize = 64 << 10;

/// Opens INPUT (or standard input), reading a file `read_ahead` bytes at a time.
pub fn open_input(path: Option<&Path>, read_ahead: usize) -> CliResult<Input> {
    if is_std(path) {
        return Ok(Input {
            name: "<stdin>".into(),
            reader: Box::new(io::stdin()),
            len: None,
        });
    }
    let path = path.unwrap_or(Path::new("-"));
    let file = File::open(path)
        .map_err(|e| CliError::input(format!("{}: cannot open: {}", path.display(), e)))?;
    let metadata = file.metadata().ok();
    if metadata.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(CliError::input(format!(
            "{}: is a folder, not a trace file",
            path.display()
        )));
    }
    Ok(Input {
        name: path.display().to_string(),
        reader: Box::new(BufReader::with_capacity(read_ahead, file)),
        len: metadata.filter(|m| m.is_file()).map(|m| m.len()),
    })
}

/// What kind of bytes an output receives, which decides whether a terminal may get them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Binary trace data: refused on a terminal.
    Binary,
    /// Text: fine anywhere.
    Text,
}

/// An output being written; call [`Output::commit`] once everything succeeded.
pub struct Output {
    /// `<stdout>` or the final path.
    pub name: String,
    target: Target,
}

enum Target {
    Stdout(BufWriter<DataStdout>),
    /// An existing device, FIFO or socket (e.g. `/dev/null`): written in place, because renaming
    /// a file over it would replace the device node with a regular file.
    Special(BufWriter<File>),
    File {
        temp: tempfile::NamedTempFile,
        writer: Option<BufWriter<File>>,
        final_path: PathBuf,
    },
}

/// Bytes an output buffers before writing: binary output is written by the encoders in small
/// pieces; text comes from the decoders in pieces of hundreds of kilobytes, which a buffer at
/// least as large would copy once more (a larger piece goes past it untouched).
fn buffer_size(content: Content) -> usize {
    match content {
        Content::Binary => 1 << 20,
        Content::Text => 1 << 16,
    }
}

/// Opens OUTPUT (or standard output) following the conventions above.
pub fn create_output(path: Option<&Path>, force: bool, content: Content) -> CliResult<Output> {
    if is_std(path) {
        let stdout = data_stdout();
        if content == Content::Binary && stdout.is_terminal() {
            return Err(CliError::usage(
                "refusing to write binary data to a terminal; use -o FILE or redirect standard output",
            ));
        }
        return Ok(Output {
            name: "<stdout>".into(),
            target: Target::Stdout(BufWriter::new(stdout)),
        });
    }
    let final_path = path.unwrap_or(Path::new("-")).to_path_buf();
    if final_path.exists() && !force {
        return Err(CliError::usage(format!(
            "{}: already exists; use -f/--force to overwrite it",
            final_path.display()
        )));
    }
    if let Ok(meta) = std::fs::metadata(&final_path) {
        if !meta.is_file() && !meta.is_dir() {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&final_path)
                .map_err(|e| CliError::input(format!("{}: {}", final_path.display(), e)))?;
            return Ok(Output {
                name: final_path.display().to_string(),
                target: Target::Special(BufWriter::with_capacity(buffer_size(content), file)),
            });
        }
    }
    let folder = match final_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let temp = tempfile::Builder::new()
        .prefix(".hatf-partial-")
        .tempfile_in(&folder)
        .map_err(|e| {
            CliError::input(format!(
                "{}: cannot create a file there: {}",
                folder.display(),
                e
            ))
        })?;
    let file = temp
        .reopen()
        .map_err(|e| CliError::input(format!("{}: {}", temp.path().display(), e)))?;
    Ok(Output {
        name: final_path.display().to_string(),
        target: Target::File {
            temp,
            writer: Some(BufWriter::with_capacity(buffer_size(content), file)),
            final_path,
        },
    })
}

impl Output {
    /// The file being written, for a decoder that may write its text at offsets
    /// (`DecodeOptions::positioned`): only a new file (never standard output or a device,
    /// which must be written in order), and only while nothing is buffered for it.
    pub fn positioned_file(&self) -> Option<std::sync::Arc<File>> {
        match &self.target {
            Target::File {
                temp,
                writer: Some(w),
                ..
            } if w.buffer().is_empty() => temp.as_file().try_clone().ok().map(std::sync::Arc::new),
            _ => None,
        }
    }

    /// The writer to send bytes to.
    pub fn writer(&mut self) -> &mut dyn Write {
        match &mut self.target {
            Target::Stdout(w) => w,
            Target::Special(w) => w,
            Target::File { writer, .. } => writer.as_mut().expect("writer taken only by commit"),
        }
    }

    /// Flushes everything and, for a file, renames the temporary file into place.
    pub fn commit(self) -> CliResult {
        let name = self.name;
        match self.target {
            Target::Stdout(mut w) => flush_stdout(&mut w),
            Target::Special(mut w) => w
                .flush()
                .map_err(|e| CliError::input(format!("{name}: cannot write: {e}"))),
            Target::File {
                temp,
                mut writer,
                final_path,
            } => {
                if let Some(w) = writer.take() {
                    let file = w.into_inner().map_err(|e| {
                        CliError::input(format!("{name}: cannot write: {}", e.error()))
                    })?;
                    file.sync_all()
                        .map_err(|e| CliError::input(format!("{name}: cannot write: {e}")))?;
                }
                // A temporary file is created private (0600); the finished output gets the
                // permissions an ordinary new file would have.
                set_ordinary_permissions(temp.path())
                    .map_err(|e| CliError::input(format!("{name}: cannot set permissions: {e}")))?;
                temp.persist(&final_path).map_err(|e| {
                    CliError::input(format!("{name}: cannot rename into place: {}", e.error))
                })?;
                Ok(())
            }
        }
    }
}

#[cfg(unix)]
fn set_ordinary_permissions(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_ordinary_permissions(_path: &Path) -> io::Result<()> {
    Ok(())
}

fn flush_stdout(w: &mut BufWriter<DataStdout>) -> CliResult {
    match w.flush() {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::input(format!("<stdout>: cannot write: {e}"))),
    }
}

/// True when an I/O error is a closed pipe on standard output, which is not a failure.
pub fn is_broken_pipe(message: &str) -> bool {
    message.contains("Broken pipe") || message.contains("broken pipe")
}
