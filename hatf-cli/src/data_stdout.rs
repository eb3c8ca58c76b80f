//! Standard output, reserved for what hatf itself writes there.
//!
//! Some libraries hatf calls write diagnostics with `println!` (preflate-rs does when it cannot
//! analyse a deflate stream). Mixed into an encoded file or decoded text that hatf sends to
//! standard output, such a line would corrupt it. So once the arguments are parsed, hatf keeps a
//! duplicate of descriptor 1 for its own output and points descriptor 1 at standard error,
//! where a library's lines do no harm.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::sync::OnceLock;

use crate::error::{CliError, CliResult};

/// The duplicate of the original standard output, when reserving it worked.
static RESERVED: OnceLock<Option<File>> = OnceLock::new();

/// Reserves standard output (see the module documentation). Call once, after parsing the
/// arguments (clap prints help to standard output) and before anything else is written.
pub fn reserve() {
    RESERVED.get_or_init(|| divert().ok());
}

#[cfg(unix)]
fn divert() -> io::Result<File> {
    use std::os::fd::AsFd;
    let kept = io::stdout().as_fd().try_clone_to_owned()?;
    // SAFETY: dup2 only changes which open file descriptor 1 names; it reads and writes no
    // memory, and nothing in this process holds descriptor 1 as an owned Rust object (`Stdout`
    // writes to the number, and has written nothing yet).
    if unsafe { libc::dup2(2, 1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(File::from(kept))
}

#[cfg(not(unix))]
fn divert() -> io::Result<File> {
    Err(io::Error::other(
        "standard output is not reserved on this platform",
    ))
}

/// hatf's standard output: the reserved descriptor, or the process's standard output when it
/// was not reserved (no descriptor 1 or 2, or not a Unix system).
pub enum DataStdout {
    /// The duplicate kept by [`reserve`].
    Reserved(File),
    /// Standard output itself.
    Plain(io::Stdout),
}

/// A writer to hatf's standard output.
pub fn data_stdout() -> DataStdout {
    match RESERVED.get().and_then(Option::as_ref).map(File::try_clone) {
        Some(Ok(file)) => DataStdout::Reserved(file),
        _ => DataStdout::Plain(io::stdout()),
    }
}

impl DataStdout {
    /// True when it is a terminal.
    pub fn is_terminal(&self) -> bool {
        match self {
            DataStdout::Reserved(f) => f.is_terminal(),
            DataStdout::Plain(s) => s.is_terminal(),
        }
    }
}

impl Write for DataStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            DataStdout::Reserved(f) => f.write(buf),
            DataStdout::Plain(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            DataStdout::Reserved(f) => f.flush(),
            DataStdout::Plain(s) => s.flush(),
        }
    }
}

/// Writes `text` to hatf's standard output; a failure (a closed pipe above all) is an error
/// the caller returns, where `println!` would panic.
pub fn print(text: &str) -> CliResult {
    let mut out = data_stdout();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::input(format!("<stdout>: cannot write: {e}")))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;

    /// Points descriptor `fd` at `file` until dropped, then back where it was.
    struct Redirect {
        fd: i32,
        saved: i32,
    }

    impl Redirect {
        fn new(fd: i32, file: &File) -> Redirect {
            // SAFETY: dup and dup2 on descriptors this process owns; no Rust object owns 1 or 2.
            let saved = unsafe { libc::dup(fd) };
            assert!(saved >= 0);
            assert!(unsafe { libc::dup2(file.as_raw_fd(), fd) } >= 0);
            Redirect { fd, saved }
        }
    }

    impl Drop for Redirect {
        fn drop(&mut self) {
            // SAFETY: as in `new`; `saved` is ours and closed once.
            unsafe {
                libc::dup2(self.saved, self.fd);
                libc::close(self.saved);
            }
        }
    }

    fn contents(mut f: &File) -> String {
        let mut s = String::new();
        f.rewind().unwrap();
        f.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn a_library_writing_to_descriptor_1_lands_on_stderr_not_in_hatfs_output() {
        let out = tempfile::tempfile().unwrap();
        let err = tempfile::tempfile().unwrap();
        {
            let _stdout = Redirect::new(1, &out);
            let _stderr = Redirect::new(2, &err);
            let mut data = DataStdout::Reserved(divert().unwrap());
            // What a library's println! does: write to descriptor 1.
            let noise = b"library-noise-91c2\n";
            // SAFETY: writes a live buffer of the given length to descriptor 1.
            let n = unsafe { libc::write(1, noise.as_ptr().cast(), noise.len()) };
            assert_eq!(n, noise.len() as isize);
            data.write_all(b"hatf-data-7f3a\n").unwrap();
            data.flush().unwrap();
            // Dropping the guards puts descriptors 2 and then 1 back as they were before.
        }
        // The test harness may print progress lines into either file while they are in place,
        // so the check is on the two markers, not on the whole contents.
        let (out, err) = (contents(&out), contents(&err));
        assert!(
            out.contains("hatf-data-7f3a") && !out.contains("library-noise"),
            "{out:?}"
        );
        assert!(
            err.contains("library-noise-91c2") && !err.contains("hatf-data"),
            "{err:?}"
        );
    }
}
