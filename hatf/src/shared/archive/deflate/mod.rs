//! Rebuilding a deflate stream byte for byte from its text (preflate): splitting it into
//! pieces, analysing and rebuilding them in bounded child processes, and guarding preflate's
//! panics. The malloc-bench and memory_replay zip front ends store their archives this way.

pub mod analysis_process;
pub mod bounded_child;
pub mod gzip_split;
pub mod piece_stream;
pub mod preflate_guard;
pub mod rebuild_process;

/// `len` bytes for the splitting tests, from `seed`: every fifth byte from a xorshift
/// generator, the others a repeating ramp, so that deflate finds both matches and literals
/// and a stream this long spans several pieces.
#[cfg(test)]
fn test_data(seed: u64, len: u32) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i % 5 == 0 {
                x as u8
            } else {
                (i % 251) as u8
            }
        })
        .collect()
}
