//! Parsing a text trace in chunks of whole lines on worker threads, handed back in input order.
//!
//! Parsing a line (splitting it into fields, checking that it prints back the same) does not
//! depend on any other line, while modelling it does. So the input is cut into chunks of whole
//! lines, the chunks are parsed on `threads` workers, and the caller sees each chunk's parse
//! result in input order on its own thread, where it models it. Which lines share a chunk never
//! reaches the output: the caller sees the same lines in the same order whatever the chunk
//! size or thread count, so the file is the same byte for byte.
//!
//! Memory: at most `threads + 2` chunks (each about [`CHUNK_BYTES`] of text plus its parse
//! result) are in flight, whatever the input's length; a single line longer than a chunk grows
//! its chunk to hold it.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read};
use std::sync::mpsc;
use std::sync::Mutex;

use crate::format::FormatError;

/// Bytes of text per chunk (a chunk ends at the last line end within them).
pub const CHUNK_BYTES: usize = 1 << 20;

/// What a parser makes of a chunk's lines.
pub trait ParsedChunk: Default + Send {
    /// Forgets the previous chunk's lines, keeping allocations.
    fn clear(&mut self);
}

/// Reads `input` in chunks of whole lines, parses each with `parse` (on worker threads when
/// `threads > 1`) and calls `consume` with each chunk in input order: the 1-based number of
/// its first line, its text (whole lines, each with its `\n`, except that the input's last
/// line may lack one) and the parse result. `parse` returns the number of lines it saw, which
/// must be the number of lines of the text. Stops at the first error `consume` returns; a failed
/// read is reported at the line it was reading, after the lines before it were consumed.
/// Returns the number of lines.
pub fn for_each_chunk<P, F, C>(
    input: &mut dyn Read,
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
    let mut reader = ChunkReader::new(input, chunk_bytes());
    let mut lines = 0u64;
    if threads <= 1 {
        let mut parsed = P::default();
        let mut text = Text::default();
        loop {
            match reader.next(&mut text) {
                Ok(true) => {}
                Ok(false) => return Ok(lines),
                Err(e) => return Err(reader.read_error(name, lines, e)),
            }
            parsed.clear();
            let n = parse(text.bytes(), &mut parsed);
            consume(lines + 1, text.bytes(), &parsed)?;
            lines += n;
        }
    }
    let (jobs, queue) = mpsc::sync_channel::<Job<P>>(threads);
    let queue = Mutex::new(queue);
    let (done, results) = mpsc::channel::<Done<P>>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (queue, done, parse) = (&queue, done.clone(), &parse);
            scope.spawn(move || loop {
                // Hold the lock only to take a job, not while parsing it.
                let job = match queue.lock() {
                    Ok(q) => q.recv(),
                    Err(_) => return,
                };
                let Ok((seq, text, mut parsed)) = job else {
                    return;
                };
                parsed.clear();
                // A panic must not leave the reader waiting for this chunk forever.
                let n = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    parse(text.bytes(), &mut parsed)
                }))
                .ok();
                if done.send((seq, text, parsed, n)).is_err() {
                    return;
                }
            });
        }
        drop(done);
        // `jobs` moves into the driver, so the workers' queue closes whenever it returns.
        drive(
            &mut reader,
            name,
            threads,
            jobs,
            &results,
            &mut consume,
            &mut lines,
        )
        .map(|()| lines)
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

/// A chunk to parse: its sequence number, text, and a parse result to reuse.
type Job<P> = (u64, Text, P);
/// A parsed chunk: sequence number, text, result, and its line count (`None`: the parser
/// panicked).
type Done<P> = (u64, Text, P, Option<u64>);

/// The reading and consuming side of [`for_each_chunk`] with workers.
fn drive<P: ParsedChunk, C: FnMut(u64, &[u8], &P) -> Result<(), FormatError>>(
    reader: &mut ChunkReader<'_>,
    name: &str,
    threads: usize,
    jobs: mpsc::SyncSender<Job<P>>,
    results: &mpsc::Receiver<Done<P>>,
    consume: &mut C,
    lines: &mut u64,
) -> Result<(), FormatError> {
    let stopped = || FormatError {
        file: name.to_string(),
        position: String::new(),
        message: "a parsing thread stopped".to_string(),
    };
    let mut spare: Vec<(Text, P)> = Vec::new();
    let mut early: BTreeMap<u64, Done<P>> = BTreeMap::new();
    let (mut submitted, mut consumed) = (0u64, 0u64);
    // Consumes the oldest chunk in flight, waiting for it if need be.
    let mut consume_oldest =
        |early: &mut BTreeMap<u64, Done<P>>, spare: &mut Vec<(Text, P)>, consumed: &mut u64| {
            let (_, text, parsed, n) = loop {
                if let Some(d) = early.remove(consumed) {
                    break d;
                }
                let d = results.recv().map_err(|_| stopped())?;
                early.insert(d.0, d);
            };
            let n = n.ok_or_else(|| FormatError {
                message: "a parsing thread panicked".to_string(),
                ..stopped()
            })?;
            consume(*lines + 1, text.bytes(), &parsed)?;
            *lines += n;
            *consumed += 1;
            spare.push((text, parsed));
            Ok::<(), FormatError>(())
        };
    loop {
        let (mut text, parsed) = spare.pop().unwrap_or_default();
        match reader.next(&mut text) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                // Lines before the failed read come first, as when reading line by line.
                while consumed < submitted {
                    consume_oldest(&mut early, &mut spare, &mut consumed)?;
                }
                return Err(reader.read_error(name, *lines, e));
            }
        }
        jobs.send((submitted, text, parsed))
            .map_err(|_| stopped())?;
        submitted += 1;
        // Bounded memory: a chunk per worker, one queued, and the one being read.
        while submitted - consumed > threads as u64 + 1 {
            consume_oldest(&mut early, &mut spare, &mut consumed)?;
        }
    }
    while consumed < submitted {
        consume_oldest(&mut early, &mut spare, &mut consumed)?;
    }
    Ok(())
}

/// A chunk's text: the first `len` bytes of `buf`.
#[derive(Default)]
struct Text {
    buf: Vec<u8>,
    len: usize,
}

impl Text {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Cuts the input into chunks of whole lines.
struct ChunkReader<'a> {
    input: &'a mut dyn Read,
    /// Bytes read after the last line end handed out (the start of a line).
    carry: Vec<u8>,
    chunk: usize,
    done: bool,
}

impl<'a> ChunkReader<'a> {
    fn new(input: &'a mut dyn Read, chunk: usize) -> Self {
        ChunkReader {
            input,
            carry: Vec::new(),
            chunk,
            done: false,
        }
    }

    /// Fills `text` with the next chunk: whole lines, at least one, ending at a `\n` except at
    /// the end of the input. False at the end of the input.
    fn next(&mut self, text: &mut Text) -> std::io::Result<bool> {
        // The buffer keeps its length from chunk to chunk (only `len` bytes are the chunk), so
        // it is zeroed once, not at every chunk.
        // Room for a whole chunk after the carried bytes: a read of the full chunk size goes
        // past a `BufReader` of that capacity straight into this buffer, instead of being
        // copied through the reader's own buffer.
        let mut target = self.chunk + self.carry.len();
        if text.buf.len() < target {
            text.buf.resize(target, 0);
        }
        text.buf[..self.carry.len()].copy_from_slice(&self.carry);
        text.len = self.carry.len();
        self.carry.clear();
        // Bytes up to here were searched for a line end already.
        let mut searched = 0usize;
        loop {
            if !self.done && text.len < target {
                let n = loop {
                    match self.input.read(&mut text.buf[text.len..target]) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(e) => {
                            // Keep what was read for the line count of the error.
                            self.carry.extend_from_slice(text.bytes());
                            return Err(e);
                        }
                    }
                };
                text.len += n;
                self.done = n == 0;
                if !self.done {
                    continue;
                }
            }
            if self.done {
                return Ok(text.len > 0);
            }
            match memchr::memrchr(b'\n', &text.buf[searched..text.len]) {
                Some(i) => {
                    let end = searched + i + 1;
                    self.carry.extend_from_slice(&text.buf[end..text.len]);
                    text.len = end;
                    return Ok(true);
                }
                None => {
                    // One line longer than the chunk: read on until it ends.
                    searched = text.len;
                    target = text.len * 2;
                    text.buf.resize(target, 0);
                }
            }
        }
    }

    /// The error for a failed read, after `lines` lines were consumed: at the line being read.
    fn read_error(&self, name: &str, lines: u64, e: std::io::Error) -> FormatError {
        let pending = memchr::memchr_iter(b'\n', &self.carry).count() as u64;
        FormatError {
            file: name.to_string(),
            position: format!("{}:1", lines + pending + 1),
            message: format!("cannot read the input: {e}"),
        }
    }
}

/// Calls `visit` with each line of `text` (a chunk from [`for_each_chunk`]): its 0-based index
/// in the chunk, its start offset, and its bytes including the `\n` when there is one. Returns
/// the number of lines.
#[inline]
pub fn for_each_line_of(text: &[u8], mut visit: impl FnMut(u64, usize, &[u8])) -> u64 {
    let mut start = 0usize;
    let mut n = 0u64;
    for end in memchr::memchr_iter(b'\n', text) {
        visit(n, start, &text[start..=end]);
        n += 1;
        start = end + 1;
    }
    if start < text.len() {
        visit(n, start, &text[start..]);
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

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
