//! A long model stream through the context mixer in parts that code and decode on separate
//! threads (section [`super::MODEL_CM2_PARTS`], docs/FORMAT.md §6.1,
//! `malloc-bench`).
//!
//! Why: the mixer is slow in either direction and one stream is one sequence of predictions,
//! so a malloc-bench trace with a long stream would keep one core busy for seconds while the
//! other waits. Two halves, each coded from fresh tables, take half the time on two cores and
//! cost little on a long stream, whose tables learn again quickly; a short stream is kept
//! whole, as relearning costs it a larger share for little time saved. The part count is
//! fixed by the stream's length, never by the machine, so every machine writes the same
//! bytes.
//!
//! Section bytes: varint `P` (1 to [`MAX_PARTS`]), then for each part a varint `L` and `L`
//! bytes: what [`context_mix::v2::compress_with_tables`] writes for that part with
//! [`context_mix::v2::BOUNDED_STREAM_TABLE_BITS`] (its length, then its code). The model stream
//! is the parts' bytes one after another.

use crate::shared::coding::context_mix;
use metatf::varint::{put_u64, Cursor};

/// Streams of at least this many bytes are coded in [`PARTS`] parts; shorter ones whole.
pub const PARTS_FROM: usize = 256 << 10;
/// Parts of a long stream: as many as the two cores the speed targets are set on.
pub const PARTS: usize = 2;
/// Most parts a reader accepts (bounds the work a damaged count can ask for).
pub const MAX_PARTS: u64 = 64;

/// The table cap of every part (the bounded layout's, see the module doc).
const TABLE_BITS: u32 = context_mix::v2::BOUNDED_STREAM_TABLE_BITS;

/// How many parts a stream of `len` bytes is coded in.
pub fn parts_for(len: usize) -> usize {
    if len >= PARTS_FROM {
        PARTS
    } else {
        1
    }
}

/// Codes `stream` in `parts` parts of equal length (the last shorter), each on its own thread
/// while `threads` allow; the bytes do not depend on `threads`.
pub fn compress(stream: &[u8], parts: usize, threads: usize) -> Vec<u8> {
    let part_len = stream.len().div_ceil(parts.max(1)).max(1);
    let mut pieces: Vec<&[u8]> = stream.chunks(part_len).collect();
    if pieces.is_empty() {
        // An empty stream is one empty part (a reader refuses a count of 0).
        pieces.push(stream);
    }
    let coded = on_threads(&pieces, threads, |part| {
        context_mix::v2::compress_with_tables(part, TABLE_BITS)
    });
    let mut out = Vec::with_capacity(coded.iter().map(|c| c.len() + 5).sum::<usize>() + 2);
    put_u64(&mut out, coded.len() as u64);
    for c in &coded {
        put_u64(&mut out, c.len() as u64);
        out.extend_from_slice(c);
    }
    out
}

/// The model stream of a section [`compress`] wrote, its parts decoded on up to `threads`
/// threads. Damaged bytes give an error naming the part, never a panic; each part's claimed
/// length is checked by the mixer against its code before any work.
pub fn decompress(section: &[u8], threads: usize) -> Result<Vec<u8>, String> {
    let mut c = Cursor::new(section, "context-mixed parts");
    let count = c.u64()?;
    if count == 0 || count > MAX_PARTS {
        return Err(format!(
            "context-mixed parts: {count} parts (a file has 1 to {MAX_PARTS})"
        ));
    }
    let mut pieces = Vec::with_capacity(count as usize);
    for k in 0..count {
        let len = c.u64()?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= c.remaining())
            .ok_or_else(|| {
                format!(
                    "context-mixed part {k} of {count} claims {len} bytes; {} are left",
                    c.remaining()
                )
            })?;
        pieces.push(c.take(len)?);
    }
    if c.remaining() != 0 {
        return Err(format!(
            "context-mixed parts: {} bytes after the last part",
            c.remaining()
        ));
    }
    // The parts together may claim no more than one stream may (each part's claim is checked
    // against its code by the mixer).
    let mut claimed = 0u64;
    for part in &pieces {
        claimed = claimed.saturating_add(Cursor::new(part, "context-mixed part").u64()?);
    }
    if claimed > context_mix::v2::MAX_LEN {
        return Err(format!(
            "context-mixed parts claim {claimed} bytes in all (at most {})",
            context_mix::v2::MAX_LEN
        ));
    }
    let decoded = on_threads(&pieces, threads, |part| {
        context_mix::v2::decompress_with_tables(part, TABLE_BITS)
    });
    let mut stream =
        Vec::with_capacity(decoded.iter().map(|d| d.as_ref().map_or(0, Vec::len)).sum());
    for (k, part) in decoded.into_iter().enumerate() {
        let part = part.map_err(|m| format!("context-mixed part {k} of {count}: {m}"))?;
        stream.extend_from_slice(&part);
    }
    Ok(stream)
}

/// `work` over every item, in order of the result, the items dealt round-robin to up to
/// `threads` threads (the caller's among them). A panic in `work` is re-raised.
fn on_threads<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(&work).collect();
    }
    let work = &work;
    std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads)
            .map(|t| {
                s.spawn(move || {
                    (t..items.len())
                        .step_by(threads)
                        .map(|i| (i, work(&items[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut results: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
        for i in (0..items.len()).step_by(threads) {
            results[i] = Some(work(&items[i]));
        }
        for h in helpers {
            let done = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            for (i, r) in done {
                results[i] = Some(r);
            }
        }
        results
            .into_iter()
            .map(|r| r.expect("every part is worked on by one thread"))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream with some structure (a mixer codes it smaller than its length).
    fn stream(len: usize) -> Vec<u8> {
        let mut x = 7u64;
        (0..len)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                if i % 5 == 0 {
                    (x >> 59) as u8
                } else {
                    (i % 7) as u8
                }
            })
            .collect()
    }

    #[test]
    fn the_bytes_do_not_depend_on_the_threads() {
        let s = stream(40_000);
        for parts in [1, 2, 3, 5] {
            let one = compress(&s, parts, 1);
            for threads in [2, 3, 8] {
                assert_eq!(compress(&s, parts, threads), one, "{parts} parts");
            }
            for threads in [1, 2, 4] {
                assert_eq!(decompress(&one, threads).unwrap(), s, "{parts} parts");
            }
        }
    }

    #[test]
    fn short_and_empty_streams_round_trip() {
        for len in [0, 1, 2, 3] {
            let s = stream(len);
            let packed = compress(&s, 2, 2);
            assert_eq!(decompress(&packed, 2).unwrap(), s, "{len} bytes");
        }
    }

    #[test]
    fn the_part_count_follows_the_length_alone() {
        assert_eq!(parts_for(0), 1);
        assert_eq!(parts_for(PARTS_FROM - 1), 1);
        assert_eq!(parts_for(PARTS_FROM), PARTS);
        assert_eq!(parts_for(usize::MAX), PARTS);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any bytes, and any change to a valid section, give bytes (the container's CRC
        /// stands between a damaged file and this code) or an error that names the parts:
        /// never a panic.
        #[test]
        fn any_bytes_decode_or_fail_without_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            at in 0usize..4096,
            flip in 1u8..=255,
        ) {
            let mut damaged = compress(&stream(3_000), 2, 1);
            let at = at % damaged.len();
            damaged[at] ^= flip;
            for input in [&bytes[..], &damaged[..]] {
                if let Err(m) = decompress(input, 2) {
                    proptest::prop_assert!(m.contains("context-mixed"), "{}", m);
                }
            }
        }
    }

    #[test]
    fn damaged_sections_are_errors() {
        let s = stream(20_000);
        let good = compress(&s, 2, 1);
        let err = |bytes: &[u8]| decompress(bytes, 2).unwrap_err();
        assert!(err(&[]).contains("context-mixed parts"));
        assert!(err(&[0]).contains("0 parts"));
        assert!(err(&[65]).contains("65 parts"));
        // A part longer than what is left.
        assert!(err(&[1, 16, 0, 0, 0]).contains("claims 16 bytes; 3 are left"));
        // Bytes after the last part.
        let mut extra = good.clone();
        extra.push(0);
        assert!(err(&extra).contains("after the last part"));
        // Cut short: a part's bytes end early.
        assert!(decompress(&good[..good.len() - 1], 2).is_err());
        // A part whose own length claims more than its code can hold.
        let mut part = Vec::new();
        put_u64(&mut part, 1);
        let mut claim = Vec::new();
        put_u64(&mut claim, u64::MAX);
        put_u64(&mut part, claim.len() as u64);
        part.extend_from_slice(&claim);
        assert!(err(&part).contains("claim"), "{}", err(&part));
        // Parts whose claims are each plausible but too many bytes together.
        let mut many = Vec::new();
        put_u64(&mut many, 2);
        for _ in 0..2 {
            let mut claim = Vec::new();
            put_u64(&mut claim, context_mix::v2::MAX_LEN / 2 + 1);
            claim.resize(claim.len() + 70_000, 0);
            put_u64(&mut many, claim.len() as u64);
            many.extend_from_slice(&claim);
        }
        assert!(err(&many).contains("in all"), "{}", err(&many));
    }
}
