//! Blocks processed on worker threads and handed on in order.
//!
//! Every block of an Elephant Tracks file starts a fresh model, so the encoder (parse, model,
//! compress) and the decoder (decompress, model, print) can work on several blocks at once.
//! The calling thread reads the blocks and writes the results, in block order, so the output
//! is the same whatever the thread count; at most `threads + 1` blocks are in flight.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Mutex};

/// The next job of a pool whose workers share one receiver; `None` once the senders are gone
/// (or a worker panicked holding the lock). The lock is held only while waiting for a job,
/// never while working.
pub(super) fn next_job<T>(jobs: &Mutex<mpsc::Receiver<T>>) -> Option<T> {
    jobs.lock().ok()?.recv().ok()
}

/// Feeds the items `next` returns (until `Ok(None)`) to `work` on `threads` threads, each with
/// a state made by `state` (e.g. a compression context kept from block to block), and hands
/// the results to `sink` in the order of the items. The first error, in item order, stops
/// everything and is returned; `failed` makes the error for a worker that panicked.
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
    let (job_rx, state, work, failed) = (&job_rx, &state, &work, &failed);
    std::thread::scope(move |scope| {
        for _ in 0..threads {
            let (job_rx, done_tx, state, work, failed) =
                (job_rx, done_tx.clone(), state, work, failed);
            scope.spawn(move || {
                let mut s = state();
                while let Some((k, item)) = next_job(job_rx) {
                    let result = catch_unwind(AssertUnwindSafe(|| work(&mut s, item)))
                        .unwrap_or_else(|_| Err(failed()));
                    if done_tx.send((k, result)).is_err() {
                        return;
                    }
                }
            });
        }
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
        loop {
            let item = match next() {
                Ok(Some(item)) => item,
                Ok(None) => break,
                Err(e) => {
                    // What was read before the failure is still handed on, as when working
                    // through the items one by one.
                    drop(job_tx);
                    drain(sent, &mut written)?;
                    return Err(e);
                }
            };
            if job_tx.send((sent, item)).is_err() {
                return Err(failed());
            }
            sent += 1;
            // At most `threads` blocks beyond those written: one per worker while the next
            // is read.
            drain(sent.saturating_sub(threads as u64), &mut written)?;
        }
        drop(job_tx);
        drain(sent, &mut written)
    })
}

/// Buffers handed back after use, so that the next block reuses memory already paged in: a
/// block's text is about 13 MB, and a fresh buffer for each (the allocator maps buffers that
/// large anew) page-faulted 3,300 times per block.
pub struct BufferPool<T> {
    free: Mutex<Vec<T>>,
    keep: usize,
}

impl<T: Default> BufferPool<T> {
    /// A pool keeping at most `keep` buffers.
    pub fn new(keep: usize) -> BufferPool<T> {
        BufferPool {
            free: Mutex::new(Vec::new()),
            keep,
        }
    }

    /// A buffer handed back earlier (as it was handed back), or a new one.
    pub fn take(&self) -> T {
        self.free
            .lock()
            .ok()
            .and_then(|mut free| free.pop())
            .unwrap_or_default()
    }

    /// Hands `buffer` back; dropped when the pool is full.
    pub fn give(&self, buffer: T) {
        if let Ok(mut free) = self.free.lock() {
            if free.len() < self.keep {
                free.push(buffer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_order_and_errors_stop() {
        for threads in 1..4 {
            let mut items = 0..100u64;
            let mut out = Vec::new();
            ordered(
                threads,
                || Ok::<_, String>(items.next()),
                || (),
                |_, k| {
                    std::thread::sleep(std::time::Duration::from_micros((k * 37) % 200));
                    Ok(k * 2)
                },
                |v| {
                    out.push(v);
                    Ok(())
                },
                || "failed".to_string(),
            )
            .expect("no error");
            assert_eq!(out, (0..100).map(|k| k * 2).collect::<Vec<_>>());

            let mut items = 0..100u64;
            let mut out = Vec::new();
            let e = ordered(
                threads,
                || Ok::<_, String>(items.next()),
                || (),
                |_, k| {
                    if k == 40 {
                        Err(format!("bad {k}"))
                    } else {
                        Ok(k)
                    }
                },
                |v| {
                    out.push(v);
                    Ok(())
                },
                || "failed".to_string(),
            );
            assert_eq!(e, Err("bad 40".to_string()));
            assert_eq!(out, (0..40).collect::<Vec<_>>());
        }
    }
}
