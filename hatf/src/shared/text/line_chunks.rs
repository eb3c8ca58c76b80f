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
use std::io::{ErrorKind, Read};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};

use crate::format::FormatError;
use crate::shared::text::lines::{
    is_line_too_long, line_too_long, line_too_long_io, MAX_LINE_BYTES,
};

/// Bytes of text per chunk (a chunk ends at the last line end within them).
///
/// A quarter of a megabyte: each chunk buffer in flight is faulted in page by page when first
/// filled, so a short input pays for every buffer it fills (a megabyte each is 256 faults);
/// smaller chunks are also still in the cache when the model reads them. The extra hand-overs
/// cost nothing measurable on long inputs (perl-hash, python-json and systemui encode no
/// slower than with 1 MiB chunks).
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
    let mut reader = ChunkReader::new(input, chunk_bytes());
    let mut lines = 0u64;
    if threads <= 1 {
        let mut parsed = P::default();
        let mut text = Text::default();
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
/// kernel copying the input (a third of that thread on a 112 MB `mtrace` log), and the buffers
/// of consumed chunks.
struct Shared<'a, P> {
    reader: ChunkReader<'a>,
    /// The sequence number of the next chunk to read.
    next: u64,
    /// Chunks read and not yet consumed: bounded, so memory is too.
    in_flight: usize,
    /// Buffers of consumed chunks, for reuse.
    spare: Vec<(Text, P)>,
    /// No more chunks are to be read: the input ended or failed, or the consumer stopped.
    stop: bool,
}

/// What a worker tells the consuming thread about chunk number `seq`.
enum Done<P> {
    /// The chunk, parsed, with its line count (`None`: the parser panicked).
    Parsed(u64, Text, P, Option<u64>),
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

/// How much smaller than the full chunk size the first chunk is (see [`ChunkReader::chunk`]).
const FIRST_CHUNK_DIVISOR: usize = 16;

/// Cuts the input into chunks of whole lines.
struct ChunkReader<'a> {
    input: &'a mut (dyn Read + Send),
    /// Bytes read after the last line end handed out (the start of a line).
    carry: Vec<u8>,
    /// Bytes of the next chunk: the first is 1/[`FIRST_CHUNK_DIVISOR`] of `full`, and each
    /// next one twice the one before, up to `full`. Why: nothing downstream starts before the
    /// first chunk is parsed (the model's thread, then the encoder's address thread, wait for
    /// it), so a small first chunk starts them sooner (a 256 KiB chunk is about half a
    /// millisecond of parsing), while the chunks after it, parsed while the first is
    /// modelled, soon reach the full size that keeps hand-overs rare. Which lines share a
    /// chunk never reaches the output.
    chunk: usize,
    /// The chunk size asked for.
    full: usize,
    done: bool,
}

impl<'a> ChunkReader<'a> {
    fn new(input: &'a mut (dyn Read + Send), chunk: usize) -> Self {
        ChunkReader {
            input,
            carry: Vec::new(),
            chunk: (chunk / FIRST_CHUNK_DIVISOR).max(1),
            full: chunk.max(1),
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
        self.chunk = (2 * self.chunk).min(self.full);
        if text.buf.len() < target {
            // Room for a full-size chunk (the first chunks are smaller) and for a longer
            // carried line next time too, so the buffer is not grown (and its new pages
            // faulted in) at nearly every chunk.
            let room = target.max(self.full + self.carry.len()) + self.full / 16;
            if text.buf.is_empty() {
                // A new zeroed allocation, not `resize`: a buffer this large is fresh pages
                // from the kernel (zero already), so only the pages the input fills are ever
                // touched. Resizing wrote zeros over the whole chunk first: 256 page faults
                // per parsing thread for a 3-line file.
                text.buf = zeroed_bytes(room);
            } else {
                // Growing keeps the pages already in use (a large buffer is moved by
                // remapping them), and zeroes only the new ones.
                text.buf.resize(room, 0);
            }
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
            // A chunk grown for a long first line: that line ends at its first `\n` (every
            // other line fits in a chunk of the usual size).
            if searched > 0 {
                let first = memchr::memchr(b'\n', text.bytes()).unwrap_or(text.len);
                if first > MAX_LINE_BYTES {
                    return Err(line_too_long_io());
                }
            }
            if self.done {
                // The input's last line, without a `\n`, may not be longer either.
                let last = memchr::memrchr(b'\n', text.bytes()).map_or(0, |p| p + 1);
                if text.len - last > MAX_LINE_BYTES {
                    self.carry.extend_from_slice(&text.buf[..last]);
                    return Err(line_too_long_io());
                }
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
                    // One line longer than the chunk: read on until it ends, up to the limit
                    // (the chunk holds only this line: it starts at a line start and has no
                    // line end).
                    if text.len > MAX_LINE_BYTES {
                        return Err(line_too_long_io());
                    }
                    searched = text.len;
                    target = text.len * 2;
                    text.buf.resize(target, 0);
                }
            }
        }
    }

    /// After a failed read: the whole lines read since the last chunk handed out.
    fn pending_lines(&self) -> u64 {
        memchr::memchr_iter(b'\n', &self.carry).count() as u64
    }
}

/// `len` zero bytes from the allocator's zeroed memory (no fill pass when it comes fresh from
/// the kernel).
fn zeroed_bytes(len: usize) -> Vec<u8> {
    vec![0u8; len]
}

/// The error for a failed read after `lines` whole lines: at the line being read.
fn read_error(name: &str, lines: u64, e: std::io::Error) -> FormatError {
    if is_line_too_long(&e) {
        return line_too_long(name, lines + 1);
    }
    FormatError {
        file: name.to_string(),
        position: format!("{}:1", lines + 1),
        message: format!("cannot read the input: {e}"),
    }
}

/// Calls `visit` with each line of `text` (a chunk from [`for_each_chunk`]): its 0-based index
/// in the chunk, its start offset, and its bytes including the `\n` when there is one. Returns
/// the number of lines.
#[inline]
pub fn for_each_line_of(text: &[u8], mut visit: impl FnMut(u64, usize, &[u8])) -> u64 {
    let mut start = 0usize;
    let mut n = 0u64;
    for end in LineEnds::new(text) {
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

/// Bytes per block of [`LineEnds`].
const BLOCK: usize = 64;

/// The positions of the `\n`s of a text, in order.
///
/// They are found a 64-byte block at a time as a bit mask, then handed out one bit at a time:
/// a few instructions per line, where a `memchr` call per line (with its set-up for a search
/// that ends within tens of bytes) would be a tenth of a parsing worker.
pub struct LineEnds<'a> {
    text: &'a [u8],
    /// Where the block that `mask` describes starts.
    block: usize,
    /// The `\n`s of that block not yet handed out: bit `i` for byte `block + i`.
    mask: u64,
}

impl<'a> LineEnds<'a> {
    /// The line ends of `text`.
    #[inline]
    pub fn new(text: &'a [u8]) -> Self {
        LineEnds {
            text,
            block: 0,
            mask: newlines_from(text, 0),
        }
    }
}

impl Iterator for LineEnds<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            if self.text.len() - self.block <= BLOCK {
                return None;
            }
            self.block += BLOCK;
            self.mask = newlines_from(self.text, self.block);
        }
        let at = self.block + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// The `\n`s of the 64 bytes of `text` from `at` (`at` ≤ its length) as a bit mask; bytes past
/// the end of `text` are none.
#[inline]
fn newlines_from(text: &[u8], at: usize) -> u64 {
    match text
        .get(at..at + BLOCK)
        .and_then(|b| <&[u8; BLOCK]>::try_from(b).ok())
    {
        Some(b) => newlines_in(b),
        None => {
            let mut b = [0u8; BLOCK];
            b[..text.len() - at].copy_from_slice(&text[at..]);
            newlines_in(&b)
        }
    }
}

/// The `\n`s of a block as a bit mask: SSE2 compares 16 bytes at once and gathers one bit
/// per byte (SSE2 is part of every x86-64 processor).
#[cfg(target_arch = "x86_64")]
#[inline]
fn newlines_in(b: &[u8; BLOCK]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut mask = 0u64;
    for k in 0..BLOCK / 16 {
        // SAFETY: SSE2 is enabled on every x86_64 target, and the unaligned load reads bytes
        // `16 * k..16 * k + 16` of `b`, which has 64.
        let bits = unsafe {
            let v = _mm_loadu_si128(b.as_ptr().add(16 * k).cast::<__m128i>());
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8)))
        };
        mask |= u64::from(bits as u16) << (16 * k);
    }
    mask
}

/// The `\n`s of a block as a bit mask (portable form).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn newlines_in(b: &[u8; BLOCK]) -> u64 {
    let mut mask = 0u64;
    for (i, &c) in b.iter().enumerate() {
        mask |= u64::from(c == b'\n') << i;
    }
    mask
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
    fn the_first_chunks_are_small_and_grow_to_the_chunk_size() {
        // 20-byte lines, chunks of 3,200 bytes: the first chunk is about a sixteenth of that,
        // each next one about twice the one before, until the full size.
        let text: Vec<u8> = (0..2000)
            .flat_map(|i| format!("{i:019}\n").into_bytes())
            .collect();
        let mut src = &text[..];
        let mut reader = ChunkReader::new(&mut src, 3200);
        let mut chunk = Text::default();
        let mut sizes = Vec::new();
        while reader.next(&mut chunk).unwrap() {
            sizes.push(chunk.len);
        }
        assert_eq!(sizes[..6], [200, 400, 800, 1600, 3200, 3200]);
        assert_eq!(sizes.iter().sum::<usize>(), text.len());
    }

    #[test]
    fn line_ends_are_found_across_blocks() {
        // Lines of every length from 0 to 150 bytes, so ends fall everywhere in and across
        // the 64-byte blocks, and texts cut at every length up to a few blocks.
        let mut text = Vec::new();
        for n in 0..150usize {
            text.extend((0..n).map(|i| b'a' + (i % 26) as u8));
            text.push(b'\n');
        }
        for cut in (0..300).chain([text.len() - 1, text.len()]) {
            let t = &text[..cut.min(text.len())];
            let expected: Vec<usize> = memchr::memchr_iter(b'\n', t).collect();
            assert_eq!(LineEnds::new(t).collect::<Vec<_>>(), expected, "cut {cut}");
        }
        let all: Vec<usize> = memchr::memchr_iter(b'\n', &text).collect();
        assert_eq!(LineEnds::new(&text).collect::<Vec<_>>(), all);
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
    fn a_chunk_buffer_is_made_once_and_kept_while_carried_lines_fit_its_slack() {
        // Lines of 50 bytes never line up with chunks of 1000: every chunk carries part of a
        // line into the next, which must fit the buffer's slack instead of growing it.
        let text: Vec<u8> = (0..400)
            .flat_map(|i| format!("{i:>49}\n").into_bytes())
            .collect();
        let mut input = &text[..];
        let mut reader = ChunkReader::new(&mut input, 1000);
        let mut chunk = Text::default();
        let mut seen = Vec::new();
        let mut buffers = std::collections::HashSet::new();
        while reader.next(&mut chunk).unwrap() {
            assert!(chunk.bytes().ends_with(b"\n"));
            seen.extend_from_slice(chunk.bytes());
            buffers.insert((chunk.buf.as_ptr() as usize, chunk.buf.len()));
        }
        assert_eq!(seen, text);
        assert_eq!(buffers.len(), 1, "the buffer was remade: {buffers:?}");
        // A chunk and its slack; reads reach at most a chunk past a carried part of a line
        // (under 50 bytes), and the bytes beyond were never written: still zero.
        assert_eq!(chunk.buf.len(), 1000 + 1000 / 16);
        assert!(chunk.buf[1000 + 50..].iter().all(|&b| b == 0));
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
