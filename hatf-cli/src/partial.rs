//! The temporary files an output is written to before it is renamed into place.
//!
//! Each is named `.hatf-partial-<pid>-<random>` in the output's folder. A run stopped by
//! SIGINT, SIGTERM or SIGHUP removes its own before dying of the signal; one that could not
//! (SIGKILL, a crash, a power cut) leaves its file behind, and the next run writing into that
//! folder removes the partial files whose writer is no longer alive.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What every partial file's name starts with.
pub const PREFIX: &str = ".hatf-partial-";

/// The partial files this process is writing, removed when a signal stops it.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The name prefix of this process's partial files.
pub fn own_prefix() -> String {
    format!("{PREFIX}{}-", std::process::id())
}

/// Removes a partial file when dropped from the list of those a signal must clean up.
pub struct Registration(PathBuf);

/// Adds `path` to the files a signal removes, until the registration is dropped.
pub fn register(path: &Path) -> Registration {
    if let Ok(mut live) = LIVE.lock() {
        live.push(path.to_path_buf());
    }
    Registration(path.to_path_buf())
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|p| p != &self.0);
        }
    }
}

/// Starts a thread that, on SIGINT, SIGTERM or SIGHUP, removes the partial files being written
/// and then lets the signal end the process as it would have (same exit status for the shell).
#[cfg(unix)]
pub fn clean_up_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let live = LIVE.lock().map(|l| l.clone()).unwrap_or_default();
            for path in live {
                let _ = std::fs::remove_file(path);
            }
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
}

/// Signals are not caught outside Unix.
#[cfg(not(unix))]
pub fn clean_up_on_signals() {}

/// The process id in a partial file's name, when it has one.
fn writer_pid(file_name: &str) -> Option<u32> {
    let rest = file_name.strip_prefix(PREFIX)?;
    let (pid, _) = rest.split_once('-')?;
    pid.parse().ok()
}

/// True when a process with this id exists (or may: a process of another user is alive too).
#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 sends nothing; kill only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Without a way to ask, every writer is taken to be alive and nothing is removed.
#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true
}

/// Removes from `folder` the partial files left by writers that are no longer running; returns
/// how many. Files of live writers, and files named otherwise, are never touched.
pub fn remove_stale(folder: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0;
    };
    let own = std::process::id();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(writer_pid) else {
            continue;
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && pid != own && !alive(pid) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_is_read_from_the_name() {
        assert_eq!(writer_pid(".hatf-partial-1234-aB3x9q"), Some(1234));
        assert_eq!(writer_pid(".hatf-partial-aB3x9q"), None);
        assert_eq!(writer_pid("trace.hatf"), None);
        assert!(own_prefix().starts_with(PREFIX));
        assert_eq!(
            writer_pid(&format!("{}x", own_prefix())),
            Some(std::process::id())
        );
    }

    #[cfg(unix)]
    #[test]
    fn only_partials_of_dead_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A child that has been waited for is certainly dead.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = dir.path().join(format!("{PREFIX}{dead}-x1"));
        let mine = dir.path().join(format!("{}x2", own_prefix()));
        let other = dir.path().join("trace.hatf");
        for p in [&stale, &mine, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        assert!(alive(std::process::id()));
        assert!(!alive(dead));
        assert_eq!(remove_stale(dir.path()), 1);
        assert!(!stale.exists() && mine.exists() && other.exists());
    }
}
