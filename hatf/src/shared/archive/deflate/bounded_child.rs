//! A child process whose memory and processor time the kernel bounds, for work preflate-rs
//! does on data read from a file (rebuilding a stream from reconstruction data, analysing a
//! deflate stream): hatf can neither interrupt a call into the library nor cap what it
//! allocates, but it can bound a process.
//!
//! The child is forked with a socket to talk to its parent. `RLIMIT_DATA` caps its private
//! writable memory at what it inherited plus a budget; the child's work lowers `RLIMIT_CPU`
//! before each step ([`limit_cpu`]). A child that dies (the kernel's SIGXCPU at the time
//! limit, an abort on a refused allocation) is an error naming the limit, and its messages
//! never reach standard error. (Memory the parent had freed but still maps when it forks is
//! reused by the child without counting: the child's whole footprint is bounded by the
//! parent's at the fork plus the budget.)
//!
//! After `fork` only the calling thread runs in the child. The work must use no lock another
//! thread can hold at that moment except the allocator's, and glibc's `malloc` makes itself
//! consistent in the child across `fork`.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A forked child doing one job, and the parent's end of its socket.
pub struct BoundedChild {
    /// The child's process id; 0 once it was waited for.
    child: libc::pid_t,
    /// The parent's end of the socket.
    pub socket: UnixStream,
    /// Bytes of private writable memory the child may take beyond what it inherits.
    pub memory: u64,
}

impl BoundedChild {
    /// Forks a child that runs `work` on its end of the socket with `memory` bytes of private
    /// writable memory beyond what it inherits, and then ends (status 0 when `work` succeeded).
    pub fn spawn(
        memory: u64,
        work: impl FnOnce(UnixStream) -> io::Result<()>,
    ) -> Result<Self, String> {
        // Read here only to fail early where /proc is missing; the child measures its own.
        data_size()?;
        // The child's calls into preflate-rs would install it, taking a lock that another
        // thread may hold at the fork, for ever in the child.
        super::preflate_guard::install_quiet_hook();
        let (parent, child) =
            UnixStream::pair().map_err(|e| format!("cannot create a socket: {e}"))?;
        // SAFETY: the child runs only `work` (which, by this module's contract, takes no lock
        // other threads may hold but the allocator's) and leaves through `_exit`, never
        // returning into the parent's code.
        match unsafe { libc::fork() } {
            -1 => Err(format!(
                "cannot start a bounded process: {}",
                io::Error::last_os_error()
            )),
            0 => {
                drop(parent);
                close_inherited(child.as_raw_fd());
                let ok = catch_unwind(AssertUnwindSafe(|| {
                    // What it inherited, measured after the fork: other threads of the
                    // parent may have mapped or unmapped memory since.
                    let limit = data_size().map_err(io::Error::other)?;
                    quiet_and_bounded(limit.saturating_add(memory));
                    work(child)
                }));
                let code = i32::from(!matches!(ok, Ok(Ok(()))));
                // SAFETY: ends the child without running the parent's exit handlers.
                unsafe { libc::_exit(code) }
            }
            pid => Ok(BoundedChild {
                child: pid,
                socket: parent,
                memory,
            }),
        }
    }

    /// Why the child stopped answering while doing `what`, given the processor seconds it had
    /// for that step.
    pub fn death(&mut self, what: &str, cpu_seconds: u64) -> String {
        let mut status = 0;
        // SAFETY: waits for our own child.
        let waited = unsafe { libc::waitpid(self.child, &mut status, 0) };
        self.child = 0;
        if waited == -1 {
            return format!("{what}: the bounded process was lost");
        }
        if libc::WIFSIGNALED(status) {
            return match libc::WTERMSIG(status) {
                libc::SIGXCPU | libc::SIGKILL => format!(
                    "{what} took more than its {cpu_seconds} s of processor time: its data is \
                     damaged or hostile"
                ),
                libc::SIGABRT | libc::SIGSEGV | libc::SIGBUS => format!(
                    "{what} needed more than its {} MiB of memory: its data is damaged or \
                     hostile",
                    self.memory >> 20
                ),
                signal => format!("{what}: the bounded process ended by signal {signal}"),
            };
        }
        format!(
            "{what}: the bounded process ended with status {}",
            libc::WEXITSTATUS(status)
        )
    }
}

impl Drop for BoundedChild {
    fn drop(&mut self) {
        if self.child > 0 {
            // SAFETY: ends and reaps our own child (it may still wait to read or write).
            unsafe {
                libc::kill(self.child, libc::SIGKILL);
                libc::waitpid(self.child, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// In the child: closes every descriptor inherited from the parent but standard input, output
/// and error and `keep` (its socket). A pipe the parent's threads talk through must not stay
/// open in the child: a writer waiting for its reader to go would wait for ever.
fn close_inherited(keep: RawFd) {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<RawFd> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    for fd in fds {
        if fd > 2 && fd != keep {
            // SAFETY: closes descriptors of this (child) process that nothing in it uses
            // (the directory's own descriptor is already closed: an error, ignored).
            unsafe { libc::close(fd) };
        }
    }
}

/// The private writable memory this process holds now, in bytes (`VmData` of
/// `/proc/self/status`): what `RLIMIT_DATA` counts. (`RLIMIT_AS` would not do: a glibc thread
/// arena reserves 64 MiB of address space in advance and grows inside it unseen.)
fn data_size() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmData:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or("no VmData in /proc/self/status")?;
    Ok(kib.saturating_mul(1024))
}

/// In the child: standard error to /dev/null, the crash signals to their default action (a
/// fuzzer's handlers would report the child's death as its own crash), and its private
/// writable memory capped at `limit` bytes.
fn quiet_and_bounded(limit: u64) {
    // SAFETY: plain system calls on this process's own descriptors, signals and limits.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
        if null >= 0 {
            libc::dup2(null, 2);
            libc::close(null);
        }
        for signal in [
            libc::SIGABRT,
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGILL,
            libc::SIGFPE,
            libc::SIGXCPU,
        ] {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
    set_limit(libc::RLIMIT_DATA, limit);
}

/// Lowers the soft limit `resource` to `value` (never above the hard limit).
fn set_limit(resource: libc::__rlimit_resource_t, value: u64) {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `l` is a valid rlimit for both calls.
    unsafe {
        if libc::getrlimit(resource, &mut l) == 0 {
            l.rlim_cur = value.min(l.rlim_max);
            libc::setrlimit(resource, &l);
        }
    }
}

/// Processor seconds this process has used, rounded up.
fn cpu_seconds() -> u64 {
    // SAFETY: `u` is a valid rusage to fill.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let secs = u.ru_utime.tv_sec + u.ru_stime.tv_sec;
    u64::try_from(secs).unwrap_or(0) + 1
}

/// In a child: allows it `seconds` more of processor time from now (the kernel's SIGXCPU
/// ends it after that).
pub fn limit_cpu(seconds: u64) {
    set_limit(libc::RLIMIT_CPU, cpu_seconds().saturating_add(seconds));
}

/// For a test of a child's memory limit, which must run alone in a fresh process: memory the
/// parent freed but still maps is the child's to reuse uncounted, and tests running beside it
/// free plenty. Unless the environment variable `probe` is set, runs test `name` of module
/// `module` (its `module_path!()`) again in a new process of this test binary with `probe` set, checks that it passed to
/// its end ([`probe_passed`]), and returns true: the caller has nothing left to do. In that new
/// process, returns false: the caller does the test.
#[cfg(test)]
pub(crate) fn run_alone(probe: &str, module: &str, name: &str) -> bool {
    if std::env::var_os(probe).is_some() {
        return false;
    }
    // The test harness names a test by its path without the crate's name.
    let in_crate = module.split_once("::").map_or("", |(_, rest)| rest);
    let full = format!("{in_crate}::{name}");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &full, "--test-threads=1", "--nocapture"])
        .env(probe, "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains(PROBE_PASSED),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// What a test run by [`run_alone`] prints at its end: a test filtered out by its name would
/// succeed without running.
#[cfg(test)]
const PROBE_PASSED: &str = "the probe passed";

/// Says that a test run by [`run_alone`] passed to its end.
#[cfg(test)]
pub(crate) fn probe_passed() {
    println!("{PROBE_PASSED}");
}
