//! Context-mixing compressors for modelled streams (docs/FORMAT.md §6.1, "The context
//! mixer"): container codec 3 ([`v2::encode`]), container codec 4 ([`light::encode`]) and the
//! length-prefixed streams of some trace formats' layouts ([`v2::compress`]).
//!
//! Why not zstd or LZMA alone: after modelling, the streams of malloc-bench and wee_alloc traces
//! are short symbol sequences whose next byte is best predicted from the few bytes before it;
//! LZ coders pay for every match and literal, and learn slowly on small inputs. Here each bit is
//! predicted from the preceding bytes (one adaptive probability per hashed context and order),
//! the predictions are combined by a trained logistic mixer, and a binary arithmetic coder
//! writes the result. Everything is integer arithmetic, so encoder and decoder agree on every
//! machine.
//!
//! This module holds what the mixers share: the logistic tables and the match model.

pub mod light;
pub mod v2;

/// Bytes hashed to find an earlier occurrence of the current context (the match model).
const MATCH_MIN: usize = 6;

/// The logistic function 4096 / (1 + e^(-x/256)) at x = −2048, −1920, …, 2048.
const SQUASH_POINTS: [i32; 33] = [
    1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546, 2048, 2550, 2994, 3349,
    3608, 3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095,
];

/// 4096 / (1 + e^(-x/256)) for x in −2047..=2047, by linear interpolation of the points.
pub(crate) fn squash(x: i32) -> i32 {
    if x > 2047 {
        return 4095;
    }
    if x < -2047 {
        return 1;
    }
    let w = x & 127;
    let i = ((x >> 7) + 16) as usize;
    (SQUASH_POINTS[i] * (128 - w) + SQUASH_POINTS[i + 1] * w + 64) >> 7
}

/// Shared tables: the inverse of [`squash`] and the adaptation rates.
pub(crate) struct Tables {
    pub(crate) stretch: Vec<i16>,
    pub(crate) rate: [u32; 256],
}

impl Tables {
    pub(crate) fn new() -> Tables {
        let mut stretch = vec![0i16; 4096];
        let mut pi = 0usize;
        for x in -2047..=2047 {
            let v = squash(x) as usize;
            for s in stretch.iter_mut().take(v + 1).skip(pi) {
                *s = x as i16;
            }
            pi = v + 1;
        }
        for s in stretch.iter_mut().skip(pi) {
            *s = 2047;
        }
        // A context seen n times moves 1/(n + 1.5) of the way to each new bit, down to 1/256
        // of the way: fast learning on small inputs, stable estimates on large ones.
        let mut rate = [0u32; 256];
        for (n, r) in rate.iter_mut().enumerate() {
            *r = (65536 * 2 / (2 * n as u32 + 3)).max(65536 / 256);
        }
        Tables { stretch, rate }
    }
}

/// Predicts the next bit as the one that followed the last occurrence of the preceding
/// [`MATCH_MIN`] bytes, with a confidence learnt per match length: long repeats, which the
/// order contexts cannot see, cost almost nothing.
struct Matcher {
    data: Vec<u8>,
    last_seen: Vec<u32>,
    /// Position in `data` of the byte predicted next (valid when `len > 0`).
    ptr: usize,
    len: usize,
    /// Probability (12 bits << 10 | count) that the predicted bit is right, per length bucket.
    hit: [u32; 32],
    expected: Option<u32>,
}

impl Matcher {
    fn new(bits: usize) -> Matcher {
        Matcher {
            data: Vec::new(),
            last_seen: vec![0; 1 << bits.saturating_sub(2).max(10)],
            ptr: 0,
            len: 0,
            hit: [3 << 29; 32],
            expected: None,
        }
    }

    fn bucket(&self) -> usize {
        match self.len {
            0 => 0,
            1..=15 => self.len,
            16..=31 => 16 + (self.len - 16) / 4,
            _ => 20 + (self.len.min(400) - 32) / 40,
        }
    }

    /// Called after each whole byte.
    fn byte_done(&mut self, byte: u8) {
        self.data.push(byte);
        if self.len > 0 && self.data.get(self.ptr) == Some(&byte) {
            self.len += 1;
            self.ptr += 1;
        } else {
            self.len = 0;
        }
        let n = self.data.len();
        if n < MATCH_MIN {
            return;
        }
        let h = self.data[n - MATCH_MIN..]
            .iter()
            .fold(0u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
            })
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = (h >> 32) as usize & (self.last_seen.len() - 1);
        if self.len == 0 {
            let cand = self.last_seen[slot] as usize;
            if cand > 0 {
                let mut len = 0;
                while len < 32 && len < cand && self.data[cand - 1 - len] == self.data[n - 1 - len]
                {
                    len += 1;
                }
                if len >= MATCH_MIN {
                    self.len = len;
                    self.ptr = cand;
                }
            }
        }
        self.last_seen[slot] = u32::try_from(n).unwrap_or(0);
    }

    /// Stretched prediction for the next bit given the bits of the current byte so far.
    fn input(&mut self, partial: u32, stretch: &[i16]) -> i32 {
        self.expected = None;
        if self.len == 0 {
            return 0;
        }
        let Some(&predicted) = self.data.get(self.ptr) else {
            return 0;
        };
        let done = 31 - partial.leading_zeros(); // bits of this byte already coded
        let want = (u32::from(predicted) | 256) >> (8 - done);
        if want != partial {
            return 0;
        }
        let bit = (u32::from(predicted) >> (7 - done)) & 1;
        self.expected = Some(bit);
        let p = i32::from(stretch[(self.hit[self.bucket()] >> 20) as usize]);
        if bit == 1 {
            p
        } else {
            -p
        }
    }

    fn update(&mut self, bit: u32, rate: &[u32; 256]) {
        if let Some(e) = self.expected {
            let slot = &mut self.hit[self.bucket()];
            let n = *slot & 1023;
            let p = i64::from(*slot >> 10);
            let target = if e == bit { (1i64 << 22) - 1 } else { 0 };
            let p = p + (((target - p) * i64::from(rate[n.min(255) as usize])) >> 16);
            *slot = ((p as u32) << 10) | (n + 1).min(255);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squash_and_stretch_invert() {
        let t = Tables::new();
        for x in (-1500..1500).step_by(50) {
            let back = i32::from(t.stretch[squash(x) as usize]);
            assert!((back - x).abs() < 40, "{x} -> {back}");
        }
    }
}
