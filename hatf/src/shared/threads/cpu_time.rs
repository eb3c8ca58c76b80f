//! The processor time a thread has used: what the threaded decodes compare to share work
//! between their threads (time spent waiting for a processor on a loaded machine is not
//! counted, as wall time would count it).

/// CPU time used by the calling thread, in nanoseconds; 0 where it cannot be read (then every
/// comparison of two threads' times says they are equal).
pub fn thread_cpu_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec, which `t` is, and reads nothing else.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            let secs = u64::try_from(t.tv_sec).unwrap_or(0);
            let nanos = u64::try_from(t.tv_nsec).unwrap_or(0);
            return secs.saturating_mul(1_000_000_000).saturating_add(nanos);
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_grows_with_work() {
        let before = thread_cpu_ns();
        let mut x = 1u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
        }
        std::hint::black_box(x);
        if cfg!(unix) {
            assert!(thread_cpu_ns() > before);
        }
    }
}
