//! Codec state kept from one section to the next on one thread: a [`Compressor`] for the
//! writer and each of its workers, a [`Decompressor`] for the reader and each of its workers.
//!
//! Why: a zstd context sizes and clears tables of up to tens of megabytes for every frame, and
//! with glibc's mmap threshold pinned low, a fresh context per section is fresh mmap'd memory
//! that page-faults in and is unmapped again. A kept context clears what it must and reuses
//! the rest. It is kept only where the frames written are byte for byte those of a fresh
//! context and the memory held is what a fresh one would hold (see [`shared_context`]), and only
//! while sections keep coming (see [`Compressor::idle`]).
//!
//! Decompression writes into one buffer sized from what the section and the frame declare, not
//! into a vector grown by doubling, while still never holding more than the section's declared
//! length + 1 bytes, whatever a damaged or hostile file claims.

use std::io::{self, Read, Write};

use zstd::zstd_safe::{self, CCtx, CParameter, DCtx, InBuffer, OutBuffer, ResetDirective};

use super::codec::{
    Codec, DecompressError, CONTEXT_MIX_MAX_SECTION, RESERVE_AHEAD, ZSTD_MAX_WINDOW_LOG,
};
use super::context_mix;

/// zstd's size classes: it picks a level's parameters from one of four tables, for inputs of
/// at most 16 KiB, 128 KiB, 256 KiB, or more.
const SIZE_CLASSES: [usize; 3] = [16 << 10, 128 << 10, 256 << 10];

/// The context a section of `len` bytes at `level` may share with other sections: `Some(class)`
/// for sections that can be compressed with a kept context, which is then shared only by
/// sections of the same level and class; `None` for those that get a fresh context, as every
/// section did before contexts were kept. Two conditions:
///
/// - The frame must be byte for byte a fresh context's. Levels 4–12 may pick zstd's row match
///   finder (strategies greedy, lazy and lazy2 in zstd's level tables), which salts its hashes
///   differently each time a context is reused, so frames could differ (still valid, but the
///   file would change). Levels up to 3 use the fast and double-fast finders, whose output
///   does not depend on what the context compressed before.
/// - The kept context must hold no more memory than a fresh one would. zstd sizes its tables
///   and buffers from the level's parameters in the input's size class, shrunk to the input's
///   window, which at levels up to 3 shrinks nothing for inputs over 128 KiB (their window is
///   at least 256 KiB: every such table, and the 128 KiB block buffers, are full size). Within
///   one level and one of the two classes above 128 KiB, every section therefore gets the same
///   context a fresh one would; from level 13 on, the tables grow with the input up to
///   several megabytes.
///
/// Long sections at the default level of long traces (3) are the ones that matter: they are
/// where per-section setup cost page faults.
pub(crate) fn shared_context(level: i32, len: usize) -> Option<usize> {
    let class = SIZE_CLASSES.iter().filter(|&&top| len > top).count();
    (level <= 3 && len > SIZE_CLASSES[1]).then_some(class)
}

/// An `io::Error` for a zstd error code, with zstd's own message.
fn zstd_error(code: usize) -> io::Error {
    io::Error::other(zstd_safe::get_error_name(code))
}

/// Compresses sections, keeping a zstd context between them where that changes nothing but
/// the cost.
#[derive(Default)]
pub(crate) struct Compressor {
    /// The kept zstd context, with the level and size class (see [`shared_context`]) it was
    /// set up for.
    zstd: Option<(CCtx<'static>, i32, usize)>,
}

impl Compressor {
    /// A compressor holding nothing yet.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Frees the kept context, to be set up again by the next compression: called between
    /// blocks, when the thread would otherwise hold a context (about 1.5 MB at level 3) while
    /// the caller prepares the next block, which a fresh context per section never held.
    pub(crate) fn idle(&mut self) {
        self.zstd = None;
    }

    /// Compresses `bytes` with `codec` at `level` (gzip: clamped to 0..=9; zstd: passed
    /// through; context mixing: no level). The caller keeps sections over
    /// [`CONTEXT_MIX_MAX_SECTION`] away from [`Codec::ContextMix`].
    pub(crate) fn compress(
        &mut self,
        codec: Codec,
        level: i32,
        bytes: &[u8],
    ) -> io::Result<Vec<u8>> {
        match codec {
            Codec::None => Ok(bytes.to_vec()),
            Codec::Gzip => {
                let level = level.clamp(0, 9) as u32;
                let mut enc = flate2::write::GzEncoder::new(
                    Vec::with_capacity(bytes.len() / 2 + 64),
                    flate2::Compression::new(level),
                );
                enc.write_all(bytes)?;
                enc.finish()
            }
            Codec::Zstd => self.zstd(level, bytes),
            Codec::ContextMix => Ok(context_mix::v2::encode(
                bytes,
                context_mix::v2::CODEC_TABLE_BITS,
            )),
            Codec::LightContextMix => Ok(context_mix::light::encode(bytes)),
        }
    }

    /// One zstd frame of `bytes` at `level`, with the window capped at
    /// [`ZSTD_MAX_WINDOW_LOG`] when `bytes` is longer than that window.
    pub(crate) fn zstd(&mut self, level: i32, bytes: &[u8]) -> io::Result<Vec<u8>> {
        let shared = shared_context(level, bytes.len());
        // A context set up for another level or size class is dropped first: its tables would
        // be another size, and this thread never holds two contexts at once (a fresh context
        // per section never did).
        if self
            .zstd
            .as_ref()
            .is_some_and(|&(_, l, class)| Some(class) != shared || l != level)
        {
            self.zstd = None;
        }
        let mut fresh = None;
        let ctx = match shared {
            Some(class) => {
                if self.zstd.is_none() {
                    self.zstd = Some((new_cctx()?, level, class));
                }
                match self.zstd.as_mut() {
                    Some((ctx, _, _)) => ctx,
                    None => return Err(io::Error::other("no zstd compression context")),
                }
            }
            None => fresh.insert(new_cctx()?),
        };
        // Resetting the parameters too makes the context start from zstd's defaults, as a
        // fresh one does (the window cap of a previous long section must not carry over).
        ctx.reset(ResetDirective::SessionAndParameters)
            .map_err(zstd_error)?;
        ctx.set_parameter(CParameter::CompressionLevel(level))
            .map_err(zstd_error)?;
        if bytes.len() > 1usize << ZSTD_MAX_WINDOW_LOG {
            ctx.set_parameter(CParameter::WindowLog(ZSTD_MAX_WINDOW_LOG))
                .map_err(zstd_error)?;
        }
        // The frame is written straight into the vector returned. Its capacity (the frame's
        // bound, about the input's size) is mostly never touched, so costs no memory; a
        // buffer kept for all frames and copied out of would put every frame on the heap of
        // the worker thread's allocator arena, which keeps it after it is freed.
        let mut frame = Vec::with_capacity(zstd_safe::compress_bound(bytes.len()));
        if let Err(code) = ctx.compress2(&mut frame, bytes) {
            // A failed frame stays open; drop the context rather than trust its state.
            self.zstd = None;
            return Err(zstd_error(code));
        }
        Ok(frame)
    }
}

fn new_cctx() -> io::Result<CCtx<'static>> {
    CCtx::try_create().ok_or_else(|| io::Error::other("cannot create a zstd compression context"))
}

/// Decompresses sections, keeping a zstd context between them.
#[derive(Default)]
pub(crate) struct Decompressor {
    zstd: Option<DCtx<'static>>,
}

impl Decompressor {
    /// A decompressor holding nothing yet.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Decompresses `bytes` into exactly `expected_len` bytes. Never produces (or reserves)
    /// more than `expected_len + 1` bytes, whatever the compressed data claims.
    pub(crate) fn decompress(
        &mut self,
        codec: Codec,
        bytes: Vec<u8>,
        expected_len: u64,
    ) -> Result<Vec<u8>, DecompressError> {
        let limit = expected_len.saturating_add(1);
        let out = match codec {
            Codec::None => Ok(bytes),
            Codec::Gzip => gzip_bounded(&bytes, limit),
            Codec::Zstd => self.zstd_bounded(&bytes, limit),
            Codec::ContextMix | Codec::LightContextMix => {
                context_mix_bounded(codec, &bytes, expected_len)
            }
        };
        match out {
            Err(e) => Err(DecompressError::Invalid(e)),
            Ok(out) if out.len() as u64 > expected_len => Err(DecompressError::TooLong),
            Ok(out) if (out.len() as u64) < expected_len => {
                Err(DecompressError::TooShort(out.len() as u64))
            }
            Ok(out) => Ok(out),
        }
    }

    /// The first zstd frame of `bytes` (what follows it is ignored), or its first `limit`
    /// bytes when it holds more.
    fn zstd_bounded(&mut self, bytes: &[u8], limit: u64) -> io::Result<Vec<u8>> {
        if self.zstd.is_none() {
            let ctx = DCtx::try_create()
                .ok_or_else(|| io::Error::other("cannot create a zstd decompression context"))?;
            self.zstd = Some(ctx);
        }
        let Some(ctx) = self.zstd.as_mut() else {
            return Err(io::Error::other("no zstd decompression context"));
        };
        // Whatever the last frame left (an error mid-frame, say) is dropped.
        ctx.reset(ResetDirective::SessionOnly).map_err(zstd_error)?;
        // A frame that declares its size, and fits the buffer, is decoded straight into it in
        // one pass (no window buffer, no copies); one that lies is caught by zstd, which checks
        // the size it declared.
        let declared = zstd_safe::get_frame_content_size(bytes).ok().flatten();
        let mut out = Vec::with_capacity(first_reservation(declared, limit));
        let mut input = InBuffer::around(bytes);
        loop {
            if out.len() == out.capacity() {
                if out.len() as u64 >= limit {
                    // One byte more than declared: the caller reports the section too long.
                    return Ok(out);
                }
                out.reserve_exact(growth(out.len(), limit));
            }
            let (read_before, written_before) = (input.pos(), out.len());
            // An `OutBuffer` over a `Vec` writes into its spare capacity and sets its length to
            // the bytes written.
            let left = ctx
                .decompress_stream(
                    &mut OutBuffer::around_pos(&mut out, written_before),
                    &mut input,
                )
                .map_err(zstd_error)?;
            if left == 0 {
                // The end of the first frame, as a single-frame stream decoder stops there.
                return Ok(out);
            }
            if input.pos() == read_before && out.len() == written_before {
                // All input consumed, room to write, and nothing came out: the frame is cut.
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "incomplete frame",
                ));
            }
        }
    }
}

/// The buffer reserved before a section's bytes are produced: what the codec's own header
/// declares (when it does), never more than `limit` (the section's declared length + 1), and
/// never more than [`RESERVE_AHEAD`]: a large claim in a damaged file then costs address space
/// only as far as the data really goes.
fn first_reservation(declared: Option<u64>, limit: u64) -> usize {
    let want = declared.map_or(limit, |d| d.min(limit));
    want.min(RESERVE_AHEAD) as usize
}

/// How much to add to a full buffer of `len` bytes: double it (at least 64 KiB), never past
/// `limit`.
fn growth(len: usize, limit: u64) -> usize {
    let room = limit.saturating_sub(len as u64);
    (len as u64).max(1 << 16).min(room) as usize
}

/// The gzip member of `bytes`, or its first `limit` bytes when it holds more. The buffer is
/// reserved from the member's trailer (ISIZE: the length modulo 2^32), as bounded as zstd's.
fn gzip_bounded(bytes: &[u8], limit: u64) -> io::Result<Vec<u8>> {
    let declared = bytes
        .last_chunk::<4>()
        .map(|isize| u64::from(u32::from_le_bytes(*isize)));
    let mut out = Vec::with_capacity(first_reservation(declared, limit));
    flate2::read::GzDecoder::new(bytes)
        .take(limit)
        .read_to_end(&mut out)?;
    Ok(out)
}

/// A context-mixed section (codec 3 or 4), after checking that its claimed length is possible
/// and within the codec's limit (the coders have no end marker of their own).
fn context_mix_bounded(codec: Codec, bytes: &[u8], expected_len: u64) -> io::Result<Vec<u8>> {
    if expected_len > CONTEXT_MIX_MAX_SECTION {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "a context-mixed section of {expected_len} bytes is over the \
                 {CONTEXT_MIX_MAX_SECTION}-byte limit of codec {}",
                codec.code()
            ),
        ));
    }
    if !context_mix::v2::plausible_length(bytes.len(), expected_len) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "a context-mixed section of {} bytes cannot hold {expected_len} bytes",
                bytes.len()
            ),
        ));
    }
    let decoded = if codec == Codec::LightContextMix {
        context_mix::light::decode(bytes, expected_len)
    } else {
        context_mix::v2::decode(bytes, expected_len, context_mix::v2::CODEC_TABLE_BITS)
    };
    decoded.map_err(|message| io::Error::new(io::ErrorKind::InvalidData, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::zstd_compress;

    /// Compressible bytes that are not a plain repeat: runs of a few symbols, some varied.
    fn sample(len: usize, seed: u32) -> Vec<u8> {
        let mut x = seed.wrapping_mul(2_654_435_761).max(1);
        (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if x.is_multiple_of(5) {
                    (x >> 8) as u8
                } else {
                    (i / 7 % 11) as u8
                }
            })
            .collect()
    }

    /// A frame as a fresh context writes it: what every section got before contexts were kept.
    fn fresh_frame(level: i32, bytes: &[u8]) -> Vec<u8> {
        let mut c = zstd::bulk::Compressor::new(level).unwrap();
        if bytes.len() > 1usize << ZSTD_MAX_WINDOW_LOG {
            c.set_parameter(CParameter::WindowLog(ZSTD_MAX_WINDOW_LOG))
                .unwrap();
        }
        c.compress(bytes).unwrap()
    }

    #[test]
    fn a_kept_context_writes_the_frames_of_fresh_ones() {
        // Long sections (window capped) before short ones, levels changing and repeating;
        // short sections and levels over 3 take a fresh context each time.
        let jobs: [(i32, usize); 17] = [
            (3, 3 << 20),
            (3, 200_000),
            (3, 150_000),
            (3, 100_000),
            (3, 5),
            (3, 700_000),
            (1, 400_000),
            (1, 300_000),
            (-1, 300_000),
            (0, 20_000),
            (6, 200_000),
            (3, 2_500_000),
            (13, 150_000),
            (19, 2_300_000),
            (19, 60_000),
            (19, 1_000),
            (3, 90_000),
        ];
        let kept = jobs
            .iter()
            .filter(|(l, n)| shared_context(*l, *n).is_some());
        assert!(kept.count() >= 8);
        let mut kept = Compressor::new();
        for (k, &(level, len)) in jobs.iter().enumerate() {
            let data = sample(len, k as u32);
            let frame = kept.zstd(level, &data).unwrap();
            assert!(
                frame == fresh_frame(level, &data),
                "level {level}, {len} bytes"
            );
            assert_eq!(frame, zstd_compress(level, &data).unwrap());
        }
    }

    #[test]
    fn the_first_reservation_is_bounded_by_every_claim() {
        assert_eq!(first_reservation(Some(10), 1 << 30), 10);
        assert_eq!(first_reservation(Some(100), 51), 51);
        assert_eq!(first_reservation(None, 5), 5);
        assert_eq!(
            first_reservation(Some(1 << 40), (1 << 30) + 1),
            RESERVE_AHEAD as usize
        );
        assert_eq!(growth(0, 10), 10);
        assert_eq!(growth(1 << 20, 3 << 20), 1 << 20);
        assert_eq!(growth(1 << 20, (1 << 20) + 1), 1);
    }

    #[test]
    fn frames_with_and_without_a_declared_size_decode_within_the_limit() {
        let data = sample(300_000, 7);
        let sized = zstd_compress(3, &data).unwrap();
        let unsized_ = zstd::stream::encode_all(&data[..], 3).unwrap();
        assert_eq!(
            zstd_safe::get_frame_content_size(&sized).ok(),
            Some(Some(300_000))
        );
        assert_eq!(
            zstd_safe::get_frame_content_size(&unsized_).ok(),
            Some(None)
        );
        let mut d = Decompressor::new();
        for frame in [&sized, &unsized_] {
            let n = data.len() as u64;
            assert_eq!(d.decompress(Codec::Zstd, frame.clone(), n).unwrap(), data);
            assert!(matches!(
                d.decompress(Codec::Zstd, frame.clone(), n - 1),
                Err(DecompressError::TooLong)
            ));
            assert!(matches!(
                d.decompress(Codec::Zstd, frame.clone(), 1000),
                Err(DecompressError::TooLong)
            ));
            assert!(matches!(
                d.decompress(Codec::Zstd, frame.clone(), n + 1),
                Err(DecompressError::TooShort(300_000))
            ));
        }
    }

    #[test]
    fn only_the_first_frame_counts_and_damage_leaves_the_context_usable() {
        let a = sample(50_000, 1);
        let b = sample(20_000, 2);
        let fa = zstd_compress(3, &a).unwrap();
        let mut two = fa.clone();
        two.extend_from_slice(&zstd_compress(3, &b).unwrap());
        let mut d = Decompressor::new();
        // What follows the first frame is not read, as with a single-frame stream decoder.
        assert_eq!(d.decompress(Codec::Zstd, two, 50_000).unwrap(), a);
        let invalid = |r: Result<Vec<u8>, DecompressError>| match r {
            Err(DecompressError::Invalid(e)) => e.to_string(),
            other => panic!("not refused as invalid: {:?}", other.map(|v| v.len())),
        };
        let cut = fa[..fa.len() / 2].to_vec();
        assert_eq!(
            invalid(d.decompress(Codec::Zstd, cut, 50_000)),
            "incomplete frame"
        );
        assert_eq!(
            invalid(d.decompress(Codec::Zstd, Vec::new(), 0)),
            "incomplete frame"
        );
        invalid(d.decompress(Codec::Zstd, b"not a zstd frame".to_vec(), 16));
        // A frame whose header claims more than it holds: zstd checks the size it declared.
        let mut liar = fa.clone();
        let fhd = liar[4];
        assert_eq!(fhd >> 6, 1, "a two-byte content size field (value - 256)");
        let at = if fhd & 0x20 != 0 { 5 } else { 6 };
        liar[at..at + 2].copy_from_slice(&(60_000u16 - 256).to_le_bytes());
        assert_eq!(
            zstd_safe::get_frame_content_size(&liar).ok(),
            Some(Some(60_000))
        );
        invalid(d.decompress(Codec::Zstd, liar.clone(), 60_000));
        invalid(d.decompress(Codec::Zstd, liar, 50_000));
        // The same context still decodes good frames.
        assert_eq!(d.decompress(Codec::Zstd, fa, 50_000).unwrap(), a);
    }

    #[test]
    fn a_gzip_member_whose_trailer_lies_is_refused() {
        let data = sample(100_000, 3);
        let mut packed = Compressor::new().compress(Codec::Gzip, 6, &data).unwrap();
        let mut d = Decompressor::new();
        assert_eq!(
            d.decompress(Codec::Gzip, packed.clone(), 100_000).unwrap(),
            data
        );
        let n = packed.len();
        packed[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            d.decompress(Codec::Gzip, packed, 100_000),
            Err(DecompressError::Invalid(_))
        ));
    }
}
