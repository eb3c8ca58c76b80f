//! Waiting for a message from a busier thread without making that thread wake us.
//!
//! A thread that blocks in [`mpsc::Receiver::recv`] is parked, and the sender of the next
//! message then pays a system call to wake it (a futex wake, which on this project's
//! two-core VM also sends an interrupt to the other processor). In the threaded decodes the
//! sender is the thread that limits the run (the model's worker) and the receiver the one with
//! time to spare (the thread that prints and writes), and a wake-up per batch would cost the
//! worker of a memory-replay decode a few per cent of its time. So
//! the receiver first polls the channel for a short while, which costs the sender nothing, and
//! parks only when nothing came.

use std::sync::mpsc::{self, RecvError, TryRecvError};
use std::time::{Duration, Instant};

use super::cpu_time::thread_cpu_ns;

/// How long [`recv_spinning`] polls before it parks: a few batches' worth of the model's time
/// (a batch of 2,048 records takes it about 60 µs), so that the usual gap between two
/// messages is bridged, while a receiver left waiting for a long time (a slow block, a full
/// pipe) soon stops using its processor.
pub const SPIN: Duration = Duration::from_micros(200);

/// Spin-loop hints between two polls of the channel: a poll reads the channel's shared state,
/// which the sender writes, so polling without a pause would slow the sender down.
const PAUSES: u32 = 32;

/// The next message of `rx`, as [`mpsc::Receiver::recv`] gives it, after polling for up to
/// `limit` first; also how long it polled (the processor time the wait used, which a caller
/// that measures its own work subtracts).
pub fn recv_spinning<T>(
    rx: &mpsc::Receiver<T>,
    limit: Duration,
) -> (Result<T, RecvError>, Duration) {
    let start = Instant::now();
    loop {
        match rx.try_recv() {
            Ok(message) => return (Ok(message), start.elapsed()),
            Err(TryRecvError::Disconnected) => return (Err(RecvError), start.elapsed()),
            Err(TryRecvError::Empty) => {}
        }
        for _ in 0..PAUSES {
            std::hint::spin_loop();
        }
        // Another thread of the decode that is ready to run (the one decompressing the next
        // block) gets this processor first.
        std::thread::yield_now();
        let spun = start.elapsed();
        if spun >= limit {
            return (rx.recv(), spun);
        }
    }
}

/// The next message of `rx`: at once when one is there, else after calling `waits` with the
/// thread's CPU time and waiting as [`recv_spinning`] does for up to [`SPIN`]; also the CPU
/// time that wait used (`None` when it did not wait), which a thread that compares its work
/// with another's does not count as work. (The CPU clock is read only when it waits: a read is
/// a system call.)
pub fn recv_counted<T>(
    rx: &mpsc::Receiver<T>,
    waits: impl FnOnce(u64),
) -> (Result<T, RecvError>, Option<u64>) {
    match rx.try_recv() {
        Ok(message) => (Ok(message), None),
        Err(TryRecvError::Disconnected) => (Err(RecvError), None),
        Err(TryRecvError::Empty) => {
            let before = thread_cpu_ns();
            waits(before);
            let (message, _) = recv_spinning(rx, SPIN);
            (message, Some(thread_cpu_ns().saturating_sub(before)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_sent_while_polling_is_received() {
        let (tx, rx) = mpsc::channel();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_micros(50));
            tx.send(7u32).unwrap();
        });
        let (got, _) = recv_spinning(&rx, Duration::from_secs(5));
        assert_eq!(got, Ok(7));
        sender.join().unwrap();
    }

    #[test]
    fn a_message_sent_after_the_polling_is_received_by_the_parked_receiver() {
        let (tx, rx) = mpsc::channel();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            tx.send(9u32).unwrap();
        });
        let (got, spun) = recv_spinning(&rx, Duration::from_micros(10));
        assert_eq!(got, Ok(9));
        // It polled for the limit, not for the whole wait (the margin is for a loaded machine).
        assert!(spun >= Duration::from_micros(10));
        assert!(spun < Duration::from_millis(200));
        sender.join().unwrap();
    }

    #[test]
    fn a_closed_channel_ends_the_wait_with_an_error() {
        let (tx, rx) = mpsc::channel::<u32>();
        drop(tx);
        assert_eq!(recv_spinning(&rx, SPIN).0, Err(RecvError));
        let (tx, rx) = mpsc::channel::<u32>();
        let closer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            drop(tx);
        });
        assert_eq!(
            recv_spinning(&rx, Duration::from_micros(10)).0,
            Err(RecvError)
        );
        closer.join().unwrap();
    }

    #[test]
    fn a_counted_wait_is_told_and_measured_only_when_it_waits() {
        let (tx, rx) = mpsc::channel();
        tx.send(1u32).unwrap();
        let (got, waited) = recv_counted(&rx, |_| panic!("no wait"));
        assert_eq!((got, waited), (Ok(1), None));
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(2));
            tx.send(2u32).unwrap();
        });
        let mut told = false;
        let (got, waited) = recv_counted(&rx, |_| told = true);
        assert_eq!(got, Ok(2));
        assert!(told && waited.is_some());
        sender.join().unwrap();
        let (got, waited) = recv_counted(&rx, |_| panic!("no wait"));
        assert_eq!((got, waited), (Err(RecvError), None));
    }

    #[test]
    fn queued_messages_come_in_order() {
        let (tx, rx) = mpsc::sync_channel(4);
        for k in 0..4u32 {
            tx.send(k).unwrap();
        }
        let got: Vec<u32> = (0..4)
            .map(|_| recv_spinning(&rx, SPIN).0.unwrap())
            .collect();
        assert_eq!(got, [0, 1, 2, 3]);
    }
}
