//! Decoding work is linear in the file size for every text format, measured as work rather than
//! wall-clock time (which flakes on a loaded machine): decoding a trace of 4n events makes at
//! most 5 times the allocation calls and 8 times the bytes of one of n events (a quadratic
//! decoder would show 16 times), and decoding the 4n file 4 times takes at most 2.5 times the thread's CPU time of
//! decoding the n file 16 times — the same bytes in total, so a linear decoder shows about 1 and
//! a quadratic one 4 (least of three runs; CPU time, unlike wall-clock time, does not grow
//! while the thread waits for a core).

mod hostile_support;

use hatf::format::Compression;
use hostile_support::counting_alloc::{measure, Counting};
use hostile_support::{decode, encode, least_cpu_ns, trace, FORMATS};

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn decoding_work_grows_linearly_with_the_file() {
    for format in FORMATS {
        let n = 20_000;
        let (text1, text4) = (trace(format, n), trace(format, 4 * n));
        let (bin1, bin4) = (
            encode(format, &text1, Compression::Zstd),
            encode(format, &text4, Compression::Zstd),
        );
        let (back1, work1) = measure(|| decode(format, &bin1).unwrap());
        let (back4, work4) = measure(|| decode(format, &bin4).unwrap());
        assert!(back1 == text1 && back4 == text4, "{format}: round trip");
        eprintln!("{format}: n: {work1:?}; 4n: {work4:?}");
        // 4x the input: allow 25% more calls (block boundaries), and twice the bytes, as buffers
        // growing by doubling can allocate up to 8x for 4x the data (quadratic would be 16x).
        assert!(
            work4.calls <= 5 * work1.calls,
            "{format}: {work1:?} → {work4:?}"
        );
        assert!(
            work4.total <= 8 * work1.total,
            "{format}: {work1:?} → {work4:?}"
        );
        let times = |bin: &[u8], k| least_cpu_ns(|| (0..k).for_each(|_| drop(decode(format, bin))));
        let (cpu1, cpu4) = (times(&bin1, 16), times(&bin4, 4));
        eprintln!("{format}: CPU ns 16 × n: {cpu1:?}; 4 × 4n: {cpu4:?}");
        // Below ~10 ms the kernel's accounting (per scheduler tick) says too little to compare;
        // malloc-bench's decoder only copies stored bytes and stays there.
        if let (Some(cpu1 @ 10_000_000..), Some(cpu4)) = (cpu1, cpu4) {
            assert!(cpu4 * 2 <= cpu1 * 5, "{format}: CPU {cpu1} ns → {cpu4} ns");
        }
    }
}
