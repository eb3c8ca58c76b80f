//! Parsing a text trace in chunks of whole lines on worker threads, handed back in input order.
//!
//! Parsing a line (splitting it into fields, checking that it prints back the same) does not
//! depend on any other line, while modelling it does. So the input is cut into chunks of whole
//! lines, the chunks are read and parsed on `threads` workers (one reading at a time, in input
//! order), and the caller sees each chunk's parse result in input order on its own thread,
//! where it models it. Which lines share a chunk never
//! reaches the output: the caller sees the same lines in the same order whatever the chunk
//! size or thread count, so the file is the same byte for byte.
//!
//! Memory: at most `threads + 2` chunks (each about [`CHUNK_BYTES`] of text plus its parse
//! result) are in flight, whatever the input's length; a single line longer than a chunk grows
//! its chunk to hold it.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};

use crate::format::FormatError;
use crate::shared::text::line_reader::{read_error, ChunkText, LineReader};

/// Bytes of text per chunk (a chunk ends at the last line end within them).
///
/// A quarter of a megabyte: each chunk buffer in flight is faulted in page by page when first
/// filled, so a short input pays for every buffer it fills (a megabyte each is 256 faults);
/// smaller chunks are also still in the cache when the model reads them. The extra hand-overs
/// are few against a chunk's thousands of lines.
pub const CHUNK_BYTES: usize = 1 << 18;

/// What a parser makes of a chunk's lines.
pub trait ParsedChunk: Default + Send {
    /// Forgets the previous chunk's lines, keeping allocations.
    fn clear(&mut self);
}

/// Reads `input` in chunks of whole lines, parses each with `parse` (on worker threads when
/// `threads > 1`) and calls `consume` with each chunk in input order: the 1-based number of
/// its first line, its text (whole lines, each with its `\n`, except that the input's last
/// line may lack one) and the parse result. `parse` returns the number of lines it saw, which
/// must be the number of lines of the text. Stops at the first error `consume` returns (once a
/// read in progress on a worker returns); a failed read is reported at the line it was
/// reading, after the lines before it were consumed. Returns the number of lines.
pub fn for_each_chunk<P, F, C>(
    input: &mut (dyn Read + Send),
    name: &str,
    threads: usize,
    parse: F,
    mut consume: C,
) -> Result<u64, FormatError>
where
    P: ParsedChunk,
    F: Fn(&[u8], &mut P) -> u64 + Sync,
    C: FnMut(u64, &[u8], &P) -> Result<(), FormatError>,
{
    let mut reader = LineReader::new(input, chunk_bytes());
    let mut lines = 0u64;
    if threads <= 1 {
        let mut parsed = P::default();
        let mut text = ChunkText::default();
        loop {
            match reader.next(&mut text) {
                Ok(true) => {}
                Ok(false) => return Ok(lines),
                Err(e) => return Err(read_error(name, lines + reader.pending_lines(), e)),
            }
            parsed.clear();
            let n = parse(text.bytes(), &mut parsed);
            consume(lines + 1, text.bytes(), &parsed)?;
            lines += n;
        }
    }
    let shared = Mutex::new(Shared {
        reader,
        next: 0,
        in_flight: 0,
        spare: Vec::new(),
        stop: false,
    });
    let turn = Condvar::new();
    let (done, results) = mpsc::channel::<Done<P>>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (shared, turn, done, parse) = (&shared, &turn, done.clone(), &parse);
            scope.spawn(move || read_and_parse(shared, turn, threads + 2, &done, parse));
        }
        drop(done);
        // However the driver returns, the workers stop at their next chunk.
        let _stop = StopOnDrop(&shared, &turn);
        drive(name, &shared, &turn, &results, &mut consume)
    })
}

/// The chunk size: [`CHUNK_BYTES`], or a tiny one in tests so that they cut often.
fn chunk_bytes() -> usize {
    #[cfg(test)]
    {
        let c = CHUNK_FOR_TESTS.with(|c| c.get());
        if c > 0 {
            return c;
        }
    }
    CHUNK_BYTES
}

/// What the parsing workers share: the input, read by one of them at a time so that the
/// consuming thread (the model's, an encode's critical path) does not spend its time in the
/// kernel copying the input (a large share of its time on a long log), and the buffers
/// of consumed chunks.
struct Shared<'a, P> {
    reader: LineReader<'a, dyn Read + Send + 'a>,
    /// The sequence number of the next chunk to read.
    next: u64,
    /// Chunks read and not yet consumed: bounded, so memory is too.
    in_flight: usize,
    /// Buffers of consumed chunks, for reuse.
    spare: Vec<(ChunkText, P)>,
    /// No more chunks are to be read: the input ended or failed, or the consumer stopped.
    stop: bool,
}

/// What a worker tells the consuming thread about chunk number `seq`.
enum Done<P> {
    /// The chunk, parsed, with its line count (`None`: the parser panicked).
    Parsed(u64, ChunkText, P, Option<u64>),
    /// The input ended before chunk `seq`.
    End(u64),
    /// Reading chunk `seq` failed, after this many whole lines of it were read.
    ReadFailed(u64, u64, std::io::Error),
}

impl<P> Done<P> {
    fn seq(&self) -> u64 {
        match self {
            Done::Parsed(seq, ..) | Done::End(seq) | Done::ReadFailed(seq, ..) => *seq,
        }
    }
}

/// A parsing worker: reads the next chunk (holding the lock, since chunks are cut in input
/// order), parses it, and sends it on, until the input ends or the consumer stops.
fn read_and_parse<P: ParsedChunk, F: Fn(&[u8], &mut P) -> u64>(
    shared: &Mutex<Shared<'_, P>>,
    turn: &Condvar,
    most_in_flight: usize,
    done: &mpsc::Sender<Done<P>>,
    parse: &F,
) {
    loop {
        // A poisoned lock means another worker panicked while reading: stop; the consumer
        // learns it when every worker has gone.
        let Ok(mut s) = shared.lock() else { return };
        while !s.stop && s.in_flight >= most_in_flight {
            let Ok(woken) = turn.wait(s) else { return };
            s = woken;
        }
        if s.stop {
            return;
        }
        let (mut text, mut parsed) = s.spare.pop().unwrap_or_default();
        let seq = s.next;
        let last = match s.reader.next(&mut text) {
            Ok(true) => {
                s.next += 1;
                s.in_flight += 1;
                None
            }
            Ok(false) => Some(Done::End(seq)),
            Err(e) => Some(Done::ReadFailed(seq, s.reader.pending_lines(), e)),
        };
        if let Some(last) = last {
            s.stop = true;
            drop(s);
            turn.notify_all();
            let _ = done.send(last);
            return;
        }
        drop(s);
        parsed.clear();
        // A panic must not leave the consumer waiting for this chunk forever.
        let n = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parse(text.bytes(), &mut parsed)
        }))
        .ok();
        if done.send(Done::Parsed(seq, text, parsed, n)).is_err() {
            return;
        }
    }
}

/// Stops the workers of a [`Shared`] when dropped.
struct StopOnDrop<'s, 'a, P>(&'s Mutex<Shared<'a, P>>, &'s Condvar);

impl<P> Drop for StopOnDrop<'_, '_, P> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.0.lock() {
            s.stop = true;
        }
        self.1.notify_all();
    }
}

/// The consuming side of [`for_each_chunk`] with workers: the chunks in input order.
fn drive<P: ParsedChunk, C: FnMut(u64, &[u8], &P) -> Result<(), FormatError>>(
    name: &str,
    shared: &Mutex<Shared<'_, P>>,
    turn: &Condvar,
    results: &mpsc::Receiver<Done<P>>,
    consume: &mut C,
) -> Result<u64, FormatError> {
    let stopped = |message: &str| FormatError {
        file: name.to_string(),
        position: String::new(),
        message: message.to_string(),
    };
    let mut early: BTreeMap<u64, Done<P>> = BTreeMap::new();
    let mut lines = 0u64;
    for seq in 0u64.. {
        let done = loop {
            if let Some(d) = early.remove(&seq) {
                break d;
            }
            let d = results
                .recv()
                .map_err(|_| stopped("a parsing thread stopped"))?;
            early.insert(d.seq(), d);
        };
        match done {
            Done::Parsed(_, text, parsed, n) => {
                let n = n.ok_or_else(|| stopped("a parsing thread panicked"))?;
                consume(lines + 1, text.bytes(), &parsed)?;
                lines += n;
                let mut s = shared
                    .lock()
                    .map_err(|_| stopped("a parsing thread panicked"))?;
                s.spare.push((text, parsed));
                s.in_flight -= 1;
                drop(s);
                turn.notify_one();
            }
            Done::End(_) => break,
            Done::ReadFailed(_, pending, e) => return Err(read_error(name, lines + pending, e)),
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::text::line_reader::for_each_line_of;

    /// Hands out its bytes a few at a time, as pipes do, and can fail after some bytes.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
        fail_after: Option<usize>,
        given: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.fail_after.is_some_and(|f| self.given >= f) {
                return Err(std::io::Error::other("broken pipe"));
            }
            let mut n = self.step.min(self.bytes.len()).min(out.len());
            if let Some(f) = self.fail_after {
                n = n.min(f - self.given);
            }
            out[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            self.given += n;
            Ok(n)
        }
    }

    #[derive(Default)]
    struct Lines(Vec<Vec<u8>>);

    impl ParsedChunk for Lines {
        fn clear(&mut self) {
            self.0.clear();
        }
    }

    fn parse(text: &[u8], out: &mut Lines) -> u64 {
        for_each_line_of(text, |_, _, l| out.0.push(l.to_vec()))
    }

    /// Numbered lines as the consumer saw them.
    type Numbered = Vec<(u64, Vec<u8>)>;

    /// Every line with its number, through chunks of `chunk` bytes on `threads` threads.
    fn run(
        input: &[u8],
        step: usize,
        threads: usize,
        chunk: usize,
        fail_after: Option<usize>,
    ) -> (Numbered, Result<u64, FormatError>) {
        let mut got = Vec::new();
        let mut src = Trickle {
            bytes: input,
            step,
            fail_after,
            given: 0,
        };
        let r = with_chunk_size(chunk, || {
            for_each_chunk(&mut src, "t", threads, parse, |first, text, p: &Lines| {
                assert!(!text.is_empty());
                for (i, l) in p.0.iter().enumerate() {
                    got.push((first + i as u64, l.clone()));
                }
                Ok(())
            })
        });
        (got, r)
    }

    #[test]
    fn lines_come_out_whole_numbered_and_in_order() {
        let mut text = Vec::new();
        for i in 0..2000 {
            text.extend_from_slice(format!("line {i}{}\n", "x".repeat(i % 37)).as_bytes());
        }
        text.extend_from_slice(b"crlf\r\n\nlast without end");
        let expected: Vec<(u64, Vec<u8>)> = text
            .split_inclusive(|&b| b == b'\n')
            .enumerate()
            .map(|(i, l)| (i as u64 + 1, l.to_vec()))
            .collect();
        for threads in [1, 2, 3] {
            for (step, chunk) in [(1, 7), (5, 64), (4096, 100), (usize::MAX, 1 << 20)] {
                let (got, r) = run(&text, step, threads, chunk, None);
                assert_eq!(r.unwrap(), expected.len() as u64);
                assert_eq!(got, expected, "threads {threads} step {step} chunk {chunk}");
            }
        }
        assert_eq!(run(b"", 3, 2, 8, None).0, vec![]);
    }

    #[test]
    fn a_line_longer_than_a_chunk_stays_whole() {
        let mut text = b"a\n".to_vec();
        text.extend(std::iter::repeat_n(b'y', 1000));
        text.extend_from_slice(b"\nb\n");
        for threads in [1, 2] {
            let (got, _) = run(&text, 13, threads, 16, None);
            assert_eq!(got.len(), 3);
            assert_eq!(got[1].1.len(), 1001);
            assert_eq!(got[2], (3, b"b\n".to_vec()));
        }
    }

    #[test]
    fn a_failed_read_names_the_line_being_read() {
        let text = b"one\ntwo\nthree\nfour\n";
        for threads in [1, 2] {
            // Fails inside `three`: lines 1 and 2 are consumed first.
            let (got, r) = run(text, 3, threads, 4, Some(10));
            assert_eq!(got.len(), 2);
            assert_eq!(r.unwrap_err().position, "3:1");
        }
    }

    #[test]
    fn consume_errors_stop_at_the_first_in_order() {
        let text: Vec<u8> = (0..500)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        for threads in [1, 2] {
            let mut src = Trickle {
                bytes: &text,
                step: 7,
                fail_after: None,
                given: 0,
            };
            let r = with_chunk_size(10, || {
                for_each_chunk(&mut src, "t", threads, parse, |first, _, p: &Lines| match p
                    .0
                    .iter()
                    .position(|l| l == b"123\n")
                {
                    Some(i) => Err(FormatError {
                        file: "t".into(),
                        position: format!("{}", first + i as u64),
                        message: "stop".into(),
                    }),
                    None => Ok(()),
                })
            });
            assert_eq!(r.unwrap_err().position, "124");
        }
    }
}

/// Runs `f` with chunks of `bytes` on this thread (tests use tiny chunks to cut often).
#[cfg(test)]
pub(crate) fn with_chunk_size<T>(bytes: usize, f: impl FnOnce() -> T) -> T {
    CHUNK_FOR_TESTS.with(|c| c.set(bytes));
    let r = f();
    CHUNK_FOR_TESTS.with(|c| c.set(0));
    r
}

#[cfg(test)]
thread_local! {
    /// A chunk size for tests (0: [`CHUNK_BYTES`]).
    static CHUNK_FOR_TESTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}
