//! Adaptive bit probabilities that learn fast while young: a *counter* holds a 22-bit
//! probability that the next bit is 1 and how many bits it has seen. A counter seen `n` times
//! moves 1/(n + 1.5) of the way to each bit, down to 1/16 of the way.
//!
//! Why not the LZMA probabilities (a fixed 1/16 step from one half, 11 bits): the engine's
//! contexts are often sparse (a tag under the hash of the last instruction address, a hit
//! index per stream and previous indices), and a fixed step pays about 12 bits per node
//! before a context that always gives the same bit is learnt, where this pays about 2; and a
//! certain bit costs at least 0.02 bits under 11-bit probabilities, 0.0004 here (coded with
//! 12-bit precision).

use std::sync::OnceLock;

use super::range::{Decoder, Encoder};

/// A 22-bit probability of a 1, shifted left 10, or'ed with the count of bits seen (to 255).
pub(crate) type Counter = u32;

/// A counter that has seen nothing: probability one half, count 0.
pub(crate) const FRESH: Counter = 1 << 31;

/// Slowest adaptation: 1/`RATE_FLOOR` of the way per bit.
const RATE_FLOOR: u32 = 16;

/// Step of a counter that has seen `n` bits, in 1/65536: 1/(n + 1.5), at least 1/16.
const RATES: [u32; 256] = rates();

const fn rates() -> [u32; 256] {
    let mut rate = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let r = 65536 * 2 / (2 * n as u32 + 3);
        let floor = 65536 / RATE_FLOOR;
        rate[n] = if r > floor { r } else { floor };
        n += 1;
    }
    rate
}

/// The probability of a 1 in 1/4096, as the coder takes it.
#[inline(always)]
pub(crate) fn p1(c: Counter) -> u32 {
    c >> 20
}

/// Moves `c` toward `bit` and counts it.
#[inline(always)]
pub(crate) fn update(c: &mut Counter, bit: bool) {
    let n = *c & 1023;
    let p = i64::from(*c >> 10);
    let target = if bit { (1i64 << 22) - 1 } else { 0 };
    let p = p + (((target - p) * i64::from(RATES[n as usize])) >> 16);
    *c = ((p as u32) << 10) | (n + 1).min(255);
}

/// Codes `bit` under `c`, then adapts `c`.
#[inline(always)]
pub(crate) fn encode(e: &mut Encoder, c: &mut Counter, bit: bool) {
    e.bit_p(p1(*c), bit);
    update(c, bit);
}

/// Reads a bit under `c`, then adapts `c`.
#[inline(always)]
pub(crate) fn decode(d: &mut Decoder<'_>, c: &mut Counter) -> bool {
    let bit = d.bit_p(p1(*c));
    update(c, bit);
    bit
}

/// Cost in 1/256 bits of coding `bit` under `c` (the coder's clamped 12-bit probability).
#[inline(always)]
pub(crate) fn cost(c: Counter, bit: bool) -> u32 {
    let p = p1(c).clamp(1, 4095);
    costs()[if bit { p } else { 4096 - p } as usize]
}

/// -log2(p / 4096) in 1/256 bits.
fn costs() -> &'static [u32; 4097] {
    static T: OnceLock<[u32; 4097]> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0u32; 4097];
        for (p, c) in t.iter_mut().enumerate().skip(1) {
            *c = (-(p as f64 / 4096.0).log2() * 256.0) as u32;
        }
        t[0] = t[1];
        t
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_bit_becomes_almost_free() {
        let mut c = FRESH;
        let first = cost(c, true);
        for _ in 0..40 {
            update(&mut c, true);
        }
        assert_eq!(first, 256);
        assert!(cost(c, true) < 2, "cost {}", cost(c, true));
        assert!(cost(c, false) > 256 * 8);
    }

    #[test]
    fn the_count_stops_at_255() {
        let mut c = FRESH;
        for i in 0..600 {
            update(&mut c, i % 3 == 0);
        }
        assert_eq!(c & 1023, 255);
    }
}
