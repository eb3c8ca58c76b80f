//! Items worked on by worker threads *and* the calling thread, their output handed on in
//! pieces, in item order, by the calling thread.
//!
//! Why it differs from [`super::ordered`]: an item's output here is large (an Elephant Tracks
//! block, which starts a fresh model, turns into about 13 MB of text), so it is handed on in
//! pieces as it is made rather than held whole. On two cores one worker decodes while the calling thread
//! writes; the writing is about half as much work as the decoding, so the writer would wait
//! a third of the time while the worker was busy all along. Here the calling thread decodes an item of its own whenever it would
//! otherwise wait, and keeps writing the workers' pieces between pieces of its own, so the
//! workers never wait for it for long. (A writer that decoded a whole block before writing
//! again stalls the worker behind it and gains nothing: docs/PERFORMANCE.md, "Designs tried
//! and not kept".)

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use super::read_end::ReadEnd;
use super::worker_pool::{caught, spawn_workers};

/// Most pieces of one item a worker lets wait for the sink: a worker that gets this far ahead
/// waits, so that the memory in flight is bounded (the decoder's pieces are 2 MiB). Enough for
/// a worker to print a whole block (13 MB) ahead of the writer: fewer leave workers idle
/// (a tenth longer decodes, for fewer page faults), and more gain no time.
pub const PIECES_AHEAD: usize = 8;

/// What a worker sends about one item: a piece of its output, or the end of it.
enum Msg<P, E> {
    Piece(P),
    End(Result<(), E>),
}

/// An item on a worker: where its pieces come from, and the worker's end of that channel.
type Job<I, P, E> = (I, mpsc::SyncSender<Msg<P, E>>);

/// An item in flight, in item order.
enum Slot<P, E> {
    /// Made by a worker: its pieces and its end come through this channel.
    Worker(mpsc::Receiver<Msg<P, E>>),
    /// Made by the calling thread: the pieces not yet handed on, and the result once the item
    /// is done (`None` while the calling thread is still working on it).
    Own(VecDeque<P>, Option<Result<(), E>>),
}

/// Feeds the items `next` returns (until `Ok(None)`) to `work` on `threads` worker threads and
/// on the calling thread, each with a state made by `state` (e.g. buffers kept from item to
/// item); `work` hands out its output in pieces, through the function it is given, as it
/// goes, and `sink` gets all pieces of the first item, then of the second, and so on, on the
/// calling thread: the output of an item is handed on while it is still being made.
///
/// The calling thread works on an item itself only when the next piece in order is not ready
/// and no item of its own waits to be handed on; while it works, it hands on the pieces
/// that are ready at every piece of its own. At most `threads + 1` items wait for the workers
/// and one for the calling thread, and a worker stops once [`PIECES_AHEAD`] pieces of its
/// item wait, so memory stays bounded. The first error, in item order, stops everything and is
/// returned after the pieces made before it; `failed` makes the error for a worker that
/// panicked.
pub fn streamed<I, P, E, S>(
    threads: usize,
    next: impl FnMut() -> Result<Option<I>, E>,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, I, &mut dyn FnMut(P)) -> Result<(), E> + Sync,
    sink: impl FnMut(P) -> Result<(), E>,
    failed: impl Fn() -> E + Sync,
) -> Result<(), E>
where
    I: Send,
    P: Send,
    E: Send,
{
    let threads = threads.max(1);
    let (job_tx, job_rx) = mpsc::channel::<Job<I, P, E>>();
    let job_rx = Mutex::new(job_rx);
    let stop = AtomicBool::new(false);
    let worker = |s: &mut S, _: &(), (item, tx): Job<I, P, E>| {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let result = caught(
            || {
                work(s, item, &mut |p| {
                    // A closed channel means the output stopped; the rest is dropped.
                    let _ = tx.send(Msg::Piece(p));
                })
            },
            &failed,
        );
        let _ = tx.send(Msg::End(result));
        true
    };
    let (job_rx, state, work, failed, stop, worker) =
        (&job_rx, &state, &work, &failed, &stop, &worker);
    std::thread::scope(move |scope| {
        spawn_workers(scope, threads, job_rx, state, || (), worker);
        let mut caller = Caller {
            threads,
            next,
            sink,
            jobs: job_tx,
            pending: VecDeque::new(),
            input: ReadEnd::default(),
            error: None,
            failed,
        };
        let result = caller.run(state, work);
        stop.store(true, Ordering::Relaxed);
        // Dropping the caller closes the job channel and the pieces' channels: idle workers
        // return, busy ones finish their item and find no one to take it.
        drop(caller);
        result
    })
}

/// The calling thread's side of [`streamed`].
struct Caller<'f, I, P, E, N, K, F> {
    threads: usize,
    next: N,
    sink: K,
    jobs: mpsc::Sender<Job<I, P, E>>,
    /// The items in flight, in item order.
    pending: VecDeque<Slot<P, E>>,
    /// Closed once `next` said there are no more items, or failed; its error is returned
    /// once every item read before it is handed on.
    input: ReadEnd<E>,
    /// The first error met while handing pieces on during work of the calling thread's own
    /// (an earlier item's, or the sink's): nothing is handed on after it.
    error: Option<E>,
    failed: &'f F,
}

/// What handing on the front item's output did.
enum Step {
    /// A piece went to the sink, or a finished item left.
    Moved,
    /// Its next piece is not ready yet.
    NotReady,
    /// Nothing is in flight.
    Empty,
}

impl<I, P, E, N, K, F> Caller<'_, I, P, E, N, K, F>
where
    N: FnMut() -> Result<Option<I>, E>,
    K: FnMut(P) -> Result<(), E>,
    F: Fn() -> E,
{
    /// Hands on every piece in item order until the items run out or one fails; works on an
    /// item itself whenever it would otherwise wait.
    fn run<S>(
        &mut self,
        state: &impl Fn() -> S,
        work: &impl Fn(&mut S, I, &mut dyn FnMut(P)) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut own_state = None;
        loop {
            self.feed_workers();
            match self.step(false)? {
                Step::Moved => {}
                Step::Empty => return self.input.take_error().map_or(Ok(()), Err),
                Step::NotReady if self.may_help() => {
                    let s = own_state.get_or_insert_with(state);
                    self.help(s, work);
                    if let Some(e) = self.error.take() {
                        return Err(e);
                    }
                }
                Step::NotReady => {
                    self.step(true)?;
                }
            }
        }
    }

    /// Reads items for the workers until `threads + 1` wait for them (one each at work and one
    /// more to start on) or there are no more.
    fn feed_workers(&mut self) {
        let on_workers =
            |p: &VecDeque<Slot<P, E>>| p.iter().filter(|s| matches!(s, Slot::Worker(_))).count();
        while self.input.is_open() && on_workers(&self.pending) <= self.threads {
            let Some(item) = self.read() else { return };
            // A worker ahead of the writer waits once its item has this many pieces waiting,
            // instead of making fresh ones (page faults).
            let (tx, rx) = mpsc::sync_channel(PIECES_AHEAD);
            if self.jobs.send((item, tx)).is_err() {
                // No worker is left (cannot happen while the scope runs); what is in flight
                // is still handed on.
                self.input.close();
                return;
            }
            self.pending.push_back(Slot::Worker(rx));
        }
    }

    /// The next item, or `None` at the end or after a failed read (what was read before the
    /// failure is still handed on, as when working through the items one by one).
    fn read(&mut self) -> Option<I> {
        self.input.read(&mut self.next)
    }

    /// True when the calling thread may take an item of its own: there may be one, and no
    /// earlier one of its own still waits to be handed on (so at most one item's output is
    /// held here).
    fn may_help(&self) -> bool {
        self.input.is_open() && !self.pending.iter().any(|s| matches!(s, Slot::Own(..)))
    }

    /// Hands on the front item's next piece (waiting for it when `wait`), or takes the item
    /// off the front when it is done; an item's error is returned when it reaches the front.
    fn step(&mut self, wait: bool) -> Result<Step, E> {
        let Some(front) = self.pending.front_mut() else {
            return Ok(Step::Empty);
        };
        match front {
            Slot::Own(pieces, result) => {
                if let Some(p) = pieces.pop_front() {
                    (self.sink)(p)?;
                    return Ok(Step::Moved);
                }
                let Some(result) = result.take() else {
                    // Only met while the calling thread works on this very item.
                    return Ok(Step::NotReady);
                };
                self.pending.pop_front();
                result.map(|()| Step::Moved)
            }
            Slot::Worker(rx) => {
                let msg = if wait {
                    rx.recv().map_err(|_| mpsc::TryRecvError::Disconnected)
                } else {
                    rx.try_recv()
                };
                match msg {
                    Ok(Msg::Piece(p)) => {
                        (self.sink)(p)?;
                        Ok(Step::Moved)
                    }
                    Ok(Msg::End(result)) => {
                        self.pending.pop_front();
                        result.map(|()| Step::Moved)
                    }
                    Err(mpsc::TryRecvError::Empty) => Ok(Step::NotReady),
                    Err(mpsc::TryRecvError::Disconnected) => Err((self.failed)()),
                }
            }
        }
    }

    /// Works on the next item on this thread. At each of its pieces, hands on whatever is
    /// ready before it (its own pieces too, once it is the front item) and keeps the workers
    /// fed. An error met in handing on is kept in `self.error`; the item's own result waits
    /// in its slot.
    fn help<S>(
        &mut self,
        s: &mut S,
        work: &impl Fn(&mut S, I, &mut dyn FnMut(P)) -> Result<(), E>,
    ) {
        let Some(item) = self.read() else { return };
        self.pending.push_back(Slot::Own(VecDeque::new(), None));
        let failed = self.failed;
        let result = caught(|| work(s, item, &mut |p| self.own_piece(p)), failed);
        if let Some(Slot::Own(_, done)) = self.own_slot() {
            *done = Some(result);
        }
    }

    /// The slot of the item the calling thread is working on: the one without a result (the
    /// workers' items read meanwhile come after it, and earlier ones leave the front, so its
    /// position changes).
    fn own_slot(&mut self) -> Option<&mut Slot<P, E>> {
        self.pending
            .iter_mut()
            .find(|s| matches!(s, Slot::Own(_, None)))
    }

    /// A piece of the calling thread's own item: kept in its slot, then whatever is ready
    /// is handed on, and the workers are fed.
    fn own_piece(&mut self, p: P) {
        if let Some(Slot::Own(pieces, _)) = self.own_slot() {
            pieces.push_back(p);
        }
        while self.error.is_none() {
            match self.step(false) {
                Ok(Step::Moved) => {}
                Ok(Step::NotReady | Step::Empty) => break,
                Err(e) => self.error = Some(e),
            }
        }
        if self.error.is_none() {
            self.feed_workers();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `streamed` over `items` with no per-worker state and `failed` for a panic, the pieces
    /// handed on collected: the pieces and the result.
    fn collect<P: Send>(
        threads: usize,
        mut items: std::ops::Range<u64>,
        work: impl Fn(u64, &mut dyn FnMut(P)) -> Result<(), String> + Sync,
    ) -> (Vec<P>, Result<(), String>) {
        let mut out = Vec::new();
        let result = streamed(
            threads,
            || Ok::<_, String>(items.next()),
            || (),
            |_, k, emit| work(k, emit),
            |p| {
                out.push(p);
                Ok(())
            },
            || "failed".to_string(),
        );
        (out, result)
    }

    #[test]
    fn streamed_pieces_come_in_order_and_errors_stop() {
        for threads in 1..4 {
            let (out, result) = collect(threads, 0..60, |k, emit| {
                for j in 0..(k % 7) {
                    std::thread::sleep(std::time::Duration::from_micros((k * 37 + j) % 90));
                    emit((k, j));
                }
                Ok(())
            });
            result.expect("no error");
            let want: Vec<(u64, u64)> = (0..60u64)
                .flat_map(|k| (0..k % 7).map(move |j| (k, j)))
                .collect();
            assert_eq!(out, want);

            let (out, e) = collect(threads, 0..60, |k, emit| {
                emit(k);
                if k == 40 {
                    Err(format!("bad {k}"))
                } else {
                    Ok(())
                }
            });
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
            let (_, e) = collect::<()>(threads, 0..10, |k, _| {
                if k == 3 {
                    panic!("worker panics on purpose");
                }
                Ok(())
            });
            assert_eq!(e, Err("failed".to_string()));
        }
    }

    /// Items with more pieces than a worker may have waiting: workers ahead of the sink wait
    /// (and are woken when the sink stops early), and the pieces still come in order.
    #[test]
    fn workers_far_ahead_wait_for_the_sink() {
        let per_item = 3 * PIECES_AHEAD as u64;
        // `per_item` pieces of each of 12 items, handed to `sink`.
        let run = |threads, sink: &mut dyn FnMut((u64, u64)) -> Result<(), String>| {
            let mut items = 0..12u64;
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
                sink,
                || "failed".to_string(),
            )
        };
        for threads in 1..4 {
            let mut out = Vec::new();
            run(threads, &mut |p| {
                // A slow sink, so that the workers get ahead of it.
                if p.1 % 8 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                out.push(p);
                Ok(())
            })
            .expect("no error");
            let want: Vec<(u64, u64)> = (0..12u64)
                .flat_map(|k| (0..per_item).map(move |j| (k, j)))
                .collect();
            assert_eq!(out, want);

            // The sink fails while later items' workers wait with full queues: no hang.
            let mut taken = 0u64;
            let e = run(threads, &mut |_| {
                taken += 1;
                if taken == per_item + 5 {
                    Err("sink".to_string())
                } else {
                    Ok(())
                }
            });
            assert_eq!(e, Err("sink".to_string()));
        }
    }

    /// The calling thread's first item, the pieces handed on, the result.
    type CallerRun = (Option<u64>, Vec<(u64, u64)>, Result<(), String>);

    /// The item the calling thread took first, when each item's first piece takes a while
    /// (so that the calling thread finds none ready and works on one), with the output of a
    /// run whose work, on the calling thread only, does `on_caller` instead of finishing.
    fn run_with_caller_item(threads: usize, on_caller: fn(u64) -> Result<(), String>) -> CallerRun {
        let caller = std::thread::current().id();
        let taken = Mutex::new(None);
        let (out, result) = collect(threads, 0..20, |k, emit| {
            std::thread::sleep(std::time::Duration::from_millis(if k == 0 {
                30
            } else {
                2
            }));
            // The lock is let go before `on_caller`, which may panic.
            let first_on_caller = std::thread::current().id() == caller
                && taken.lock().unwrap().get_or_insert(k) == &k;
            if first_on_caller {
                emit((k, 0));
                return on_caller(k);
            }
            for j in 0..3 {
                emit((k, j));
            }
            Ok(())
        });
        let taken = *taken.lock().unwrap();
        (taken, out, result)
    }

    /// Pieces of items `0..end` as [`run_with_caller_item`]'s work makes them, the calling
    /// thread's item `own` having made one piece.
    fn pieces_before(end: u64, own: u64) -> Vec<(u64, u64)> {
        (0..end)
            .flat_map(|k| (0..if k == own { 1 } else { 3 }).map(move |j| (k, j)))
            .collect()
    }

    #[test]
    fn the_calling_thread_works_on_items_while_it_would_wait() {
        for threads in 1..3 {
            let (own, out, result) = run_with_caller_item(threads, |_| Ok(()));
            assert_eq!(result, Ok(()));
            let own = own.expect("the calling thread took an item");
            assert!(own > 0, "item 0 goes to a worker first");
            assert_eq!(out, pieces_before(20, own));
        }
    }

    #[test]
    fn an_error_of_the_calling_threads_item_comes_in_item_order() {
        for threads in 1..3 {
            let (own, out, result) = run_with_caller_item(threads, |k| Err(format!("bad {k}")));
            let own = own.expect("the calling thread took an item");
            assert_eq!(result, Err(format!("bad {own}")));
            // Everything before it, its own piece made before the error, nothing after.
            let mut want = pieces_before(own, own);
            want.push((own, 0));
            assert_eq!(out, want);
        }
    }

    #[test]
    fn a_panic_on_the_calling_thread_is_an_error_not_a_hang() {
        let (own, out, result) = run_with_caller_item(1, |_| panic!("on purpose"));
        let own = own.expect("the calling thread took an item");
        assert_eq!(result, Err("failed".to_string()));
        let mut want = pieces_before(own, own);
        want.push((own, 0));
        assert_eq!(out, want);
    }

    /// An earlier item (on a worker) fails while the calling thread works on a later one:
    /// the earlier error is returned, and nothing after it is handed on.
    #[test]
    fn an_earlier_error_met_while_the_calling_thread_works_wins() {
        let caller = std::thread::current().id();
        let (out, result) = collect(1, 0..10, |k, emit| {
            if std::thread::current().id() == caller {
                // Slow pieces: the worker's item fails meanwhile.
                for j in 0..5 {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    emit((k, j));
                }
                return Ok(());
            }
            emit((k, 0));
            if k == 0 {
                std::thread::sleep(std::time::Duration::from_millis(5));
                return Err("worker".to_string());
            }
            Ok(())
        });
        assert_eq!(result, Err("worker".to_string()));
        assert_eq!(out, vec![(0, 0)]);
    }
}
