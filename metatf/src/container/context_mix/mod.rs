//! Context-mixing compressors for modelled streams (docs/FORMAT.md §6.1, "The context
//! mixer"): container codec 3 (version 2, [`v2::encode`]) and the length-prefixed streams of
//! some trace formats' layouts (versions 1 and 2).
//!
//! Why not zstd or LZMA alone: after modelling, the streams of malloc-bench and wee_alloc traces
//! are short symbol sequences whose next byte is best predicted from the few bytes before it;
//! LZ coders pay for every match and literal, and learn slowly on small inputs. Here each bit is
//! predicted from the preceding 0–6 bytes (one adaptive probability per hashed context and
//! order), the predictions are combined by a trained logistic mixer, and a binary arithmetic
//! coder writes the result. Everything is integer arithmetic, so encoder and decoder agree on
//! every machine.
//!
//! Stream: varint length of the data, then the arithmetic-coded bits (8 per byte, most
//! significant first).
//!
//! This is version 1, kept bit for bit so that files written with it still decode; new files
//! use [`v2`] (more contexts, two mixers, probability maps, 16-bit probabilities).

pub mod light;
pub mod v2;

use varint::{put_u64, Cursor};

mod varint;

/// Context orders (bytes of history) that are mixed; order 0 is the partial byte alone.
const ORDERS: [usize; 7] = [0, 1, 2, 3, 4, 6, 8];
/// Mixer inputs: one per order, the match model, and a bias.
const INPUTS: usize = ORDERS.len() + 2;
/// Bytes hashed to find an earlier occurrence of the current context (the match model).
const MATCH_MIN: usize = 6;
/// Largest input accepted by the decoder (bounds its memory and time on damaged input).
pub const MAX_LEN: u64 = 1 << 32;

/// The logistic function 4096 / (1 + e^(-x/256)) at x = −2048, −1920, …, 2048.
const SQUASH_POINTS: [i32; 33] = [
    1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546, 2048, 2550, 2994, 3349,
    3608, 3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095,
];

/// 4096 / (1 + e^(-x/256)) for x in −2047..=2047, by linear interpolation of the points.
fn squash(x: i32) -> i32 {
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
struct Tables {
    stretch: Vec<i16>,
    rate: [u32; 256],
}

impl Tables {
    fn new() -> Tables {
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

/// The bit predictor shared by encoder and decoder.
struct Predictor {
    t: Tables,
    /// One table per order: 22-bit probability (of a 1) << 10 | count (up to 255).
    slots: Vec<Vec<u32>>,
    mask: usize,
    /// Hash of the last ORDERS[i] bytes, per order.
    hashes: [u64; ORDERS.len()],
    history: u64,
    /// Bits of the current byte so far, with a leading 1.
    partial: u32,
    index: [usize; ORDERS.len()],
    /// First slot of the current nibble's group of 16, per order.
    group: [usize; ORDERS.len()],
    inputs: [i32; INPUTS],
    weights: Vec<[i32; INPUTS]>,
    mixed: i32,
    matcher: Matcher,
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

impl Predictor {
    fn new(len: u64) -> Predictor {
        // Four slots per bit of input in each order (groups of 16 collide less), at most 2^22.
        let bits = (66 - (len.max(1) * 8).leading_zeros()).clamp(12, 22) as usize;
        let size = 1usize << bits;
        Predictor {
            t: Tables::new(),
            slots: (0..ORDERS.len())
                .map(|_| crate::memory::filled_table(size, 1 << 31))
                .collect(),
            mask: size - 1,
            hashes: [0; ORDERS.len()],
            history: 0,
            partial: 1,
            index: [0; ORDERS.len()],
            group: [0; ORDERS.len()],
            inputs: [0; INPUTS],
            weights: vec![[1 << 14; INPUTS]; 256 * 2 * 4],
            mixed: 2048,
            matcher: Matcher::new(bits),
        }
        .with_indexes()
    }

    fn with_indexes(mut self) -> Self {
        self.set_indexes();
        self
    }

    fn set_indexes(&mut self) {
        // The slots of one nibble lie in one group of 16 (one cache line): a group is chosen by
        // hashing the context with the bits before the nibble, the slot by the nibble's bits
        // so far (1..=15, with a leading 1).
        let done = 31 - self.partial.leading_zeros();
        let in_nibble = done % 4;
        let slot = ((1u32 << in_nibble) | (self.partial & ((1 << in_nibble) - 1))) as usize;
        if in_nibble == 0 {
            let c0 = u64::from(self.partial);
            for i in 0..ORDERS.len() {
                let h = self.hashes[i]
                    .wrapping_add(c0.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .wrapping_mul(0xD6E8_FEB8_6659_FD93);
                self.group[i] = (h >> 40) as usize & self.mask & !15;
            }
        }
        for i in 0..ORDERS.len() {
            self.index[i] = self.group[i] + slot;
        }
    }

    fn weight_set(&self) -> usize {
        // Weights chosen by the partial byte and whether the previous byte ended a varint.
        let m = match self.matcher.len {
            0 => 0,
            1..=15 => 1,
            16..=63 => 2,
            _ => 3,
        };
        ((self.partial as usize & 255) * 2 + usize::from(self.history & 0x80 == 0)) * 4 + m
    }

    /// Probability (1..4095, of 4096) that the next bit is 1.
    fn predict(&mut self) -> u32 {
        for i in 0..ORDERS.len() {
            let p = self.slots[i][self.index[i]] >> 20;
            self.inputs[i] = i32::from(self.t.stretch[p as usize]);
        }
        self.inputs[INPUTS - 2] = self.matcher.input(self.partial, &self.t.stretch);
        self.inputs[INPUTS - 1] = 256; // bias
        let w = &self.weights[self.weight_set()];
        let dot: i64 = self
            .inputs
            .iter()
            .zip(w.iter())
            .map(|(&x, &w)| i64::from(x) * i64::from(w))
            .sum();
        self.mixed = squash((dot >> 16) as i32).clamp(1, 4095);
        self.mixed as u32
    }

    fn update(&mut self, bit: u32) {
        // Mixer: gradient step on coding cost.
        let err = ((bit as i32) << 12) - self.mixed;
        let set = self.weight_set();
        let w = &mut self.weights[set];
        for (wi, &x) in w.iter_mut().zip(self.inputs.iter()) {
            *wi = (*wi + ((x * err) >> 9)).clamp(-(1 << 22), 1 << 22);
        }
        for i in 0..ORDERS.len() {
            let e = &mut self.slots[i][self.index[i]];
            let n = *e & 1023;
            let p = (*e >> 10) as i64;
            let target = if bit == 1 { (1i64 << 22) - 1 } else { 0 };
            let r = i64::from(self.t.rate[n.min(255) as usize]);
            let p = p + (((target - p) * r) >> 16);
            *e = ((p as u32) << 10) | (n + 1).min(255);
        }
        self.matcher.update(bit, &self.t.rate);
        self.partial = (self.partial << 1) | bit;
        if self.partial >= 256 {
            self.matcher.byte_done(self.partial as u8);
            let byte = u64::from(self.partial & 255);
            self.history = (self.history << 8) | byte;
            for (i, &order) in ORDERS.iter().enumerate() {
                let recent = if order >= 8 {
                    self.history
                } else {
                    self.history & ((1u64 << (8 * order)) - 1)
                };
                self.hashes[i] = (recent.wrapping_add(order as u64) << 3)
                    .wrapping_mul(0x2545_F491_4F6C_DD1D)
                    ^ (order as u64);
            }
            self.partial = 1;
        }
        self.set_indexes();
    }
}

/// Compresses `data`.
pub fn compress(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 3 + 16);
    put_u64(&mut out, data.len() as u64);
    let mut p = Predictor::new(data.len() as u64);
    let (mut x1, mut x2) = (0u32, u32::MAX);
    for &byte in data {
        for k in (0..8).rev() {
            let bit = u32::from(byte >> k) & 1;
            let pr = p.predict();
            let mid = x1 + ((x2 - x1) >> 12) * pr;
            if bit == 1 {
                x2 = mid;
            } else {
                x1 = mid + 1;
            }
            p.update(bit);
            while (x1 ^ x2) & 0xff00_0000 == 0 {
                out.push((x2 >> 24) as u8);
                x1 <<= 8;
                x2 = (x2 << 8) | 255;
            }
        }
    }
    // Any value in [x1, x2] decodes correctly; four bytes of x1 pin it down.
    out.extend_from_slice(&x1.to_be_bytes());
    out
}

/// Decompresses what [`compress`] wrote. Damaged input gives wrong bytes or an error, never a
/// panic; the length is checked against [`MAX_LEN`].
pub fn decompress(packed: &[u8]) -> Result<Vec<u8>, String> {
    let mut c = Cursor::new(packed, "context-mixed stream");
    let len = c.u64()?;
    let coded = c.take(packed.len() - varint_len(len))?;
    // The coder spends at least log2(4096/4095) bits per bit, so no honest stream expands
    // more than 4096 times: a larger claim is damage, refused before any work.
    if len > MAX_LEN || len > (coded.len() as u64 + 1) * 4096 {
        return Err(format!(
            "context-mixed stream of {} bytes claims {len} bytes",
            coded.len()
        ));
    }
    let mut p = Predictor::new(len);
    let mut out = Vec::with_capacity(len.min(1 << 24) as usize);
    let (mut x1, mut x2) = (0u32, u32::MAX);
    let mut at = 0usize;
    let mut next = || {
        let b = coded.get(at).copied().unwrap_or(0);
        at += 1;
        u32::from(b)
    };
    let mut x = 0u32;
    for _ in 0..4 {
        x = (x << 8) | next();
    }
    for _ in 0..len {
        let mut byte = 0u32;
        for _ in 0..8 {
            let pr = p.predict();
            let mid = x1 + ((x2 - x1) >> 12) * pr;
            let bit = u32::from(x <= mid);
            if bit == 1 {
                x2 = mid;
            } else {
                x1 = mid + 1;
            }
            p.update(bit);
            byte = (byte << 1) | bit;
            while (x1 ^ x2) & 0xff00_0000 == 0 {
                x1 <<= 8;
                x2 = (x2 << 8) | 255;
                x = (x << 8) | next();
            }
        }
        out.push(byte as u8);
    }
    if at > coded.len() + 8 {
        return Err("context-mixed stream is cut short".to_string());
    }
    Ok(out)
}

fn varint_len(v: u64) -> usize {
    let mut buf = Vec::with_capacity(10);
    put_u64(&mut buf, v);
    buf.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_compresses() {
        for data in [
            Vec::new(),
            vec![7u8],
            (0..20_000u32).map(|i| (i % 13) as u8).collect::<Vec<_>>(),
            (0..5_000u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
                .collect(),
        ] {
            let packed = compress(&data);
            assert_eq!(decompress(&packed).unwrap(), data);
        }
        let periodic: Vec<u8> = (0..20_000u32).map(|i| (i % 13) as u8).collect();
        assert!(compress(&periodic).len() < 200);
    }

    #[test]
    fn damaged_input_does_not_panic() {
        let packed = compress(b"Alloc(1), Free(0), Alloc(1), Free(0), Alloc(2),");
        for cut in 0..packed.len() {
            let _ = decompress(&packed[..cut]);
        }
        assert!(decompress(&[0xff; 12]).is_err());
    }

    #[test]
    fn squash_and_stretch_invert() {
        let t = Tables::new();
        for x in (-1500..1500).step_by(50) {
            let back = i32::from(t.stretch[squash(x) as usize]);
            assert!((back - x).abs() < 40, "{x} -> {back}");
        }
    }
}
