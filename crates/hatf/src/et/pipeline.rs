//! Blocks processed on worker threads and handed on in order.
//!
//! Every block of an Elephant Tracks file starts a fresh model, so the encoder (parse, model,
//! compress) and the decoder (decompress, model, print) can work on several blocks at once.
//! The calling thread reads the blocks and writes the results, in block order, so the output
//! is the same whatever the thread count; at most `threads + 1` blocks are in flight.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Mutex};

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
                loop {
                    // The lock is held only while waiting for the next item, never while working.
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((k, item)) = job else { return };
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

/// Most pieces of one item [`streamed`] lets wait for the sink: a worker that gets this far
/// ahead waits, so that the memory in flight is bounded (the decoder's pieces are 2 MiB).
/// Enough for a worker to print a whole block (13 MB) ahead of the writer: with 1 MiB pieces,
/// 4 ahead gave javac-tests decodes 6,700 page faults instead of 9,000-11,000 but took 10 %
/// longer (workers idle), 16 as long as 64 (9,400 faults).
pub const PIECES_AHEAD: usize = 8;

/// What a worker sends about one item: a piece of its output, or the end of it.
enum Msg<P, E> {
    Piece(P),
    End(Result<(), E>),
}

/// Feeds the items `next` returns (until `Ok(None)`) to `work` on `threads` threads; `work`
/// (with a state per thread made by `state`, e.g. buffers kept from item to item) hands out its
/// output in pieces, through the function it is given, as it goes, and `sink`
/// gets all pieces of the first item, then of the second, and so on: the output of an item is
/// handed on while it is still being made, and the next items' pieces wait (at most
/// `threads + 1` items are in flight). The first error, in item order, stops everything and
/// is returned after the pieces made before it; `failed` makes the error for a worker that
/// panicked.
pub fn streamed<I, P, E, S>(
    threads: usize,
    mut next: impl FnMut() -> Result<Option<I>, E>,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, I, &mut dyn FnMut(P)) -> Result<(), E> + Sync,
    mut sink: impl FnMut(P) -> Result<(), E>,
    failed: impl Fn() -> E + Sync,
) -> Result<(), E>
where
    I: Send,
    P: Send,
    E: Send,
{
    type Job<I, P, E> = (I, mpsc::SyncSender<Msg<P, E>>);
    let threads = threads.max(1);
    let (job_tx, job_rx) = mpsc::channel::<Job<I, P, E>>();
    let job_rx = Mutex::new(job_rx);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (job_rx, state, work, failed, stop) = (&job_rx, &state, &work, &failed, &stop);
    std::thread::scope(move |scope| {
        for _ in 0..threads {
            scope.spawn(move || {
                let mut s = state();
                loop {
                    // The lock is held only while waiting for the next item, never while working.
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((item, tx)) = job else { return };
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return;
                    }
                    let result = catch_unwind(AssertUnwindSafe(|| {
                        work(&mut s, item, &mut |p| {
                            // A closed channel means the output stopped; the rest is dropped.
                            let _ = tx.send(Msg::Piece(p));
                        })
                    }))
                    .unwrap_or_else(|_| Err(failed()));
                    let _ = tx.send(Msg::End(result));
                }
            });
        }
        let job_tx = job_tx;
        let mut pending = std::collections::VecDeque::new();
        let mut more = true;
        let mut read_error = None;
        let result = loop {
            while more && pending.len() <= threads {
                match next() {
                    Ok(Some(item)) => {
                        // A worker ahead of the writer waits once its item has this many
                        // pieces waiting, instead of making fresh ones (page faults).
                        let (tx, rx) = mpsc::sync_channel(PIECES_AHEAD);
                        if job_tx.send((item, tx)).is_err() {
                            break;
                        }
                        pending.push_back(rx);
                    }
                    Ok(None) => more = false,
                    Err(e) => {
                        // What was read before the failure is still handed on, as when
                        // working through the items one by one.
                        read_error = Some(e);
                        more = false;
                    }
                }
            }
            let Some(rx) = pending.front() else {
                break read_error.map_or(Ok(()), Err);
            };
            match rx.recv() {
                Ok(Msg::Piece(p)) => {
                    if let Err(e) = sink(p) {
                        break Err(e);
                    }
                }
                Ok(Msg::End(Ok(()))) => {
                    pending.pop_front();
                }
                Ok(Msg::End(Err(e))) => break Err(e),
                Err(_) => break Err(failed()),
            }
        };
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        drop(job_tx);
        result
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
    fn streamed_pieces_come_in_order_and_errors_stop() {
        for threads in 1..4 {
            let mut items = 0..60u64;
            let mut out = Vec::new();
            streamed(
                threads,
                || Ok::<_, String>(items.next()),
                || (),
                |_, k, emit| {
                    for j in 0..(k % 7) {
                        std::thread::sleep(std::time::Duration::from_micros((k * 37 + j) % 90));
                        emit((k, j));
                    }
                    Ok(())
                },
                |p| {
                    out.push(p);
                    Ok(())
                },
                || "failed".to_string(),
            )
            .expect("no error");
            let want: Vec<(u64, u64)> = (0..60u64)
                .flat_map(|k| (0..k % 7).map(move |j| (k, j)))
                .collect();
            assert_eq!(out, want);

            let mut items = 0..60u64;
            let mut out = Vec::new();
            let e = streamed(
                threads,
                || Ok::<_, String>(items.next()),
                || (),
                |_, k, emit| {
                    emit(k);
                    if k == 40 {
                        Err(format!("bad {k}"))
                    } else {
                        Ok(())
                    }
                },
                |v| {
                    out.push(v);
                    Ok(())
                },
                || "failed".to_string(),
            );
            assert_eq!(e, Err("bad 40".to_string()));
            assert_eq!(out, (0..41).collect::<Vec<_>>());

            // A failed read stops the items after those read before it.
            let mut items = 0..10u64;
            let mut out = Vec::new();
            let e = streamed(
                threads,
                || match items.next() {
                    Some(5) => Err("read".to_string()),
                    k => Ok(k),
                },
                || (),
                |_, k, emit| {
                    emit(k);
                    Ok(())
                },
                |v| {
                    out.push(v);
                    Ok(())
                },
                || "failed".to_string(),
            );
            assert_eq!(e, Err("read".to_string()));
            assert_eq!(out, (0..5).collect::<Vec<_>>());

            // A panicking worker is an error, not a hang.
            let mut items = 0..10u64;
            let e = streamed(
                threads,
                || Ok::<_, String>(items.next()),
                || (),
                |_, k, _| {
                    if k == 3 {
                        panic!("worker panics on purpose");
                    }
                    Ok(())
                },
                |_: ()| Ok(()),
                || "failed".to_string(),
            );
            assert_eq!(e, Err("failed".to_string()));
        }
    }

    /// Items with more pieces than a worker may have waiting: workers ahead of the sink wait
    /// (and are woken when the sink stops early), and the pieces still come in order.
    #[test]
    fn workers_far_ahead_wait_for_the_sink() {
        let per_item = 3 * PIECES_AHEAD as u64;
        for threads in 1..4 {
            let mut items = 0..12u64;
            let mut out = Vec::new();
            streamed(
                threads,
                || Ok::<_, String>(items.next()),
                || (),
                |_, k, emit| {
                    for j in 0..per_item {
                        emit((k, j));
                    }
                    Ok(())
                },
                |p| {
                    // A slow sink, so that the workers get ahead of it.
                    if p.1 % 8 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                    out.push(p);
                    Ok(())
                },
                || "failed".to_string(),
            )
            .expect("no error");
            let want: Vec<(u64, u64)> = (0..12u64)
                .flat_map(|k| (0..per_item).map(move |j| (k, j)))
                .collect();
            assert_eq!(out, want);

            // The sink fails while later items' workers wait with full queues: no hang.
            let mut items = 0..12u64;
            let mut taken = 0u64;
            let e = streamed(
                threads,
                || Ok::<_, String>(items.next()),
                || (),
                |_, k, emit| {
                    for j in 0..per_item {
                        emit((k, j));
                    }
                    Ok(())
                },
                |_| {
                    taken += 1;
                    if taken == per_item + 5 {
                        Err("sink".to_string())
                    } else {
                        Ok(())
                    }
                },
                || "failed".to_string(),
            );
            assert_eq!(e, Err("sink".to_string()));
        }
    }

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
