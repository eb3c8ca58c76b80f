//! Opening inputs and outputs with the command's conventions.
//!
//! - an absent path or `-` is standard input / standard output;
//! - binary output is never written to a terminal;
//! - decoded text that turns out to be binary (a zip, a gzip stream) is not written to a terminal;
//! - an existing output file is kept unless `--force`, and the input is never its own output;
//! - a device, FIFO or socket (`/dev/null`) is written in place, without `--force`;
//! - files are written to a temporary file in the same folder (see [`crate::partial`]) and
//!   renamed into place only when everything succeeded, without replacing a file that appeared
//!   at the output path meanwhile (unless `--force`), so a failed or killed run never leaves a
//!   partial file under the final name;
//! - an error writing the output names the output;
//! - a closed pipe on standard output ends the command quietly.

use crate::data_stdout::{data_stdout, DataStdout};
use crate::error::{CliError, CliResult};
use crate::partial;
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
    /// Which file it is on its device, to refuse writing the output over it.
    pub identity: Option<FileIdentity>,
}

/// A file's device and inode: two paths naming the same file have the same identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
}

impl FileIdentity {
    /// The identity of the file described by `metadata`.
    #[cfg(unix)]
    pub fn of(metadata: &std::fs::Metadata) -> Option<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        Some(FileIdentity {
            device: metadata.dev(),
            inode: metadata.ino(),
        })
    }

    /// Not known outside Unix.
    #[cfg(not(unix))]
    pub fn of(_metadata: &std::fs::Metadata) -> Option<FileIdentity> {
        None
    }
}

/// True when `path` means standard input/output.
pub fn is_std(path: Option<&Path>) -> bool {
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
            identity: None,
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
        len: metadata.as_ref().filter(|m| m.is_file()).map(|m| m.len()),
        identity: metadata
            .as_ref()
            .filter(|m| m.is_file())
            .and_then(FileIdentity::of),
    })
}

/// What kind of bytes an output receives, which decides whether a terminal may get them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Binary trace data: refused on a terminal.
    Binary,
    /// Text: fine anywhere.
    Text,
    /// What a decoder gives back: text, except for formats whose original is itself binary (a
    /// memory_replay zip, a malloc-bench `.trace.gz`); refused on a terminal when its first bytes
    /// are binary.
    Decoded,
}

/// An output being written; call [`Output::commit`] once everything succeeded.
pub struct Output {
    /// `<stdout>` or the final path.
    pub name: String,
    target: Target,
}

enum Target {
    Stdout(BufWriter<Watched<DataStdout>>),
    /// An existing device, FIFO or socket (e.g. `/dev/null`): written in place, because renaming
    /// a file over it would replace the device node with a regular file.
    Special(BufWriter<Watched<File>>),
    File {
        temp: tempfile::NamedTempFile,
        writer: Option<BufWriter<Watched<File>>>,
        final_path: PathBuf,
        force: bool,
        _registration: partial::Registration,
    },
}

/// A writer that keeps the first error it met, so that a command whose encoder or decoder failed
/// while writing can say it was the output (a full disk) rather than the input.
pub struct Watched<W> {
    inner: W,
    /// Refuse a first write that looks binary (decoded output on a terminal).
    refuse_binary: bool,
    failure: Option<String>,
    /// Bytes written through it (positioned writes of a decoder go around it).
    written: u64,
}

impl<W> Watched<W> {
    fn new(inner: W, refuse_binary: bool) -> Self {
        Watched {
            inner,
            refuse_binary,
            failure: None,
            written: 0,
        }
    }
}

/// True when `bytes`, the start of an output, are not text: a NUL byte, or the start of a zip or
/// gzip file.
fn looks_binary(bytes: &[u8]) -> bool {
    let start = &bytes[..bytes.len().min(4096)];
    start.contains(&0) || start.starts_with(b"PK\x03\x04") || start.starts_with(&[0x1f, 0x8b])
}

/// What a refused binary output says.
const BINARY_TO_TERMINAL: &str =
    "refusing to write binary data to a terminal; use -o FILE or redirect standard output";

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.refuse_binary && !buf.is_empty() {
            if looks_binary(buf) {
                self.failure = Some(BINARY_TO_TERMINAL.into());
                return Err(io::Error::other(BINARY_TO_TERMINAL));
            }
            self.refuse_binary = false;
        }
        let n = self.inner.write(buf).inspect_err(|e| self.note(e))?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().inspect_err(|e| self.note(e))
    }
}

impl<W> Watched<W> {
    fn note(&mut self, e: &io::Error) {
        if self.failure.is_none() && e.kind() != io::ErrorKind::Interrupted {
            self.failure = Some(format!("cannot write: {e}"));
        }
    }
}

/// Bytes an output buffers before writing: binary output is written by the encoders in small
/// pieces; text comes from the decoders in pieces of hundreds of kilobytes, which a buffer at
/// least as large would copy once more (a larger piece goes past it untouched).
fn buffer_size(content: Content) -> usize {
    match content {
        Content::Binary => 1 << 20,
        Content::Text | Content::Decoded => 1 << 16,
    }
}

/// Opens OUTPUT (or standard output) following the conventions above.
pub fn create_output(path: Option<&Path>, force: bool, content: Content) -> CliResult<Output> {
    if is_std(path) {
        let stdout = data_stdout();
        let terminal = stdout.is_terminal();
        if content == Content::Binary && terminal {
            return Err(CliError::usage(BINARY_TO_TERMINAL));
        }
        let refuse_binary = content == Content::Decoded && terminal;
        return Ok(Output {
            name: "<stdout>".into(),
            target: Target::Stdout(BufWriter::new(Watched::new(stdout, refuse_binary))),
        });
    }
    let final_path = path.unwrap_or(Path::new("-")).to_path_buf();
    let shown = final_path.display().to_string();
    if let Ok(meta) = std::fs::metadata(&final_path) {
        if meta.is_dir() {
            return Err(CliError::usage(format!("{shown}: is a folder")));
        }
        if !meta.is_file() {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&final_path)
                .map_err(|e| CliError::input(format!("{shown}: {e}")))?;
            return Ok(Output {
                name: shown,
                target: Target::Special(BufWriter::with_capacity(
                    buffer_size(content),
                    Watched::new(file, false),
                )),
            });
        }
        if !force {
            return Err(CliError::usage(format!(
                "{shown}: already exists; use -f/--force to overwrite it"
            )));
        }
    }
    let folder = match final_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    partial::remove_stale(&folder);
    let temp = tempfile::Builder::new()
        .prefix(&partial::own_prefix())
        .tempfile_in(&folder)
        .map_err(|e| {
            CliError::input(format!(
                "{}: cannot create a file there: {}",
                folder.display(),
                e
            ))
        })?;
    let registration = partial::register(temp.path());
    let file = temp
        .reopen()
        .map_err(|e| CliError::input(format!("{}: {}", temp.path().display(), e)))?;
    Ok(Output {
        name: shown,
        target: Target::File {
            temp,
            writer: Some(BufWriter::with_capacity(
                buffer_size(content),
                Watched::new(file, false),
            )),
            final_path,
            force,
            _registration: registration,
        },
    })
}

/// [`create_output`] for the output of `input`, refused when it is the input itself (whatever
/// `force` says: the input would be gone before it was read).
pub fn create_output_for(
    path: Option<&Path>,
    force: bool,
    content: Content,
    input: Option<FileIdentity>,
    input_name: &str,
) -> CliResult<Output> {
    if let (Some(out), Some(identity)) = (path.filter(|p| !is_std(Some(p))), input) {
        let same = std::fs::metadata(out)
            .ok()
            .and_then(|m| FileIdentity::of(&m))
            .is_some_and(|o| o == identity);
        if same {
            return Err(CliError::usage(format!(
                "{}: is the input {input_name}; refusing to write the output over it",
                out.display(),
            )));
        }
    }
    create_output(path, force, content)
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

    /// [`Output::writer`] for a writer that may be handed to another thread (the Parquet
    /// writer requires it).
    pub fn send_writer(&mut self) -> &mut (dyn Write + Send) {
        match &mut self.target {
            Target::Stdout(w) => w,
            Target::Special(w) => w,
            Target::File { writer, .. } => writer.as_mut().expect("writer taken only by commit"),
        }
    }

    /// True when the output is a terminal that takes text only (decoded output on a terminal):
    /// a decoder known to give back a binary file is refused before it does the work.
    pub fn refuses_binary(&self) -> bool {
        matches!(&self.target, Target::Stdout(w) if w.get_ref().refuse_binary)
    }

    /// The usage error for binary data on a terminal.
    pub fn binary_refused() -> CliError {
        CliError::usage(BINARY_TO_TERMINAL)
    }

    /// The error met writing the output, when there was one: call it when a command failed, to
    /// report the output's error (a full disk) rather than the input's name.
    pub fn failure(&self) -> Option<CliError> {
        let failure = match &self.target {
            Target::Stdout(w) => &w.get_ref().failure,
            Target::Special(w) => &w.get_ref().failure,
            Target::File {
                writer: Some(w), ..
            } => &w.get_ref().failure,
            Target::File { writer: None, .. } => &None,
        };
        let message = failure.as_ref()?;
        Some(if message == BINARY_TO_TERMINAL {
            CliError::usage(message.clone())
        } else {
            CliError::input(format!("{}: {message}", self.name))
        })
    }

    /// The command's error for `error`, which happened while this output was being written:
    /// the output's own error when writing it failed, else `error` as it is.
    pub fn blame(&self, error: impl Into<CliError>) -> CliError {
        self.failure().unwrap_or_else(|| error.into())
    }

    /// Flushes everything and, for a file, renames the temporary file into place.
    pub fn commit(self) -> CliResult {
        self.commit_counted().map(|_| ())
    }

    /// [`Output::commit`], returning the size of the output in bytes.
    pub fn commit_counted(self) -> CliResult<u64> {
        let name = self.name;
        match self.target {
            Target::Stdout(mut w) => flush_stdout(&mut w).map(|()| w.get_ref().written),
            Target::Special(mut w) => w
                .flush()
                .map(|()| w.get_ref().written)
                .map_err(|e| CliError::input(format!("{name}: cannot write: {e}"))),
            Target::File {
                temp,
                mut writer,
                final_path,
                force,
                _registration,
            } => {
                let mut size = 0;
                if let Some(w) = writer.take() {
                    let file = w
                        .into_inner()
                        .map_err(|e| {
                            CliError::input(format!("{name}: cannot write: {}", e.error()))
                        })?
                        .inner;
                    file.sync_all()
                        .map_err(|e| CliError::input(format!("{name}: cannot write: {e}")))?;
                    // The file's length, which counts a decoder's positioned writes too.
                    size = file.metadata().map(|m| m.len()).unwrap_or(0);
                }
                // A temporary file is created private (0600); the finished output gets the
                // permissions an ordinary new file would have.
                set_ordinary_permissions(temp.path())
                    .map_err(|e| CliError::input(format!("{name}: cannot set permissions: {e}")))?;
                let persisted = if force {
                    temp.persist(&final_path)
                } else {
                    // Another program (or another hatf) may have created the file since it was
                    // found absent: it is kept, and this output given up. tempfile renames with
                    // RENAME_NOREPLACE where the kernel and file system have it, else links the
                    // new name and unlinks the old (which fails if the name exists).
                    match temp.persist_noclobber(&final_path) {
                        // A file system with neither (no hard links: FAT, some FUSE mounts)
                        // gets a plain rename after one more look, the best left to do.
                        Err(e)
                            if e.error.kind() != io::ErrorKind::AlreadyExists
                                && !final_path.exists() =>
                        {
                            e.file.persist(&final_path)
                        }
                        other => other,
                    }
                };
                persisted.map_err(|e| {
                    if e.error.kind() == io::ErrorKind::AlreadyExists {
                        CliError::input(format!(
                            "{name}: was created by something else while hatf was writing it; \
                             left as it is and nothing written (use -f/--force to overwrite it)"
                        ))
                    } else {
                        CliError::input(format!("{name}: cannot rename into place: {}", e.error))
                    }
                })?;
                Ok(size)
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

fn flush_stdout(w: &mut BufWriter<Watched<DataStdout>>) -> CliResult {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watched_writer_refuses_binary_first_bytes_and_keeps_the_first_error() {
        assert!(looks_binary(b"PK\x03\x04rest"));
        assert!(looks_binary(&[0x1f, 0x8b, 8, 0]));
        assert!(looks_binary(b"text\0more"));
        assert!(!looks_binary(b"= Start\n@ ./a:[0x1] + 0x10 0x20\n"));

        let mut refused = Watched::new(Vec::new(), true);
        assert!(refused.write(b"PK\x03\x04").is_err());
        assert_eq!(refused.failure.as_deref(), Some(BINARY_TO_TERMINAL));
        assert!(refused.inner.is_empty());

        // Once text has started, later bytes are not judged (a text may hold any byte).
        let mut text = Watched::new(Vec::new(), true);
        text.write_all(b"= Start\n").unwrap();
        text.write_all(b"\0").unwrap();
        assert_eq!(text.inner, b"= Start\n\0");
        assert_eq!(text.written, 9);

        #[cfg(unix)]
        {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
            if let Ok(full) = full {
                let mut w = Watched::new(full, false);
                assert!(w.write_all(b"x").and_then(|()| w.flush()).is_err());
                let failure = w.failure.unwrap();
                assert!(failure.contains("No space left"), "{failure}");
            }
        }
    }
}
