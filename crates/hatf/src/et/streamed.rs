//! Items worked on by worker threads, whose output is handed on in pieces, in item order, as
//! it is made; the calling thread, which hands the pieces on, may also take an item itself
//! when it has been idle long enough.
//!
//! The Elephant Tracks decoder uses this with one worker per spare core: the worker decodes
//! blocks and prints their text, the calling thread writes the text. On two cores the worker
//! was busy all the time and the writer about half of it (javac-tests: ~45 ms of decoding
//! against ~25 ms of writes into the file); a second worker made three threads fight over two
//! cores, and the writer fell behind. So the writer, when it has waited for the worker for as
//! long as a block takes to decode, decodes the next block itself ([`Help::WhenIdle`]),
//! writing the worker's pieces in between, and keeps its own pieces until their turn.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, TryRecvError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most pieces of one item [`streamed`] lets wait for the sink: a worker that gets this far
/// ahead waits, so that the memory in flight is bounded (the decoder's pieces are 2 MiB).
/// Enough for a worker to print a whole block (13 MB) ahead of the writer: with 1 MiB pieces,
/// 4 ahead gave javac-tests decodes 6,700 page faults instead of 9,000-11,000 but took 10 %
/// longer (workers idle), 16 as long as 64 (9,400 faults).
pub const PIECES_AHEAD: usize = 8;

/// Whether the calling thread of [`streamed`] works on items too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Help {
    /// Never: it only hands the pieces on (for tests: what the workers alone give).
    #[cfg(test)]
    Never,
    /// When it has waited for the workers, in all, for as long as the workers take for an
    /// item (on average so far) beyond the time it already spent on items of its own, it takes
    /// the next item that no worker has started.
    WhenIdle,
    /// Whenever an item is waiting for a worker and it has nothing to hand on (for tests: the
    /// order of the output must not depend on who worked on what).
    #[cfg(test)]
    Always,
}

/// What a worker sends about one item: a piece of its output, or the end of it.
enum Msg<P, E> {
    Piece(P),
    End(Result<(), E>),
}

/// Where the pieces of an item in flight come from.
enum Source<P, E> {
    /// A worker, through the item's channel.
    Worker(mpsc::Receiver<Msg<P, E>>),
    /// The calling thread, which worked on the item itself: its pieces and how it ended.
    Local(VecDeque<P>, Result<(), E>),
    /// The calling thread, which is working on the item now.
    Taken,
}

/// An item for a worker: its number, the item, and where its pieces go.
type Job<I, P, E> = (u64, I, mpsc::SyncSender<Msg<P, E>>);

/// Feeds the items `next` returns (until `Ok(None)`) to `work` on `threads` threads; `work`
/// (with a state per thread made by `state`, e.g. buffers kept from item to item) hands out its
/// output in pieces, through the function it is given, as it goes, and `sink`
/// gets all pieces of the first item, then of the second, and so on: the output of an item is
/// handed on while it is still being made, and the next items' pieces wait (at most
/// `threads + 1` items are in flight). With `help`, the calling thread may work on items too
/// (see [`Help`]); the pieces `sink` gets are the same. The first error, in item order, stops
/// everything and is returned after the pieces made before it; `failed` makes the error for a
/// worker that panicked.
pub fn streamed<I, P, E, S>(
    threads: usize,
    help: Help,
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
                    let Ok((_, item, tx)) = job else { return };
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
        let mut flight = Flight {
            pending: VecDeque::new(),
            worked: 0,
            numbered: 0,
            more: true,
            read_error: None,
        };
        let mut feed = Feed {
            next: &mut next,
            jobs: job_tx,
        };
        let mut own: Option<S> = None;
        let mut balance = Balance::new(threads);
        let result = loop {
            flight.feed(threads + 1, &mut feed);
            let step = match flight.pending.front_mut() {
                None => break flight.read_error.take().map_or(Ok(()), Err),
                Some((_, Source::Worker(rx))) => match rx.try_recv() {
                    Ok(msg) => Some(msg),
                    Err(TryRecvError::Disconnected) => break Err(failed()),
                    Err(TryRecvError::Empty) => None,
                },
                // Taken items are finished before the loop comes back here.
                Some((_, Source::Local(..) | Source::Taken)) => None,
            };
            let msg = match step {
                Some(msg) => msg,
                None => {
                    if let Err(e) = flight.hand_on_local(&mut sink) {
                        break Err(e);
                    }
                    if flight.pending.is_empty() || !flight.front_is_worker() {
                        continue;
                    }
                    if balance.may_help(help) {
                        // One more item for the workers first, so that they do not run out
                        // while this thread works on the one it takes.
                        flight.feed(threads + 2, &mut feed);
                        if let Some(job) = take_waiting(job_rx) {
                            let began = Instant::now();
                            let s = own.get_or_insert_with(state);
                            let done = flight.work_here(
                                job,
                                s,
                                (threads + 2, &mut feed),
                                work,
                                &mut sink,
                                failed,
                            );
                            balance.helped += began.elapsed();
                            // Items the workers ended meanwhile.
                            if flight.worked > 0 {
                                balance.ended(flight.worked);
                            }
                            if let Err(e) = done {
                                break Err(e);
                            }
                            continue;
                        }
                    }
                    let Some((_, Source::Worker(rx))) = flight.pending.front() else {
                        continue;
                    };
                    let began = Instant::now();
                    let msg = rx.recv();
                    balance.waited += began.elapsed();
                    match msg {
                        Ok(msg) => msg,
                        Err(_) => break Err(failed()),
                    }
                }
            };
            match msg {
                Msg::Piece(p) => {
                    if let Err(e) = sink(p) {
                        break Err(e);
                    }
                }
                Msg::End(Ok(())) => {
                    flight.pending.pop_front();
                    flight.worked += 1;
                    balance.ended(flight.worked);
                }
                Msg::End(Err(e)) => break Err(e),
            }
        };
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        drop(feed);
        result
    })
}

/// The next item waiting for a worker, if one is and no worker is taking one right now (a
/// worker holding the queue is idle: the item is its).
fn take_waiting<T>(jobs: &Mutex<mpsc::Receiver<T>>) -> Option<T> {
    jobs.try_lock().ok()?.try_recv().ok()
}

/// Where [`streamed`]'s items come from and where they go to the workers.
struct Feed<'n, N, I, P, E> {
    next: &'n mut N,
    jobs: mpsc::Sender<Job<I, P, E>>,
}

/// The items in flight, oldest first, with where their pieces come from.
struct Flight<P, E> {
    pending: VecDeque<(u64, Source<P, E>)>,
    /// Items workers finished (and whose pieces were all handed on).
    worked: u64,
    /// Items read so far.
    numbered: u64,
    /// False once the items ran out or one could not be read.
    more: bool,
    /// Why an item could not be read: returned once the items before it are handed on.
    read_error: Option<E>,
}

impl<P, E> Flight<P, E> {
    /// Reads items and hands them to the workers until `limit` are in flight.
    fn feed<N, I>(&mut self, limit: usize, feed: &mut Feed<'_, N, I, P, E>)
    where
        N: FnMut() -> Result<Option<I>, E>,
    {
        while self.more && self.pending.len() < limit {
            match (feed.next)() {
                Ok(Some(item)) => {
                    // A worker ahead of the writer waits once its item has this many pieces
                    // waiting, instead of making fresh ones (page faults).
                    let (tx, rx) = mpsc::sync_channel(PIECES_AHEAD);
                    if feed.jobs.send((self.numbered, item, tx)).is_err() {
                        self.more = false;
                        return;
                    }
                    self.pending.push_back((self.numbered, Source::Worker(rx)));
                    self.numbered += 1;
                }
                Ok(None) => self.more = false,
                Err(e) => {
                    // What was read before the failure is still handed on, as when working
                    // through the items one by one.
                    self.read_error = Some(e);
                    self.more = false;
                }
            }
        }
    }

    fn front_is_worker(&self) -> bool {
        matches!(self.pending.front(), Some((_, Source::Worker(_))))
    }

    /// Hands on the pieces of the items at the front that the calling thread worked on, and
    /// drops them from the flight (an error they ended with comes back).
    fn hand_on_local(&mut self, sink: &mut impl FnMut(P) -> Result<(), E>) -> Result<(), E> {
        while let Some((_, Source::Local(pieces, _))) = self.pending.front_mut() {
            while let Some(p) = pieces.pop_front() {
                sink(p)?;
            }
            if let Some((_, Source::Local(_, end))) = self.pending.pop_front() {
                end?;
            }
        }
        Ok(())
    }

    /// Hands on what is ready at the front, up to item `upto`, without waiting: the pieces a
    /// worker has sent, whole items the calling thread finished.
    fn hand_on_ready(
        &mut self,
        upto: u64,
        sink: &mut impl FnMut(P) -> Result<(), E>,
        failed: &impl Fn() -> E,
    ) -> Result<(), E> {
        loop {
            self.hand_on_local(sink)?;
            let Some((k, Source::Worker(rx))) = self.pending.front() else {
                return Ok(());
            };
            if *k >= upto {
                return Ok(());
            }
            match rx.try_recv() {
                Ok(Msg::Piece(p)) => sink(p)?,
                Ok(Msg::End(Ok(()))) => {
                    self.pending.pop_front();
                    self.worked += 1;
                }
                Ok(Msg::End(Err(e))) => return Err(e),
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => return Err(failed()),
            }
        }
    }

    /// Works on `job` on the calling thread, keeping its pieces until their turn and handing
    /// on the older items' pieces as they come (after each piece of its own), and keeping up
    /// to the given number of items in flight; an error from `sink` comes back, one from the
    /// work is the item's end.
    fn work_here<I, S, N>(
        &mut self,
        (k, item, _channel): Job<I, P, E>,
        state: &mut S,
        (limit, feed): (usize, &mut Feed<'_, N, I, P, E>),
        work: &impl Fn(&mut S, I, &mut dyn FnMut(P)) -> Result<(), E>,
        sink: &mut impl FnMut(P) -> Result<(), E>,
        failed: &impl Fn() -> E,
    ) -> Result<(), E>
    where
        N: FnMut() -> Result<Option<I>, E>,
    {
        if let Some(entry) = self.pending.iter_mut().find(|(j, _)| *j == k) {
            entry.1 = Source::Taken;
        }
        let mut pieces = VecDeque::new();
        let mut sink_error = None;
        let end = catch_unwind(AssertUnwindSafe(|| {
            work(state, item, &mut |p| {
                pieces.push_back(p);
                self.feed(limit, feed);
                if sink_error.is_none() {
                    sink_error = self.hand_on_ready(k, sink, failed).err();
                }
            })
        }))
        .unwrap_or_else(|_| Err(failed()));
        if let Some(e) = sink_error {
            return Err(e);
        }
        if let Some(entry) = self.pending.iter_mut().find(|(j, _)| *j == k) {
            entry.1 = Source::Local(pieces, end);
        }
        Ok(())
    }
}

/// When the calling thread of [`streamed`] may take an item (see [`Help::WhenIdle`]).
struct Balance {
    threads: u32,
    start: Instant,
    /// Time spent waiting for a worker's next message.
    waited: Duration,
    /// Time spent on items of its own.
    helped: Duration,
    /// Wall time a worker takes for an item, on average so far: unknown until one ended.
    per_item: Option<Duration>,
}

impl Balance {
    fn new(threads: usize) -> Balance {
        Balance {
            threads: u32::try_from(threads).unwrap_or(u32::MAX),
            start: Instant::now(),
            waited: Duration::ZERO,
            helped: Duration::ZERO,
            per_item: None,
        }
    }

    /// Workers have finished `worked` items in all.
    fn ended(&mut self, worked: u64) {
        let worked = u32::try_from(worked).unwrap_or(u32::MAX).max(1);
        // The workers are busy all along (the calling thread is the one with time to spare).
        self.per_item = Some(self.start.elapsed() * self.threads / worked);
    }

    fn may_help(&self, help: Help) -> bool {
        match help {
            #[cfg(test)]
            Help::Never => false,
            Help::WhenIdle => self
                .per_item
                .is_some_and(|item| self.waited >= self.helped + item),
            #[cfg(test)]
            Help::Always => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way the calling thread may help.
    const HELPS: [Help; 3] = [Help::Never, Help::WhenIdle, Help::Always];

    /// With a slow worker the calling thread takes items itself; the pieces still come in
    /// order, and an error in an item it took comes after the pieces before it.
    #[test]
    fn items_the_caller_takes_come_in_order() {
        let caller = std::thread::current().id();
        let taken = std::sync::atomic::AtomicU64::new(0);
        let mut items = 0..30u64;
        let mut out = Vec::new();
        streamed(
            1,
            Help::Always,
            || Ok::<_, String>(items.next()),
            || (),
            |_, k, emit| {
                if std::thread::current().id() == caller {
                    taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                } else {
                    std::thread::sleep(Duration::from_millis(2));
                }
                for j in 0..3 {
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
        let want: Vec<(u64, u64)> = (0..30u64)
            .flat_map(|k| (0..3).map(move |j| (k, j)))
            .collect();
        assert_eq!(out, want);
        assert!(taken.into_inner() > 0, "the caller took no item");

        // Every item fails on the caller's thread: the first error in item order wins.
        let mut items = 0..30u64;
        let mut out = Vec::new();
        let e = streamed(
            1,
            Help::Always,
            || Ok::<_, String>(items.next()),
            || (),
            |_, k, emit| {
                emit(k);
                if std::thread::current().id() == caller && k > 3 {
                    return Err(format!("caller {k}"));
                }
                std::thread::sleep(Duration::from_millis(2));
                Ok(())
            },
            |v| {
                out.push(v);
                Ok(())
            },
            || "failed".to_string(),
        );
        let e = e.expect_err("an item failed");
        let k: u64 = e
            .trim_start_matches("caller ")
            .parse()
            .expect("the caller's error");
        assert_eq!(out, (0..=k).collect::<Vec<_>>());
    }

    #[test]
    fn the_caller_waits_before_it_helps_as_long_as_an_item_takes() {
        let mut b = Balance::new(1);
        assert!(!b.may_help(Help::WhenIdle));
        std::thread::sleep(Duration::from_millis(2));
        b.ended(1);
        let item = b.per_item.expect("an item ended");
        assert!(item >= Duration::from_millis(2));
        assert!(!b.may_help(Help::WhenIdle));
        b.waited = item;
        assert!(b.may_help(Help::WhenIdle));
        b.helped = item;
        assert!(!b.may_help(Help::WhenIdle));
        assert!(!b.may_help(Help::Never));
        assert!(b.may_help(Help::Always));
    }

    #[test]
    fn streamed_pieces_come_in_order_and_errors_stop() {
        for (threads, help) in (1..4).flat_map(|t| HELPS.map(|h| (t, h))) {
            let mut items = 0..60u64;
            let mut out = Vec::new();
            streamed(
                threads,
                help,
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
                help,
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
                help,
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
                help,
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
        for (threads, help) in (1..4).flat_map(|t| HELPS.map(|h| (t, h))) {
            let mut items = 0..12u64;
            let mut out = Vec::new();
            streamed(
                threads,
                help,
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
                help,
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
}
