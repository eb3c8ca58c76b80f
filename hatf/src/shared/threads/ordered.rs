//! Items worked on by a pool of threads, each result handed on whole, in item order.
//!
//! When every item starts afresh (a block of an Elephant Tracks file starts a fresh model), the
//! encoder (parse, model, compress) can work on several at once. The calling thread reads the
//! items and hands the results on in item order, so the output is the same whatever the
//! thread count; at most `threads + 1` items are in flight.

use std::collections::BTreeMap;
use std::sync::{mpsc, Mutex};

use super::read_end::ReadEnd;
use super::worker_pool::{caught, spawn_workers};

/// Feeds the items `next` returns (until `Ok(None)`) to `work` on `threads` threads, each with
/// a state made by `state` (e.g. a compression context kept from item to item), and hands
/// the results to `sink` in the order of the items. The first error, in item order, stops
/// everything and is returned (an error of `next` after the results of the items read before
/// it); `failed` makes the error for a worker that panicked.
pub fn ordered<I, O, E, S>(
    threads: usize,
    mut next: impl FnMut() -> Result<Option<I>, E>,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, I) -> Result<O, E> + Sync,
    mut sink: impl FnMut(O) -> Result<(), E>,
    failed: impl Fn() -> E + Sync,
) -> Result<(), E>
where
    I: Send,
    O: Send,
    E: Send,
{
    let threads = threads.max(1);
    let (job_tx, job_rx) = mpsc::sync_channel::<(u64, I)>(threads);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<(u64, Result<O, E>)>();
    // Each worker sends its results through its own sender, so the channel closes (and the
    // wait below ends) should every worker be gone.
    let worker = |s: &mut S, done: &mpsc::Sender<(u64, Result<O, E>)>, (k, item): (u64, I)| {
        let result = caught(|| work(s, item), &failed);
        done.send((k, result)).is_ok()
    };
    let (job_rx, state, worker, failed) = (&job_rx, &state, &worker, &failed);
    std::thread::scope(move |scope| {
        spawn_workers(scope, threads, job_rx, state, || done_tx.clone(), worker);
        drop(done_tx);
        let mut waiting: BTreeMap<u64, Result<O, E>> = BTreeMap::new();
        let (mut sent, mut written) = (0u64, 0u64);
        // Hands on the results that are next in order, waiting for more until `until` are out.
        let mut drain = |until: u64, written: &mut u64| -> Result<(), E> {
            loop {
                while let Ok((k, result)) = done_rx.try_recv() {
                    waiting.insert(k, result);
                }
                while let Some(result) = waiting.remove(written) {
                    sink(result?)?;
                    *written += 1;
                }
                if *written >= until {
                    return Ok(());
                }
                match done_rx.recv() {
                    Ok((k, result)) => {
                        waiting.insert(k, result);
                    }
                    Err(_) => return Err(failed()),
                }
            }
        };
        let mut input = ReadEnd::default();
        while let Some(item) = input.read(&mut next) {
            if job_tx.send((sent, item)).is_err() {
                return Err(failed());
            }
            sent += 1;
            // At most `threads` items beyond those written: one per worker while the next
            // is read.
            drain(sent.saturating_sub(threads as u64), &mut written)?;
        }
        drop(job_tx);
        // What was read before a failure is still handed on, as when working through the
        // items one by one.
        drain(sent, &mut written)?;
        input.take_error().map_or(Ok(()), Err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ordered` over the items `0..items` (then the input ends, or fails with "read" when
    /// `read_fails`) with no per-worker state, `sink` taking the results, and "failed" for a
    /// panic: the result, and how many items were read.
    fn run(
        threads: usize,
        (items, read_fails): (u64, bool),
        work: impl Fn(u64) -> Result<u64, String> + Sync,
        sink: impl FnMut(u64) -> Result<(), String>,
    ) -> (Result<(), String>, u64) {
        let mut read = 0..u64::MAX;
        let result = ordered(
            threads,
            || match read.next() {
                Some(k) if k < items => Ok(Some(k)),
                _ if read_fails => Err("read".to_string()),
                _ => Ok(None),
            },
            || (),
            |_, k| work(k),
            sink,
            || "failed".to_string(),
        );
        (result, read.start)
    }

    /// [`run`] with the results collected: the results and the result.
    fn collect(
        threads: usize,
        items: (u64, bool),
        work: impl Fn(u64) -> Result<u64, String> + Sync,
    ) -> (Vec<u64>, Result<(), String>) {
        let mut out = Vec::new();
        let (result, _) = run(threads, items, work, |v| {
            out.push(v);
            Ok(())
        });
        (out, result)
    }

    #[test]
    fn results_come_in_order_and_errors_stop() {
        for threads in 1..4 {
            let (out, result) = collect(threads, (100, false), |k| {
                std::thread::sleep(std::time::Duration::from_micros((k * 37) % 200));
                Ok(k * 2)
            });
            result.expect("no error");
            assert_eq!(out, (0..100).map(|k| k * 2).collect::<Vec<_>>());

            let (out, e) = collect(threads, (100, false), |k| {
                if k == 40 {
                    Err(format!("bad {k}"))
                } else {
                    Ok(k)
                }
            });
            assert_eq!(e, Err("bad 40".to_string()));
            assert_eq!(out, (0..40).collect::<Vec<_>>());
        }
    }

    /// Items that fail on their worker out of order: the error of the earliest item comes
    /// back, naming its item, after the results of every item before it, whichever failed
    /// first.
    #[test]
    fn the_earliest_failure_in_item_order_is_returned_with_its_number() {
        for threads in 1..4 {
            let mut out = Vec::new();
            let (e, read) = run(
                threads,
                (200, false),
                |k| {
                    // Item 13 fails late, item 14 at once: 13's error is the one returned.
                    if k == 13 {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    if k == 13 || k == 14 {
                        Err(format!("record {k}: bad"))
                    } else {
                        Ok(k)
                    }
                },
                |v| {
                    out.push(v);
                    Ok(())
                },
            );
            assert_eq!(e, Err("record 13: bad".to_string()), "threads {threads}");
            assert_eq!(out, (0..13).collect::<Vec<_>>());
            // Nothing past the window of items in flight was read.
            assert!(read <= 14 + threads as u64 + 1, "threads {threads}: {read}");
        }
    }

    /// A sink that stops early (a closed pipe) ends the run with its error while workers are
    /// busy and items are waiting: no hang, and nothing more is read.
    #[test]
    fn an_early_stopping_sink_does_not_hang() {
        for threads in 1..4 {
            let mut taken = 0;
            let (e, read) = run(
                threads,
                (1_000_000, false),
                |k| {
                    std::thread::sleep(std::time::Duration::from_micros(k % 3 * 100));
                    Ok(k)
                },
                |_| {
                    taken += 1;
                    if taken == 5 {
                        Err("closed".to_string())
                    } else {
                        Ok(())
                    }
                },
            );
            assert_eq!(e, Err("closed".to_string()));
            assert!(
                read < 5 + 2 * threads as u64 + 2,
                "threads {threads}: {read}"
            );
        }
    }

    /// A failed read: the results of the items read before it, then its error.
    #[test]
    fn a_read_error_comes_after_the_items_read_before_it() {
        for threads in 1..4 {
            let (out, e) = collect(threads, (5, true), Ok);
            assert_eq!(e, Err("read".to_string()));
            assert_eq!(out, (0..5).collect::<Vec<_>>());
        }
    }

    /// A worker that panics is its item's error, in item order, not a hang or a crash.
    #[test]
    fn a_panicking_worker_is_the_error_of_its_item() {
        for threads in 1..4 {
            let (out, e) = collect(threads, (50, false), |k| {
                if k == 7 {
                    panic!("worker panics on purpose");
                }
                Ok(k)
            });
            assert_eq!(e, Err("failed".to_string()));
            assert_eq!(out, (0..7).collect::<Vec<_>>());
        }
    }
}
