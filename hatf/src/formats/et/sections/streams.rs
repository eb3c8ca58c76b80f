//! The per-field byte streams of one block, and how they are packed into one container section.
//!
//! Every stream is compressed on its own (zstd) because each holds values of one kind, which is
//! what makes split streams compress well; they are then packed into a single container section
//! so that a small trace does not pay a section descriptor per stream.

use std::io::Read;

use metatf::varint::{self, put_u64};

/// Names of the streams, in packing order; the index is the stream number.
pub const STREAM_NAMES: [&str; STREAM_COUNT] = [
    "control",
    "thread",
    "thread_new",
    "raw_id",
    "alloc_hits",
    "alloc_size",
    "alloc_type",
    "alloc_length",
    "u_holder",
    "u_value",
    "m_receiver",
    "e_miss",
    "w_object",
    "d_object",
    "d_time",
    "d_size",
    "x_method",
    "x_object",
    "text",
    "d_other",
];

/// Number of streams in every block.
pub const STREAM_COUNT: usize = 20;

/// Stream numbers (indices into [`STREAM_NAMES`]).
///
/// The line kind and the fields that follow the program's control flow (method ids, exit
/// codes, witness classes, field ids, allocation sites) share the `control` stream: they repeat
/// together with the loops of the traced program, so one stream holds one long repetition where
/// separate streams would each pay for it.
#[allow(missing_docs)]
pub mod id {
    pub const KIND: usize = 0;
    pub const M_METHOD: usize = KIND;
    pub const E_CODE: usize = KIND;
    pub const W_CLASS: usize = KIND;
    pub const U_FIELD: usize = KIND;
    pub const ALLOC_SITE: usize = KIND;
    pub const THREAD: usize = 1;
    pub const THREAD_NEW: usize = 2;
    pub const RAW_ID: usize = 3;
    pub const ALLOC_HITS: usize = 4;
    pub const ALLOC_SIZE: usize = 5;
    pub const ALLOC_TYPE: usize = 6;
    pub const ALLOC_LENGTH: usize = 7;
    pub const U_HOLDER: usize = 8;
    pub const U_VALUE: usize = 9;
    pub const M_RECEIVER: usize = 10;
    pub const E_MISS: usize = 11;
    pub const W_OBJECT: usize = 12;
    pub const D_OBJECT: usize = 13;
    pub const D_TIME: usize = 14;
    pub const D_SIZE: usize = 15;
    pub const X_METHOD: usize = 16;
    pub const X_OBJECT: usize = 17;
    pub const TEXT: usize = 18;
    pub const D_OTHER: usize = 19;
}

/// Largest decompressed stream accepted (guards against decompression bombs).
const MAX_STREAM_BYTES: u64 = 1 << 30;

/// The streams being written for one block.
#[derive(Default)]
pub struct StreamWriter {
    /// One byte vector per stream.
    pub streams: [Vec<u8>; STREAM_COUNT],
}

impl StreamWriter {
    /// Empty streams with room for a block of `lines` lines in the streams most lines write
    /// to (growing them by doubling copied each one several times).
    pub fn with_lines(lines: usize) -> StreamWriter {
        let mut w = StreamWriter::default();
        w.reserve_lines(lines);
        w
    }

    /// Makes room for `lines` more lines in the streams most lines write to.
    pub fn reserve_lines(&mut self, lines: usize) {
        self.streams[id::KIND].reserve(lines * 2);
        self.streams[id::THREAD].reserve(lines);
    }

    /// Empties the streams, keeping their memory for the next block.
    pub fn clear(&mut self) {
        for s in &mut self.streams {
            s.clear();
        }
    }

    /// Appends a varint to stream `s`.
    #[inline]
    pub fn varint(&mut self, s: usize, v: u64) {
        put_u64(&mut self.streams[s], v);
    }

    /// Appends one byte to stream `s`.
    #[inline]
    pub fn byte(&mut self, s: usize, b: u8) {
        self.streams[s].push(b);
    }

    /// Appends a 32-bit-or-wider id: 4 bytes big-endian, or the escape `ffffffff` and 8 bytes.
    pub fn raw_id(&mut self, v: u64) {
        let out = &mut self.streams[id::RAW_ID];
        if v < 0xffff_ffff {
            out.extend_from_slice(&(v as u32).to_be_bytes());
        } else {
            out.extend_from_slice(&[0xff; 4]);
            out.extend_from_slice(&v.to_be_bytes());
        }
    }

    /// Appends a length-prefixed byte string to stream `s`.
    pub fn text(&mut self, s: usize, bytes: &[u8]) {
        put_u64(&mut self.streams[s], bytes.len() as u64);
        self.streams[s].extend_from_slice(bytes);
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.streams.iter().all(|s| s.is_empty())
    }

    /// Sum of the compressed stream sizes, stream by stream (for measurements).
    pub fn packed_sizes(&self, level: i32) -> std::io::Result<Vec<(String, usize, usize)>> {
        let mut v = Vec::new();
        for (i, s) in self.streams.iter().enumerate() {
            let z = if s.is_empty() {
                0
            } else {
                metatf::container::zstd_compress(level, s)?
                    .len()
                    .min(s.len())
            };
            v.push((STREAM_NAMES[i].to_string(), s.len(), z));
        }
        Ok(v)
    }
}

/// Compresses and packs the streams of blocks, keeping a zstd context from stream to stream
/// where that cannot change the frames.
#[derive(Default)]
pub struct Packer {
    /// The context kept for levels up to [`KEEP_CONTEXT_MAX_LEVEL`], and its level.
    kept: Option<(zstd::bulk::Compressor<'static>, i32)>,
}

/// Highest level at which a zstd context is reused. zstd's fast and double-fast match finders
/// (levels up to 3) write the same frame from a reused context as from a fresh one; from
/// level 4 on its row match finder salts its hashes differently on each reuse, which would
/// make the file depend on which thread compressed which block.
const KEEP_CONTEXT_MAX_LEVEL: i32 = 3;

/// Longest stream compressed with the kept context: longer ones get the container's
/// compressor, which caps the window (metatf's `ZSTD_MAX_WINDOW_LOG`, 2 MiB).
const KEEP_CONTEXT_MAX_LEN: usize = 1 << 21;

/// Most raw stream bytes for which the joined layout is tried at the fast levels.
const JOIN_RAW_MAX: usize = 128 << 10;

impl Packer {
    /// One zstd frame of `bytes`, the same bytes as `metatf::container::zstd_compress`.
    fn zstd(&mut self, level: i32, bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        if level > KEEP_CONTEXT_MAX_LEVEL || bytes.len() > KEEP_CONTEXT_MAX_LEN {
            return metatf::container::zstd_compress(level, bytes);
        }
        if self.kept.as_ref().is_none_or(|(_, l)| *l != level) {
            self.kept = Some((zstd::bulk::Compressor::new(level)?, level));
        }
        let Some((ctx, _)) = self.kept.as_mut() else {
            return metatf::container::zstd_compress(level, bytes);
        };
        ctx.compress(bytes)
    }

    /// Compresses the streams and packs them, whichever of two layouts is smaller.
    ///
    /// Layout 0 (split): byte 0, a varint count of streams, then for each a varint
    /// `stored_len << 1 | compressed` and the stored bytes (a stream whose zstd frame would be
    /// larger than itself is stored as is). Layout 1 (joined, better for small blocks): byte 1,
    /// then one zstd frame holding a varint count, each stream's varint length, and the streams
    /// one after another.
    pub fn pack(&mut self, w: &StreamWriter, level: i32) -> std::io::Result<Vec<u8>> {
        let mut split = vec![0u8];
        put_u64(&mut split, STREAM_COUNT as u64);
        let mut joined = Vec::new();
        put_u64(&mut joined, STREAM_COUNT as u64);
        for s in &w.streams {
            put_u64(&mut joined, s.len() as u64);
            let z = if s.len() > 8 {
                Some(self.zstd(level, s)?)
            } else {
                None
            };
            match z {
                Some(z) if z.len() < s.len() => {
                    put_u64(&mut split, ((z.len() as u64) << 1) | 1);
                    split.extend_from_slice(&z);
                }
                _ => {
                    put_u64(&mut split, (s.len() as u64) << 1);
                    split.extend_from_slice(s);
                }
            }
        }
        // Joining only pays off where per-frame overhead matters: small blocks. At the fast
        // levels it is tried only on few raw bytes: on more, a second pass over all of them
        // costs more time than the few bytes it may save, and often saves none.
        let raw: usize = w.streams.iter().map(Vec::len).sum();
        if split.len() < 64 << 10 && (level > KEEP_CONTEXT_MAX_LEVEL || raw <= JOIN_RAW_MAX) {
            for s in &w.streams {
                joined.extend_from_slice(s);
            }
            let mut one = vec![1u8];
            one.extend(self.zstd(level, &joined)?);
            if one.len() < split.len() {
                return Ok(one);
            }
        }
        Ok(split)
    }
}

/// A problem while reading the packed streams; the caller adds the block and file.
///
/// The message is boxed so that the reader's `Option<StreamError>` is one word, and
/// [`StreamReader::failed`], asked once per batch of lines, a test of it against null.
#[derive(Debug)]
#[allow(clippy::box_collection)]
pub struct StreamError(Box<String>);

impl StreamError {
    /// An error saying `message`.
    #[cold]
    pub fn new(message: String) -> StreamError {
        StreamError(Box::new(message))
    }

    /// What went wrong.
    pub fn message(self) -> String {
        *self.0
    }
}

/// Largest declared stream size decompressed in one call into a buffer of that size; larger
/// claims (a damaged file could declare any) are decompressed piece by piece.
const ONE_CALL_MAX_BYTES: u64 = 64 << 20;

/// Decompresses one zstd frame into `out` (replacing what it held), refusing more than
/// [`MAX_STREAM_BYTES`]; `ctx` is the decompression context, made on first use and kept.
///
/// A frame that declares its size (the encoder's always do) is decompressed in one call into a
/// buffer of that size: the streaming decoder set up a window buffer of its own for every
/// stream, a fifth of a decode's page faults. `out` and `ctx` are kept from block to block by
/// the caller: fresh ones for each block page-faulted in again (the allocator returns buffers
/// this large to the system when they are freed).
fn inflate_into(
    stored: &[u8],
    out: &mut Vec<u8>,
    ctx: &mut Option<zstd::bulk::Decompressor<'static>>,
) -> Result<(), String> {
    out.clear();
    if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(stored) {
        if size > MAX_STREAM_BYTES {
            return Err("decompresses to more than 1 GiB".to_string());
        }
        if size <= ONE_CALL_MAX_BYTES {
            out.reserve(size as usize);
            let d = match ctx {
                Some(d) => d,
                None => ctx.insert(
                    zstd::bulk::Decompressor::new()
                        .map_err(|e| format!("does not decompress: {e}"))?,
                ),
            };
            d.decompress_to_buffer(stored, out)
                .map_err(|e| format!("does not decompress: {e}"))?;
            if out.len() as u64 != size {
                return Err(format!(
                    "decompresses to {} bytes, not the {size} its frame declares",
                    out.len()
                ));
            }
            return Ok(());
        }
    }
    let dec = zstd::stream::read::Decoder::new(stored).map_err(|e| e.to_string())?;
    dec.take(MAX_STREAM_BYTES + 1)
        .read_to_end(out)
        .map_err(|e| format!("does not decompress: {e}"))?;
    if out.len() as u64 > MAX_STREAM_BYTES {
        return Err("decompresses to more than 1 GiB".to_string());
    }
    Ok(())
}

/// Reads the packed streams of one block.
///
/// Reads never fail on the spot: a read past a stream's end gives 0 (an empty text) and the
/// reader remembers the first such shortfall, or the first problem the model reports with
/// [`StreamReader::fail`], for the caller to check once per batch of records
/// ([`StreamReader::failed`]). A `Result` per field read was a test and a branch on every one
/// of them, and on every value the model computes from them, on the decoder's hottest path;
/// the values read past the end are only ever garbage of a block
/// that fails, which the model takes like any damaged stream's values.
#[derive(Default)]
pub struct StreamReader {
    /// The streams (each buffer kept for the next block's stream).
    streams: [Vec<u8>; STREAM_COUNT],
    cursors: [usize; STREAM_COUNT],
    /// The joined layout's frame, decompressed whole.
    joined: Vec<u8>,
    ctx: Option<zstd::bulk::Decompressor<'static>>,
    /// The first read past a stream's end, or the first problem the model reported.
    failure: Option<StreamError>,
    /// Where the run of zero bytes at the `thread` stream's cursor ends (see
    /// [`StreamReader::zero_thread_code`]); at or before the cursor when not known.
    thread_zeros_end: usize,
}

impl StreamReader {
    /// Unpacks and decompresses the streams of one block (either layout of [`Packer::pack`]).
    pub fn unpack(packed: &[u8]) -> Result<StreamReader, StreamError> {
        let mut r = StreamReader::default();
        r.refill(packed)?;
        Ok(r)
    }

    /// [`StreamReader::unpack`] into this reader, reusing its buffers: the streams of another
    /// block replace those it held.
    pub fn refill(&mut self, packed: &[u8]) -> Result<(), StreamError> {
        self.cursors = [0; STREAM_COUNT];
        self.failure = None;
        self.thread_zeros_end = 0;
        for s in &mut self.streams {
            s.clear();
        }
        match packed.split_first() {
            Some((0, rest)) => self.unpack_split(rest),
            Some((1, rest)) => self.unpack_joined(rest),
            Some((l, _)) => Err(StreamError::new(format!("unknown stream layout {l}"))),
            None => Err(StreamError::new("no stream layout byte".to_string())),
        }
    }

    fn unpack_joined(&mut self, frame: &[u8]) -> Result<(), StreamError> {
        inflate_into(frame, &mut self.joined, &mut self.ctx)
            .map_err(|e| StreamError::new(format!("joined streams: {e}")))?;
        let all = &self.joined;
        let mut pos = 0usize;
        let bad = |what: &str| StreamError::new(format!("joined streams: {what}"));
        let count = varint::take(all, &mut pos).ok_or_else(|| bad("truncated stream count"))?;
        if count != STREAM_COUNT as u64 {
            return Err(bad(&format!(
                "{count} streams; this version reads {STREAM_COUNT}"
            )));
        }
        let mut lens = [0usize; STREAM_COUNT];
        for (name, len) in STREAM_NAMES.iter().zip(&mut lens) {
            let n = varint::take(all, &mut pos)
                .ok_or_else(|| bad(&format!("truncated length of `{name}`")))?;
            *len = usize::try_from(n).map_err(|_| bad("stream too long"))?;
        }
        for ((name, n), stream) in STREAM_NAMES.iter().zip(lens).zip(&mut self.streams) {
            let end = pos
                .checked_add(n)
                .filter(|&e| e <= all.len())
                .ok_or_else(|| bad(&format!("stream `{name}` runs past the end")))?;
            stream.extend_from_slice(&all[pos..end]);
            pos = end;
        }
        if pos != all.len() {
            return Err(bad("trailing bytes after the last stream"));
        }
        Ok(())
    }

    fn unpack_split(&mut self, packed: &[u8]) -> Result<(), StreamError> {
        let mut pos = 0usize;
        let bad = |what: &str, pos: usize| {
            StreamError::new(format!("{what} at byte {} of the packed streams", pos + 1))
        };
        let count =
            varint::take(packed, &mut pos).ok_or_else(|| bad("truncated stream count", pos))?;
        if count != STREAM_COUNT as u64 {
            return Err(StreamError::new(format!(
                "block has {count} streams; this version reads {STREAM_COUNT}"
            )));
        }
        for (name, stream) in STREAM_NAMES.iter().zip(&mut self.streams) {
            let at = pos;
            let head = varint::take(packed, &mut pos)
                .ok_or_else(|| bad(&format!("truncated length of stream `{name}`"), at))?;
            let len = usize::try_from(head >> 1).map_err(|_| bad("stream too long", at))?;
            let end = pos
                .checked_add(len)
                .filter(|&e| e <= packed.len())
                .ok_or_else(|| bad(&format!("stream `{name}` runs past the section end"), at))?;
            let stored = &packed[pos..end];
            pos = end;
            if head & 1 == 1 {
                inflate_into(stored, stream, &mut self.ctx)
                    .map_err(|e| bad(&format!("stream `{name}`: {e}"), at))?;
            } else {
                stream.extend_from_slice(stored);
            }
        }
        if pos != packed.len() {
            return Err(bad("trailing bytes after the last stream", pos));
        }
        Ok(())
    }

    /// Remembers `e` as the block's problem, unless an earlier one is known: what went wrong
    /// first is what the block's error names.
    #[cold]
    #[inline(never)]
    pub fn fail(&mut self, e: StreamError) {
        if self.failure.is_none() {
            self.failure = Some(e);
        }
    }

    /// True once a read ran past a stream's end or [`StreamReader::fail`] was called.
    #[inline(always)]
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }

    /// The first problem met since the streams were unpacked, if any (and forgets it).
    pub fn take_failure(&mut self) -> Option<StreamError> {
        self.failure.take()
    }

    /// Notes that stream `s` ended before a read.
    #[cold]
    #[inline(never)]
    fn exhausted(&mut self, s: usize) {
        let e = StreamError::new(format!(
            "stream `{}` ends early (byte {})",
            STREAM_NAMES[s], self.cursors[s]
        ));
        self.fail(e);
    }

    /// Next varint of stream `s` (0 past its end).
    #[inline(always)]
    pub fn varint(&mut self, s: usize) -> u64 {
        let pos = self.cursors[s];
        let stream = &self.streams[s];
        // Most values are one byte.
        if let Some(&b) = stream.get(pos) {
            if b < 0x80 {
                self.cursors[s] = pos + 1;
                return u64::from(b);
            }
            // Most others are two (method ids, field ids, sizes from 128 to 16383): read here,
            // not in a call (a method id on every `M` record).
            if let Some(&b1) = stream.get(pos + 1) {
                if b1 < 0x80 {
                    self.cursors[s] = pos + 2;
                    return u64::from(b & 0x7f) | (u64::from(b1) << 7);
                }
            }
        }
        self.long_varint(s)
    }

    /// [`StreamReader::varint`] of a value of more than two bytes (or a stream's end).
    #[inline(never)]
    fn long_varint(&mut self, s: usize) -> u64 {
        let mut pos = self.cursors[s];
        match varint::take(&self.streams[s], &mut pos) {
            Some(v) => {
                self.cursors[s] = pos;
                v
            }
            None => {
                self.exhausted(s);
                0
            }
        }
    }

    /// Reads the next value of the `thread` stream if it is 0 (the thread of the record
    /// before, as most are), and says whether it was.
    ///
    /// A zero byte is a whole varint, so the length of the run of them at the cursor is
    /// measured once (eight bytes at a time) and each record's code then costs a comparison
    /// with the run's end, instead of a varint read and a test of the value.
    #[inline(always)]
    pub fn zero_thread_code(&mut self) -> bool {
        let pos = self.cursors[id::THREAD];
        if pos < self.thread_zeros_end {
            self.cursors[id::THREAD] = pos + 1;
            return true;
        }
        self.measure_thread_zeros()
    }

    /// [`StreamReader::zero_thread_code`] past the run of zeros measured last: measures the
    /// next one.
    #[inline(never)]
    fn measure_thread_zeros(&mut self) -> bool {
        let pos = self.cursors[id::THREAD];
        let rest = self.streams[id::THREAD].get(pos..).unwrap_or_default();
        // Runs are measured up to this many bytes at a time, so that a long stream of zeros
        // is not walked ahead of the records (the walk stops there and goes on later).
        const MEASURE: usize = 4096;
        let rest = &rest[..rest.len().min(MEASURE)];
        let mut run = 0;
        let mut words = rest.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
            if w != 0 {
                run += (w.trailing_zeros() / 8) as usize;
                break;
            }
            run += 8;
        }
        if run == rest.len() - words.remainder().len() {
            run += words.remainder().iter().take_while(|&&b| b == 0).count();
        }
        if run == 0 {
            return false;
        }
        self.thread_zeros_end = pos + run;
        self.cursors[id::THREAD] = pos + 1;
        true
    }

    /// Next byte of stream `s` (0 past its end).
    #[inline(always)]
    pub fn byte(&mut self, s: usize) -> u8 {
        let pos = self.cursors[s];
        match self.streams[s].get(pos) {
            Some(&b) => {
                self.cursors[s] = pos + 1;
                b
            }
            None => {
                self.exhausted(s);
                0
            }
        }
    }

    /// The next `n` bytes of stream `s` (none past its end).
    fn bytes(&mut self, s: usize, n: usize) -> &[u8] {
        let start = self.cursors[s];
        match start.checked_add(n).filter(|&e| e <= self.streams[s].len()) {
            Some(end) => {
                self.cursors[s] = end;
                &self.streams[s][start..end]
            }
            None => {
                self.exhausted(s);
                &[]
            }
        }
    }

    /// Next id of the raw-id stream (see [`StreamWriter::raw_id`]; 0 past its end).
    pub fn raw_id(&mut self) -> u64 {
        let Some(&b) = self.bytes(id::RAW_ID, 4).first_chunk::<4>() else {
            return 0;
        };
        let v = u32::from_be_bytes(b);
        if v != 0xffff_ffff {
            return u64::from(v);
        }
        match self.bytes(id::RAW_ID, 8).first_chunk::<8>() {
            Some(&b) => u64::from_be_bytes(b),
            None => 0,
        }
    }

    /// Next length-prefixed byte string of stream `s` (empty past its end).
    pub fn text(&mut self, s: usize) -> &[u8] {
        let n = self.varint(s);
        match usize::try_from(n) {
            Ok(n) => self.bytes(s, n),
            Err(_) => {
                self.exhausted(s);
                &[]
            }
        }
    }

    /// Names of streams with bytes left over (a corrupt or mismatched block).
    pub fn leftovers(&self) -> Vec<&'static str> {
        (0..STREAM_COUNT)
            .filter(|&s| self.cursors[s] != self.streams[s].len())
            .map(|s| STREAM_NAMES[s])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thread codes read through [`StreamReader::zero_thread_code`] (and [`StreamReader::varint`]
    /// when it says no) are the codes written, across runs of zeros of every length (also
    /// past the measuring limit and at the stream's end), with other streams read between.
    #[test]
    fn zero_thread_codes_read_back() {
        let mut codes = Vec::new();
        let mut x = 17u64;
        for run in [
            0usize, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 4095, 4096, 4097, 10_000,
        ] {
            codes.extend(std::iter::repeat_n(0u64, run));
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            codes.push(1 + (x >> 33) % 300);
        }
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            codes.push(if x >> 61 == 0 { 1 + (x >> 20) % 200 } else { 0 });
        }
        codes.extend([0, 0, 0]);
        let mut w = StreamWriter::default();
        for (k, &c) in codes.iter().enumerate() {
            w.varint(id::THREAD, c);
            w.varint(id::D_TIME, k as u64);
        }
        let packed = Packer::default().pack(&w, 3).expect("packs");
        let mut r = StreamReader::unpack(&packed).expect("unpacks");
        for (k, &c) in codes.iter().enumerate() {
            let got = if r.zero_thread_code() {
                0
            } else {
                r.varint(id::THREAD)
            };
            assert_eq!(got, c, "code {k}");
            assert_eq!(r.varint(id::D_TIME), k as u64);
        }
        assert!(r.leftovers().is_empty() && !r.failed());
        assert!(!r.zero_thread_code());
        assert!(!r.failed(), "a code looked for, not read");
    }

    /// Varints of every length read back as written (the one- and two-byte fast paths and the
    /// general one), and a stream that ends inside a varint is a failure, not a value.
    #[test]
    fn varints_of_every_length_read_back() {
        let mut values = vec![0u64, 1, 127, 128, 255, 16_383, 16_384, u64::MAX];
        for bits in 0..64 {
            values.extend([1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) + 1]);
        }
        let mut w = StreamWriter::default();
        for &v in &values {
            w.varint(id::E_MISS, v);
            w.byte(id::KIND, 7);
        }
        // A last varint cut after its first byte.
        w.byte(id::X_METHOD, 0x85);
        let packed = Packer::default().pack(&w, 3).expect("packs");
        let mut r = StreamReader::unpack(&packed).expect("unpacks");
        for &v in &values {
            assert_eq!(r.varint(id::E_MISS), v);
            assert_eq!(r.byte(id::KIND), 7);
        }
        assert!(!r.failed());
        assert_eq!(r.varint(id::E_MISS), 0);
        let e = r.take_failure().expect("read past the end").message();
        assert!(e.contains("`e_miss` ends early"), "{e}");
        // The first shortfall is the one remembered.
        assert_eq!(r.varint(id::X_METHOD), 0);
        assert_eq!(r.byte(id::E_MISS), 0);
        let e = r.take_failure().expect("read past the end").message();
        assert!(e.contains("`x_method` ends early (byte 0)"), "{e}");
    }
}
