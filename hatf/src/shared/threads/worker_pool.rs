//! Worker threads that share one queue of jobs: each takes the next job when it is free, so
//! a slow job does not hold up the others.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Mutex};
use std::thread::Scope;

/// The next job of a pool whose workers share one receiver; `None` once the senders are gone
/// (or a worker panicked holding the lock). The lock is held only while waiting for a job,
/// never while working.
pub fn next_job<T>(jobs: &Mutex<mpsc::Receiver<T>>) -> Option<T> {
    jobs.lock().ok()?.recv().ok()
}

/// Starts `workers` threads in `scope` that take jobs from `jobs` until it closes. Each makes
/// its own state with `state` on its own thread (e.g. a compression context kept from job to
/// job), gets a `context` made here (e.g. its own sender of results, so that the results'
/// channel closes once every worker has returned), and does `work` with each job; a `work`
/// that returns false stops its thread (no one takes its results any more).
pub fn spawn_workers<'scope, J, S, C>(
    scope: &'scope Scope<'scope, '_>,
    workers: usize,
    jobs: &'scope Mutex<mpsc::Receiver<J>>,
    state: &'scope (impl Fn() -> S + Sync),
    context: impl Fn() -> C,
    work: &'scope (impl Fn(&mut S, &C, J) -> bool + Sync),
) where
    J: Send,
    C: Send + 'scope,
{
    for _ in 0..workers {
        let c = context();
        scope.spawn(move || {
            let mut s = state();
            while let Some(job) = next_job(jobs) {
                if !work(&mut s, &c, job) {
                    return;
                }
            }
        });
    }
}

/// `work`'s result, or `failed`'s error if it panicked: a panic is the failure of the item
/// being worked on, reported in its turn, not the end of the program (and the other threads
/// are not left waiting for a result that never comes).
pub fn caught<T, E>(
    work: impl FnOnce() -> Result<T, E>,
    failed: impl FnOnce() -> E,
) -> Result<T, E> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|_| Err(failed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_is_done_once_and_a_refusing_worker_stops() {
        let (tx, rx) = mpsc::channel::<u64>();
        let rx = Mutex::new(rx);
        let (done_tx, done_rx) = mpsc::channel::<(usize, u64)>();
        let state = || 0usize;
        let work = |jobs_done: &mut usize, tx: &mpsc::Sender<(usize, u64)>, k: u64| {
            *jobs_done += 1;
            // A worker that has done three jobs stops.
            tx.send((*jobs_done, k)).is_ok() && *jobs_done < 3
        };
        std::thread::scope(|scope| {
            spawn_workers(scope, 3, &rx, &state, || done_tx.clone(), &work);
            for k in 0..9 {
                tx.send(k).unwrap();
            }
            drop(tx);
        });
        drop(done_tx);
        let mut got: Vec<u64> = done_rx.iter().map(|(_, k)| k).collect();
        got.sort_unstable();
        assert_eq!(got, (0..9).collect::<Vec<_>>());
    }

    #[test]
    fn a_panic_is_the_error_failed_makes() {
        let e = caught(
            || -> Result<(), String> { panic!("on purpose") },
            || "failed".to_string(),
        );
        assert_eq!(e, Err("failed".to_string()));
        assert_eq!(
            caught(|| Ok::<_, String>(4), || "failed".to_string()),
            Ok(4)
        );
    }
}
