//! Rebuilding a deflate stream's pieces in a child process whose memory and processor time
//! the kernel bounds.
//!
//! preflate-rs rebuilds a piece from arithmetic-coded corrections that only it reads. Hostile
//! corrections that pass every checksum can make one call loop, adding empty deflate blocks
//! until memory runs out, and hatf can neither interrupt the call nor cap what it allocates.
//! A child process can be bounded: forked when a stream's first piece is rebuilt, it holds the
//! rebuilder's state for the whole stream, reads each piece's text from a socket and writes the
//! rebuilt bytes back. `RLIMIT_DATA` caps its private writable memory at what it inherited plus
//! [`memory_budget`] of the largest piece, and before each piece `RLIMIT_CPU` caps its
//! processor time at what it has used plus [`cpu_budget`] of that piece. A child that dies (the
//! kernel's SIGXCPU at the time limit, an abort on a refused allocation) is an error naming the
//! limit, and its messages never reach standard error. (Memory the parent had freed but still
//! maps when it forks is reused by the child without counting: the child's whole footprint is
//! bounded by the parent's at the fork plus the budget.) The budgets follow from the pieces'
//! declared lengths, which [`check_piece`](super::gzip_split::check_piece) bounds before anything is rebuilt.
//!
//! After `fork` only the calling thread runs in the child. It uses no lock another thread can
//! hold at that moment except the allocator's, and glibc's `malloc` makes itself consistent in
//! the child across `fork`.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::panic::{catch_unwind, AssertUnwindSafe};

use preflate_rs::RecreateStreamProcessor;

use super::gzip_split::{rebuild_piece, Piece};

/// Memory a rebuilding child may take beyond what it inherits, for pieces of at most
/// `largest` bytes of text and deflate together: preflate-rs holds a piece's text with its
/// 32 KiB dictionary, the tokens (8 bytes per token at most, one token per text byte), the
/// blocks and the rebuilt bytes, and its hash chains (about 1 MiB for a 32 KiB window).
/// Sixteen bytes per byte covers that with room; a rebuild of the corpus' largest pieces
/// (3.4 MB of text) peaks under a third of its budget.
pub fn memory_budget(largest: u64) -> u64 {
    (64u64 << 20).saturating_add(largest.saturating_mul(16))
}

/// Processor seconds a rebuilding child may spend on a piece of `text_len` bytes of text: two
/// seconds, and one more per 256 KiB. preflate-rs rebuilds more than 20 MB of text a second in
/// a release build; this leaves room for debug and fuzzing builds, and a hostile piece's
/// loop ends within it.
pub fn cpu_budget(text_len: u64) -> u64 {
    2 + text_len / (256 << 10)
}

/// A child process rebuilding one stream's pieces, in order.
pub struct Rebuilder {
    /// The child's process id; 0 once it was waited for.
    child: libc::pid_t,
    socket: UnixStream,
    memory: u64,
}

impl Rebuilder {
    /// Forks a child that rebuilds `pieces` (each checked by [`check_piece`](super::gzip_split::check_piece)).
    pub fn spawn(pieces: &[Piece]) -> Result<Self, String> {
        let largest = pieces
            .iter()
            .map(|p| p.text_len.saturating_add(p.deflate_len))
            .max()
            .unwrap_or(0);
        Self::spawn_bounded(pieces, memory_budget(largest))
    }

    /// [`Rebuilder::spawn`] with `memory` bytes of private writable memory beyond what the
    /// child inherits.
    fn spawn_bounded(pieces: &[Piece], memory: u64) -> Result<Self, String> {
        // Read here only to fail early where /proc is missing; the child measures its own.
        data_size()?;
        let (parent, child) =
            UnixStream::pair().map_err(|e| format!("cannot create a socket: {e}"))?;
        // SAFETY: the child runs only `serve` (no lock other threads may hold but the
        // allocator's, see the module's comment) and leaves through `_exit`, never returning
        // into the parent's code.
        match unsafe { libc::fork() } {
            -1 => Err(format!(
                "cannot start the rebuilding process: {}",
                io::Error::last_os_error()
            )),
            0 => {
                drop(parent);
                let ok = catch_unwind(AssertUnwindSafe(|| {
                    // What it inherited, measured after the fork: other threads of the
                    // parent may have mapped or unmapped memory since.
                    let limit = data_size().map_err(io::Error::other)?;
                    quiet_and_bounded(limit.saturating_add(memory));
                    serve(child, pieces)
                }));
                let code = i32::from(!matches!(ok, Ok(Ok(()))));
                // SAFETY: ends the child without running the parent's exit handlers.
                unsafe { libc::_exit(code) }
            }
            pid => Ok(Rebuilder {
                child: pid,
                socket: parent,
                memory,
            }),
        }
    }

    /// Sends piece `k`'s text to the child and gives back the deflate bytes it rebuilt.
    pub fn rebuild(&mut self, k: usize, p: &Piece, text: &[u8]) -> Result<Vec<u8>, String> {
        let mut head = [0u8; 9];
        let answered = self
            .socket
            .write_all(text)
            .and_then(|()| self.socket.read_exact(&mut head));
        if answered.is_err() {
            return Err(self.death(k, p));
        }
        let len = u64::from_le_bytes(head[1..].try_into().expect("8 bytes"));
        let most = if head[0] == 0 { p.deflate_len } else { 4096 };
        if len > most {
            return Err(format!(
                "the rebuilding process sent {len} bytes for piece {k}"
            ));
        }
        let mut bytes = vec![0u8; len as usize];
        if self.socket.read_exact(&mut bytes).is_err() {
            return Err(self.death(k, p));
        }
        match head[0] {
            0 => Ok(bytes),
            _ => Err(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }

    /// Why the child stopped answering during piece `k`.
    fn death(&mut self, k: usize, p: &Piece) -> String {
        let mut status = 0;
        // SAFETY: waits for our own child.
        let waited = unsafe { libc::waitpid(self.child, &mut status, 0) };
        self.child = 0;
        let what = format!("rebuilding piece {k} of the deflate stream");
        if waited == -1 {
            return format!("{what}: the rebuilding process was lost");
        }
        if libc::WIFSIGNALED(status) {
            return match libc::WTERMSIG(status) {
                libc::SIGXCPU | libc::SIGKILL => format!(
                    "{what} took more than its {} s of processor time: its reconstruction \
                     data is damaged",
                    cpu_budget(p.text_len)
                ),
                libc::SIGABRT | libc::SIGSEGV | libc::SIGBUS => format!(
                    "{what} needed more than its {} MiB of memory: its reconstruction data is \
                     damaged",
                    self.memory >> 20
                ),
                signal => format!("{what}: the rebuilding process ended by signal {signal}"),
            };
        }
        format!(
            "{what}: the rebuilding process ended with status {}",
            libc::WEXITSTATUS(status)
        )
    }
}

impl Drop for Rebuilder {
    fn drop(&mut self) {
        if self.child > 0 {
            // SAFETY: ends and reaps our own child (it may still wait for text).
            unsafe {
                libc::kill(self.child, libc::SIGKILL);
                libc::waitpid(self.child, std::ptr::null_mut(), 0);
            }
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

/// The child's work: each piece's text in, its rebuilt bytes out (a 0 byte and the length), or
/// an error (a 1 byte, the length and the message) after which it stops.
fn serve(mut socket: UnixStream, pieces: &[Piece]) -> io::Result<()> {
    let mut r = RecreateStreamProcessor::new();
    for (k, p) in pieces.iter().enumerate() {
        let mut text = vec![0u8; p.text_len as usize];
        socket.read_exact(&mut text)?;
        set_limit(libc::RLIMIT_CPU, cpu_seconds() + cpu_budget(p.text_len));
        let (tag, bytes) = match rebuild_piece(&mut r, k, p, &text) {
            Ok(bytes) => (0u8, bytes),
            Err(why) => (1, why.into_bytes().into_iter().take(4096).collect()),
        };
        socket.write_all(&[tag])?;
        socket.write_all(&(bytes.len() as u64).to_le_bytes())?;
        socket.write_all(&bytes)?;
        if tag != 0 {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::malloc_bench::gzip_split::{split_pieces, whole_as_piece};
    use std::io::Write;

    /// A deflate stream of about 2 MB of text, taken apart: its pieces and text.
    fn sample() -> (Vec<u8>, Vec<Piece>, Vec<u8>) {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{}: malloc 0x{:x} {}\n", i % 7, i * 16, i % 100).into_bytes())
            .collect();
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(1));
        e.write_all(&text).unwrap();
        let z = e.finish().unwrap();
        let mut back = Vec::new();
        let (pieces, used) = split_pieces(&z, &mut back).unwrap();
        assert_eq!(used, z.len());
        assert!(back == text);
        (z, pieces, text)
    }

    /// Rebuilds every piece with `r`.
    fn rebuild_all(r: &mut Rebuilder, pieces: &[Piece], text: &[u8]) -> Result<Vec<u8>, String> {
        let (mut out, mut at) = (Vec::new(), 0usize);
        for (k, p) in pieces.iter().enumerate() {
            let piece = &text[at..at + p.text_len as usize];
            at += p.text_len as usize;
            out.extend(r.rebuild(k, p, piece)?);
        }
        Ok(out)
    }

    #[test]
    fn the_child_rebuilds_the_stream_within_its_budget() {
        let (z, pieces, text) = sample();
        let mut r = Rebuilder::spawn(&pieces).unwrap();
        assert!(rebuild_all(&mut r, &pieces, &text).unwrap() == z);
    }

    #[test]
    fn a_child_over_its_memory_limit_is_an_error_and_this_process_goes_on() {
        // Memory the parent freed but still maps is the child's to reuse uncounted, and tests
        // running beside this one free plenty: run it again alone, in a fresh process.
        const PROBE: &str = "HATF_REBUILD_MEMORY_PROBE";
        if std::env::var_os(PROBE).is_none() {
            let name = "alloc::malloc_bench::rebuild_process::tests::\
                        a_child_over_its_memory_limit_is_an_error_and_this_process_goes_on";
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", name, "--test-threads=1", "--nocapture"])
                .env(PROBE, "1")
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && said.contains("the probe passed"),
                "{said}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        let (z, _, text) = sample();
        // The stream as one piece, and 1 MiB beyond what the child inherits: less than the
        // piece's text. The child is forked from a new thread, whose allocator arena holds no
        // memory freed earlier (memory the child inherits mapped is not counted again).
        let (piece, _) = whole_as_piece(&z).unwrap();
        let pieces = [piece];
        assert!(pieces[0].text_len > 4 << 20);
        let (mut r, e) = std::thread::scope(|s| {
            s.spawn(|| {
                let mut r = Rebuilder::spawn_bounded(&pieces, 1 << 20).unwrap();
                let e = rebuild_all(&mut r, &pieces, &text).unwrap_err();
                (r, e)
            })
            .join()
            .unwrap()
        });
        assert!(
            e.contains("piece 0") && e.contains("more than its 1 MiB of memory"),
            "{e}"
        );
        // Later calls fail too, and a new child with its budget rebuilds the stream.
        assert!(r
            .rebuild(0, &pieces[0], &text[..pieces[0].text_len as usize])
            .is_err());
        let mut r = Rebuilder::spawn(&pieces).unwrap();
        assert!(rebuild_all(&mut r, &pieces, &text).unwrap() == z);
        println!("the probe passed");
    }

    #[test]
    fn errors_of_the_rebuild_come_back_from_the_child() {
        let (_, pieces, text) = sample();
        let mut r = Rebuilder::spawn(&pieces).unwrap();
        let mut wrong = text[..pieces[0].text_len as usize].to_vec();
        wrong.truncate(wrong.len() / 2);
        wrong.resize(pieces[0].text_len as usize, b'x');
        // Other text rebuilds other bytes (an error) or fails inside preflate: either way an
        // error from the child, not its death.
        let (z, _, _) = sample();
        match r.rebuild(0, &pieces[0], &wrong) {
            Ok(bytes) => assert!(bytes != z[..bytes.len()]),
            Err(e) => assert!(!e.contains("rebuilding process"), "{e}"),
        }
    }
}
