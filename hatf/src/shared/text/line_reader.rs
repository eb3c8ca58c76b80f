//! The one line reader of the text formats: a text cut into lines with their terminators as
//! they are (`\n`, `\r\n`, or none on the last line), read in bounded chunks, with line
//! numbers for errors and one limit on a line's length.
//!
//! [`LineReader`] is the core: it reads straight into a chunk's buffer and cuts the chunk at
//! its last line end; [`LineEnds`] finds the line ends within it. On top of it,
//! [`for_each_raw_line`] and [`for_each_line`] hand out lines one at a time, and
//! [`super::line_chunks::for_each_chunk`] hands whole chunks to parsing threads. What a format
//! adds (parsing, its own error texts) is the caller's closure.
//!
//! Two readers stay apart for what they must do otherwise: Elephant Tracks' blocks are cut by
//! line count (`formats/et/text/block_text.rs`, on this module's reads and limit), and the line
//! patterns of any DTD (`metatf::lines`, below this crate) read a text nobody has seen, where a
//! line over any limit is still kept, in pieces, instead of refused.

use std::io::{ErrorKind, Read};

use crate::format::FormatError;

/// Bytes per chunk of [`for_each_raw_line`]: it visits lines one at a time, so only the
/// number of reads depends on it.
const CHUNK: usize = 1 << 20;

/// Longest line a text trace may have, without its `\n`: 1 MiB. The lines of every text
/// format hatf reads are at most a few hundred bytes, so a longer one is refused at its line
/// number (in strict mode and with `--keep-bad-lines` alike) as soon as this many bytes of it
/// were read: a reader holds at most about twice this much of one line, whatever its length.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What a reader whose errors are `io::Error`s returns for a line longer than
/// [`MAX_LINE_BYTES`] (recognised by [`is_line_too_long`]).
#[derive(Debug)]
struct LineTooLong;

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the line is longer than {MAX_LINE_BYTES} bytes")
    }
}

impl std::error::Error for LineTooLong {}

/// The `io::Error` for a line longer than [`MAX_LINE_BYTES`].
pub fn line_too_long_io() -> std::io::Error {
    std::io::Error::new(ErrorKind::InvalidData, LineTooLong)
}

/// True when `e` is [`line_too_long_io`]'s error.
pub fn is_line_too_long(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<LineTooLong>())
}

/// The error for line `line_no` of `name`, longer than [`MAX_LINE_BYTES`].
pub fn line_too_long(name: &str, line_no: u64) -> FormatError {
    FormatError {
        file: name.to_string(),
        position: format!("{line_no}:1"),
        message: format!(
            "the line is longer than {MAX_LINE_BYTES} bytes, the most a line of a text trace \
             may be (not a text trace of this format?)"
        ),
    }
}

/// A chunk's text: the first `len` bytes of `buf`.
#[derive(Default)]
pub(crate) struct ChunkText {
    buf: Vec<u8>,
    len: usize,
}

impl ChunkText {
    /// The chunk: whole lines.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// How much smaller than the full chunk size the first chunk is (see [`LineReader::chunk`]).
const FIRST_CHUNK_DIVISOR: usize = 16;

/// Cuts the input into chunks of whole lines, each read straight into the chunk's buffer.
pub(crate) struct LineReader<'a, R: Read + ?Sized> {
    input: &'a mut R,
    /// Bytes read after the last line end handed out (the start of a line).
    carry: Vec<u8>,
    /// Bytes of the next chunk: the first is 1/[`FIRST_CHUNK_DIVISOR`] of `full`, and each
    /// next one twice the one before, up to `full`. Why: nothing downstream starts before the
    /// first chunk is parsed (the model's thread, then the encoder's address thread, wait for
    /// it), so a small first chunk starts them sooner, while the chunks after it, parsed
    /// while the first is modelled, soon reach the full size that keeps hand-overs rare.
    /// Which lines share a chunk never reaches the output.
    chunk: usize,
    /// The chunk size asked for.
    full: usize,
    done: bool,
}

impl<'a, R: Read + ?Sized> LineReader<'a, R> {
    /// Reads `input` in chunks of about `chunk` bytes (the first ones smaller).
    pub(crate) fn new(input: &'a mut R, chunk: usize) -> Self {
        LineReader {
            input,
            carry: Vec::new(),
            chunk: (chunk / FIRST_CHUNK_DIVISOR).max(1),
            full: chunk.max(1),
            done: false,
        }
    }

    /// Fills `text` with the next chunk: whole lines, at least one, ending at a `\n` except at
    /// the end of the input. False at the end of the input.
    pub(crate) fn next(&mut self, text: &mut ChunkText) -> std::io::Result<bool> {
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
                let n = match read_some(self.input, &mut text.buf[text.len..target]) {
                    Ok(n) => n,
                    Err(e) => {
                        // Keep what was read for the line count of the error.
                        self.carry.extend_from_slice(text.bytes());
                        return Err(e);
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
    pub(crate) fn pending_lines(&self) -> u64 {
        memchr::memchr_iter(b'\n', &self.carry).count() as u64
    }
}

/// `len` zero bytes from the allocator's zeroed memory (no fill pass when it comes fresh from
/// the kernel).
fn zeroed_bytes(len: usize) -> Vec<u8> {
    vec![0u8; len]
}

/// The error for a failed read after `lines` whole lines: at the line being read.
pub(crate) fn read_error(name: &str, lines: u64, e: std::io::Error) -> FormatError {
    if is_line_too_long(&e) {
        return line_too_long(name, lines + 1);
    }
    FormatError {
        file: name.to_string(),
        position: format!("{}:1", lines + 1),
        message: format!("cannot read the input: {e}"),
    }
}

/// Calls `visit` with each line of `text` (whole lines, as [`LineReader`] cuts them): its 0-based index
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
/// a few instructions per line, where a `memchr` call per line would pay its set-up for a
/// search that ends within tens of bytes.
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

/// Calls `visit` with each line of `input` exactly as read: its 1-based number and its bytes,
/// including the final `\n` when there is one (only the last line can lack it), so a `\r\n`
/// and a missing final newline come back as they were. Stops at the first error `visit`
/// returns; a failed read is reported at the line it was reading. Returns the number of lines.
///
/// Lines are handed out as slices of the [`LineReader`]'s chunk (no copy or allocation per
/// line).
pub fn for_each_raw_line(
    input: &mut dyn Read,
    name: &str,
    visit: impl FnMut(u64, &[u8]) -> Result<(), FormatError>,
) -> Result<u64, FormatError> {
    for_each_raw_line_in(input, name, CHUNK, visit)
}

/// [`for_each_raw_line`] with chunks of `chunk` bytes (tests cut often).
fn for_each_raw_line_in(
    input: &mut dyn Read,
    name: &str,
    chunk: usize,
    mut visit: impl FnMut(u64, &[u8]) -> Result<(), FormatError>,
) -> Result<u64, FormatError> {
    let mut reader = LineReader::new(input, chunk);
    let mut text = ChunkText::default();
    let mut line_no = 0u64;
    loop {
        match reader.next(&mut text) {
            Ok(true) => {}
            Ok(false) => return Ok(line_no),
            Err(e) => return Err(read_error(name, line_no + reader.pending_lines(), e)),
        }
        let bytes = text.bytes();
        let mut start = 0usize;
        for end in LineEnds::new(bytes) {
            line_no += 1;
            visit(line_no, &bytes[start..=end])?;
            start = end + 1;
        }
        if start < bytes.len() {
            line_no += 1;
            visit(line_no, &bytes[start..])?;
        }
    }
}

/// Calls `visit` with each line of `input`: its 1-based number and its bytes without the final
/// `\n` (or `\r\n`; a last line without `\n` loses a final `\r`). Stops at the first error
/// `visit` returns.
pub fn for_each_line(
    input: &mut dyn Read,
    name: &str,
    mut visit: impl FnMut(u64, &[u8]) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    for_each_raw_line(input, name, |line_no, raw| {
        let text = raw.strip_suffix(b"\n").unwrap_or(raw);
        visit(line_no, text.strip_suffix(b"\r").unwrap_or(text))
    })
    .map(|_| ())
}

/// Reads once into `buf`, again when a signal interrupted the read: what every reader of a
/// text here does before it looks for line ends.
pub(crate) fn read_some<R: Read + ?Sized>(input: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match input.read(buf) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Finds a line longer than [`MAX_LINE_BYTES`] in a text that arrives in pieces, as soon as
/// that many bytes of it are in: for readers that hold the text their own way (a block cut by
/// line count, an archive member streamed through a deflater) but keep the same limit.
#[derive(Debug, Default)]
pub(crate) struct LongLines {
    /// Offset in the text where the line being read starts (the text starts a line).
    line_start: usize,
}

impl LongLines {
    /// Takes `piece`, the text's bytes from offset `at` on (right after the previous piece),
    /// and returns its number of line ends (one pass finds both). `Err` holds the offset where
    /// a line over the limit starts.
    pub(crate) fn take(&mut self, at: usize, piece: &[u8]) -> Result<usize, usize> {
        let mut ends = 0;
        for p in memchr::memchr_iter(b'\n', piece) {
            if at + p - self.line_start > MAX_LINE_BYTES {
                return Err(self.line_start);
            }
            self.line_start = at + p + 1;
            ends += 1;
        }
        if at + piece.len() - self.line_start > MAX_LINE_BYTES {
            return Err(self.line_start);
        }
        Ok(ends)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, as pipes do.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn lines_of(input: &[u8], step: usize) -> Vec<(u64, Vec<u8>)> {
        let mut got = Vec::new();
        let n = for_each_raw_line(&mut Trickle(input, step), "t", |no, l| {
            got.push((no, l.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(n as usize, got.len());
        got
    }

    #[test]
    fn lines_split_across_reads_come_out_whole() {
        let mut text = b"a\n\nbc\r\n".to_vec();
        // A line as long as allowed: it spans several reads and a grown buffer.
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES));
        text.extend_from_slice(b"\nlast");
        for step in [1, 3, CHUNK, usize::MAX] {
            let got = lines_of(&text, step);
            assert_eq!(got.len(), 5, "step {step}");
            assert_eq!(got[0], (1, b"a\n".to_vec()));
            assert_eq!(got[1], (2, b"\n".to_vec()));
            assert_eq!(got[2], (3, b"bc\r\n".to_vec()));
            assert_eq!(got[3].1.len(), MAX_LINE_BYTES + 1);
            assert_eq!(got[4], (5, b"last".to_vec()));
        }
        assert!(lines_of(b"", 7).is_empty());
    }

    #[test]
    fn a_line_over_the_limit_is_refused_at_its_number() {
        let mut text = b"a\nb\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 1));
        text.extend_from_slice(b"\nnot reached\n");
        for step in [7, CHUNK, usize::MAX] {
            let mut seen = 0;
            let e = for_each_raw_line(&mut Trickle(&text, step), "t", |_, _| {
                seen += 1;
                Ok(())
            })
            .unwrap_err();
            assert_eq!((e.position.as_str(), seen), ("3:1", 2), "step {step}");
            assert!(e.message.contains("longer than"), "{}", e.message);
        }
        // A line of exactly the limit is read.
        let mut text = vec![b'x'; MAX_LINE_BYTES];
        text.push(b'\n');
        assert_eq!(lines_of(&text, CHUNK).len(), 1);
        assert!(is_line_too_long(&line_too_long_io()));
        assert!(!is_line_too_long(&std::io::Error::other("other")));
    }

    /// Calls `each` with every chunk a [`LineReader`] of `chunk` bytes cuts `text` into, all
    /// read into one [`ChunkText`]; returns it.
    fn read_chunks(text: &[u8], chunk: usize, mut each: impl FnMut(&ChunkText)) -> ChunkText {
        let mut input = text;
        let mut reader = LineReader::new(&mut input, chunk);
        let mut got = ChunkText::default();
        while reader.next(&mut got).unwrap() {
            each(&got);
        }
        got
    }

    /// `n` lines, each a number of `width` digits and a `\n`.
    fn numbered_lines(n: usize, width: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("{i:0width$}\n").into_bytes())
            .collect()
    }

    #[test]
    fn the_first_chunks_are_small_and_grow_to_the_chunk_size() {
        // 20-byte lines, chunks of 3,200 bytes: the first chunk is about a sixteenth of that,
        // each next one about twice the one before, until the full size.
        let text = numbered_lines(2000, 19);
        let mut sizes = Vec::new();
        read_chunks(&text, 3200, |chunk| sizes.push(chunk.len));
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
    fn a_chunk_buffer_is_made_once_and_kept_while_carried_lines_fit_its_slack() {
        // Lines of 50 bytes never line up with chunks of 1000: every chunk carries part of a
        // line into the next, which must fit the buffer's slack instead of growing it.
        let text = numbered_lines(400, 49);
        let mut seen = Vec::new();
        let mut buffers = std::collections::HashSet::new();
        let chunk = read_chunks(&text, 1000, |chunk| {
            assert!(chunk.bytes().ends_with(b"\n"));
            seen.extend_from_slice(chunk.bytes());
            buffers.insert((chunk.buf.as_ptr() as usize, chunk.buf.len()));
        });
        assert_eq!(seen, text);
        assert_eq!(buffers.len(), 1, "the buffer was remade: {buffers:?}");
        // A chunk and its slack; reads reach at most a chunk past a carried part of a line
        // (under 50 bytes), and the bytes beyond were never written: still zero.
        assert_eq!(chunk.buf.len(), 1000 + 1000 / 16);
        assert!(chunk.buf[1000 + 50..].iter().all(|&b| b == 0));
    }

    /// Every line, raw and as [`for_each_line`] gives it, through chunks of `chunk` bytes
    /// read `step` bytes at a time.
    fn both_ways(input: &[u8], step: usize, chunk: usize) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let mut raw = Vec::new();
        for_each_raw_line_in(&mut Trickle(input, step), "t", chunk, |no, l| {
            assert_eq!(no as usize, raw.len() + 1);
            raw.push(l.to_vec());
            Ok(())
        })
        .unwrap();
        let mut stripped = Vec::new();
        for_each_line(&mut Trickle(input, step), "t", |_, l| {
            stripped.push(l.to_vec());
            Ok(())
        })
        .unwrap();
        (raw, stripped)
    }

    #[test]
    fn terminators_are_kept_wherever_a_chunk_or_a_read_ends() {
        // Every cut falls somewhere in here, between a `\r` and its `\n` too.
        let text = b"a\r\nbb\n\r\n\ncc\r\r\nd\re\n\r\nlast\r";
        let raw: Vec<&[u8]> = vec![
            b"a\r\n",
            b"bb\n",
            b"\r\n",
            b"\n",
            b"cc\r\r\n",
            b"d\re\n",
            b"\r\n",
            b"last\r",
        ];
        // Stripped, a line loses its `\n` and one `\r` before it, or at the end of the input.
        let stripped: Vec<&[u8]> = vec![b"a", b"bb", b"", b"", b"cc\r", b"d\re", b"", b"last"];
        for step in 1..=text.len() {
            for chunk in [1, 2, 3, 5, 16, 64, CHUNK] {
                let (got_raw, got) = both_ways(text, step, chunk);
                assert_eq!(got_raw, raw, "step {step} chunk {chunk}");
                assert_eq!(got, stripped, "step {step} chunk {chunk}");
            }
        }
        // No final newline, and a text of one line without one.
        assert_eq!(
            both_ways(b"x\ny", 1, 2).0,
            vec![b"x\n".to_vec(), b"y".to_vec()]
        );
        assert_eq!(both_ways(b"only", 3, 2).1, vec![b"only".to_vec()]);
        assert!(both_ways(b"", 1, 4).0.is_empty());
    }

    #[test]
    fn long_lines_are_found_across_pieces() {
        let mut text = b"ab\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES));
        text.extend_from_slice(b"\nshort\n");
        // A line of exactly the limit passes, whatever the pieces.
        for piece in [1000, 4096, text.len()] {
            let mut long = LongLines::default();
            let mut ends = 0;
            for (k, p) in text.chunks(piece).enumerate() {
                ends += long.take(k * piece, p).expect("within the limit");
            }
            assert_eq!(ends, 3, "piece {piece}");
        }
        // One byte more is refused, naming where the line starts, even before its end is in.
        text.insert(3, b'y');
        for piece in [1000, 4096, text.len()] {
            let mut long = LongLines::default();
            let first_err = text
                .chunks(piece)
                .enumerate()
                .find_map(|(k, p)| long.take(k * piece, p).err());
            assert_eq!(first_err, Some(3), "piece {piece}");
        }
    }
}
