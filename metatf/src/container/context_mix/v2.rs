//! Version 2 of the context mixer (docs/FORMAT.md §6.1, "The context mixer, version 2"): used
//! by the layouts `wee-alloc-cm-2` and by malloc-bench's section 6.
//!
//! How it differs from version 1, and why (docs/FORMAT.md gives each part):
//! - three sparse contexts (the byte two back alone, bytes two and three back, the byte three
//!   back alone) beside orders 0–8: the continuation bytes of a varint follow a byte that is
//!   nearly random, so their best context skips it;
//! - 16-bit probabilities in the coder, from a squash over a wider range: a stream that repeats
//!   for megabytes cost at least 1/4096 of a bit per bit before;
//! - a second mixer whose weights are chosen by the previous byte, averaged with the first in
//!   the logistic domain, then two adaptive probability maps (by the partial byte, and by it and
//!   the previous byte) that correct the mixed probability;
//! - smaller initial weights and a mixer learning rate that starts four times higher and decays
//!   to the old one: short streams learn faster, long ones stay stable.
//!
//! Stream: varint length of the data, then the arithmetic-coded bits (8 per byte, most
//! significant first), as in version 1.

use super::{Matcher, Tables};
use crate::varint::{put_u64, Cursor};

/// Hashed contexts: which of the last 8 bytes each one sees (the lowest byte is the last one).
/// Orders 0, 1, 2, 3, 4, 6, 8, then the sparse ones.
const MASKS: [u64; 10] = [
    0,
    0xff,
    0xffff,
    0xff_ffff,
    0xffff_ffff,
    0xffff_ffff_ffff,
    u64::MAX,
    0xff00,
    0xff_ff00,
    0xff_0000,
];
const CONTEXTS: usize = MASKS.len();
/// Mixer inputs: one per context, the match model, and a bias.
const INPUTS: usize = CONTEXTS + 2;
/// Largest input accepted by the decoder (bounds its memory and time on damaged input).
pub const MAX_LEN: u64 = 1 << 32;
/// Initial mixer weight (1/8 in 16-bit fixed point).
const INITIAL_WEIGHT: i32 = 1 << 13;
/// Bits over which the mixer's extra learning rate halves (about 2 KB of input).
const LEARNING_HALF_LIFE: i64 = 1 << 14;

/// 65536 / (1 + e^(−x/256)) at x = −4096, −3968, …, 4096, clamped to 1…65535.
const SQUASH16_POINTS: [i32; 65] = [
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 5, 8, 13, 22, 36, 60, 98, 162, 267, 439, 720, 1179,
    1921, 3108, 4971, 7812, 11955, 17625, 24743, 32768, 40793, 47911, 53581, 57724, 60565, 62428,
    63615, 64357, 64816, 65097, 65269, 65374, 65438, 65476, 65500, 65514, 65523, 65528, 65531,
    65533, 65534, 65535, 65535, 65535, 65535, 65535, 65535, 65535, 65535, 65535, 65535, 65535,
];

/// 65536 / (1 + e^(−x/256)) for any x (clamped to ±4095), by linear interpolation, 1…65535.
pub(super) fn squash16(x: i32) -> i32 {
    let x = x.clamp(-4095, 4095);
    let w = x & 127;
    let i = ((x >> 7) + 32) as usize;
    ((SQUASH16_POINTS[i] * (128 - w) + SQUASH16_POINTS[i + 1] * w + 64) >> 7).clamp(1, 65535)
}

/// An adaptive probability map: refines a probability given a small context, by interpolating
/// between 33 adaptive points over the stretched probability −2048…2048.
///
/// The previous-byte map has 65,536 contexts, 8.6 MB of points if laid out whole, though a
/// stream only reaches the contexts of the bytes it holds: a short one a few, and none that
/// its length could not reach. So the points are kept in groups of [`APM_GROUP`] contexts
/// (the contexts of one previous byte), each group allocated when first used and each row
/// filled with the initial points when first used. Either way a context's points take the
/// same values, so the coded bytes do not depend on it.
struct Apm {
    /// The groups in order of first use, [`APM_GROUP`] rows of 33 points each: 16-bit
    /// probability << 16.
    points: Vec<u32>,
    /// Per group of contexts, the offset of its rows in `points`; [`NO_GROUP`] before its
    /// first use.
    group_start: Vec<u32>,
    /// One bit per context: its row holds its points.
    ready: Vec<u64>,
    /// The initial points of every row.
    initial: [u32; 33],
    /// The point nearest to the last input (the one updated).
    nearest: usize,
}

/// Contexts per allocated group of an [`Apm`]: a previous-byte map's contexts of one byte.
const APM_GROUP: usize = 256;
/// [`Apm::group_start`] of a group not yet used.
const NO_GROUP: u32 = u32::MAX;

impl Apm {
    fn new(contexts: usize) -> Apm {
        let mut initial = [0u32; 33];
        for (j, point) in initial.iter_mut().enumerate() {
            *point = (squash16((j as i32 - 16) * 128) as u32) << 16;
        }
        Apm {
            points: Vec::new(),
            group_start: vec![NO_GROUP; contexts.div_ceil(APM_GROUP)],
            ready: vec![0; contexts.div_ceil(64)],
            initial,
            nearest: 0,
        }
    }

    /// The refined 16-bit probability of `stretched` (within ±2047) in context `ctx`.
    fn refine(&mut self, stretched: i32, ctx: usize) -> i32 {
        let group = &mut self.group_start[ctx / APM_GROUP];
        if *group == NO_GROUP {
            // At most 65,536 contexts of 33 points: the offsets fit in a u32.
            *group = self.points.len() as u32;
            self.points.resize(self.points.len() + APM_GROUP * 33, 0);
        }
        let row = *group as usize + ctx % APM_GROUP * 33;
        let (word, bit) = (ctx / 64, 1u64 << (ctx % 64));
        if self.ready[word] & bit == 0 {
            self.ready[word] |= bit;
            self.points[row..row + 33].copy_from_slice(&self.initial);
        }
        let s = stretched.clamp(-2047, 2047) + 2048;
        let w = (s & 127) as u64;
        let base = row + (s >> 7) as usize;
        self.nearest = base + usize::from(w >= 64);
        let lo = u64::from(self.points[base] >> 16);
        let hi = u64::from(self.points[base + 1] >> 16);
        ((lo * (128 - w) + hi * w) >> 7) as i32
    }

    fn update(&mut self, bit: u32) {
        let p = &mut self.points[self.nearest];
        let target: i64 = if bit == 1 { 0xffff_ffff } else { 0 };
        let v = i64::from(*p);
        *p = (v + ((target - v) >> 6)) as u32;
    }
}

/// The bit predictor shared by encoder and decoder.
struct Predictor {
    t: Tables,
    /// One table per context: 22-bit probability (of a 1) << 10 | count (up to 255).
    slots: Vec<Vec<u32>>,
    mask: usize,
    hashes: [u64; CONTEXTS],
    history: u64,
    /// Bits of the current byte so far, with a leading 1.
    partial: u32,
    index: [usize; CONTEXTS],
    /// First slot of the current nibble's group of 16, per context.
    group: [usize; CONTEXTS],
    inputs: [i32; INPUTS],
    /// Mixer 1, weights by (partial byte, previous byte's top bit, match length bucket).
    weights1: Vec<[i32; INPUTS]>,
    /// Mixer 2, weights by (previous byte, match length bucket).
    weights2: Vec<[i32; INPUTS]>,
    set1: usize,
    set2: usize,
    /// The two mixers' 16-bit probabilities.
    p1: i32,
    p2: i32,
    /// Their average in the logistic domain.
    stretched: i32,
    apm_partial: Apm,
    apm_previous: Apm,
    /// Bits coded so far (drives the learning-rate decay).
    bits: i64,
    matcher: Matcher,
}

impl Predictor {
    fn new(len: u64, max_table_bits: u32) -> Predictor {
        // Four slots per bit of input in each context, as in version 1, but at most
        // 2^max_table_bits: for the length-prefixed streams 2^21 (ten tables of 2^22 would take
        // 168 MB, where 2^21 costs long streams little and keeps the tables at 84 MB); for
        // codec 3, [`CODEC_TABLE_BITS`].
        let bits = (66 - (len.max(1).saturating_mul(8)).leading_zeros())
            .clamp(12, max_table_bits.max(12)) as usize;
        let size = 1usize << bits;
        let mut p = Predictor {
            t: Tables::new(),
            slots: (0..CONTEXTS)
                .map(|_| crate::memory::filled_table(size, 1 << 31))
                .collect(),
            mask: size - 1,
            hashes: [0; CONTEXTS],
            history: 0,
            partial: 1,
            index: [0; CONTEXTS],
            group: [0; CONTEXTS],
            inputs: [0; INPUTS],
            weights1: vec![[INITIAL_WEIGHT; INPUTS]; 256 * 2 * 4],
            weights2: vec![[INITIAL_WEIGHT; INPUTS]; 256 * 4],
            set1: 0,
            set2: 0,
            p1: 32768,
            p2: 32768,
            stretched: 0,
            apm_partial: Apm::new(256),
            apm_previous: Apm::new(1 << 16),
            bits: 0,
            matcher: Matcher::new(bits),
        };
        p.set_indexes();
        p
    }

    /// Same slot layout as version 1: a group of 16 per nibble, chosen by hashing the context
    /// with the bits before the nibble.
    fn set_indexes(&mut self) {
        let done = 31 - self.partial.leading_zeros();
        let in_nibble = done % 4;
        let slot = ((1u32 << in_nibble) | (self.partial & ((1 << in_nibble) - 1))) as usize;
        if in_nibble == 0 {
            let c0 = u64::from(self.partial);
            for i in 0..CONTEXTS {
                let h = self.hashes[i]
                    .wrapping_add(c0.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .wrapping_mul(0xD6E8_FEB8_6659_FD93);
                self.group[i] = (h >> 40) as usize & self.mask & !15;
            }
        }
        for i in 0..CONTEXTS {
            self.index[i] = self.group[i] + slot;
        }
    }

    fn match_bucket(&self) -> usize {
        match self.matcher.len {
            0 => 0,
            1..=15 => 1,
            16..=63 => 2,
            _ => 3,
        }
    }

    /// Probability (1…65535, of 65536) that the next bit is 1.
    fn predict(&mut self) -> u32 {
        for i in 0..CONTEXTS {
            let p = self.slots[i][self.index[i]] >> 20;
            self.inputs[i] = i32::from(self.t.stretch[p as usize]);
        }
        self.inputs[INPUTS - 2] = self.matcher.input(self.partial, &self.t.stretch);
        self.inputs[INPUTS - 1] = 256; // bias
        let m = self.match_bucket();
        let partial = self.partial as usize & 255;
        let previous = self.history as usize & 255;
        self.set1 = (partial * 2 + usize::from(self.history & 0x80 == 0)) * 4 + m;
        self.set2 = previous * 4 + m;
        let d1 = dot(&self.weights1[self.set1], &self.inputs);
        let d2 = dot(&self.weights2[self.set2], &self.inputs);
        self.p1 = squash16(d1);
        self.p2 = squash16(d2);
        self.stretched = (d1 + d2) / 2;
        let mixed = squash16(self.stretched);
        // The maps only see ±2047 (probabilities to 1/4096): surer predictions pass unchanged.
        let p = if self.stretched.abs() >= 2047 {
            mixed
        } else {
            let a = self.apm_partial.refine(self.stretched, partial);
            let b = self
                .apm_previous
                .refine(self.stretched, (previous << 8) | partial);
            (mixed + a + 2 * b) / 4
        };
        p.clamp(1, 65535) as u32
    }

    fn update(&mut self, bit: u32) {
        self.bits += 1;
        // Learning rate: 4× version 1's at the start, halving its excess every
        // LEARNING_HALF_LIFE bits towards ½× (in sixteenths).
        let rate = 8 + 24 * LEARNING_HALF_LIFE / (self.bits + LEARNING_HALF_LIFE);
        for (weights, set, p) in [
            (&mut self.weights1, self.set1, self.p1),
            (&mut self.weights2, self.set2, self.p2),
        ] {
            let err = ((((((bit as i32) << 16) - p) >> 4) as i64) * rate) >> 4;
            for (w, &x) in weights[set].iter_mut().zip(self.inputs.iter()) {
                *w = (*w + ((x as i64 * err) >> 9) as i32).clamp(-(1 << 22), 1 << 22);
            }
        }
        if self.stretched.abs() < 2047 {
            self.apm_partial.update(bit);
            self.apm_previous.update(bit);
        }
        for i in 0..CONTEXTS {
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
            self.history = (self.history << 8) | u64::from(self.partial & 255);
            for (i, &mask) in MASKS.iter().enumerate() {
                self.hashes[i] = ((self.history & mask).wrapping_add(i as u64) << 3)
                    .wrapping_mul(0x2545_F491_4F6C_DD1D)
                    ^ (i as u64);
            }
            self.partial = 1;
        }
        self.set_indexes();
    }
}

/// Σ w·x >> 16, clamped to the range [`squash16`] distinguishes.
fn dot(w: &[i32; INPUTS], x: &[i32; INPUTS]) -> i32 {
    let d: i64 = x
        .iter()
        .zip(w.iter())
        .map(|(&x, &w)| i64::from(x) * i64::from(w))
        .sum();
    (d >> 16).clamp(-4095, 4095) as i32
}

impl BitModel for Predictor {
    #[inline]
    fn predict(&mut self) -> u32 {
        Predictor::predict(self)
    }
    #[inline]
    fn update(&mut self, bit: u32) {
        Predictor::update(self, bit);
    }
}

/// Splits `[x1, x2]` at the probability `p` (of 65536) of a 1: the 1 takes `[x1, mid]`.
pub(super) fn split(x1: u32, x2: u32, p: u32) -> u32 {
    x1 + ((u64::from(x2 - x1) * u64::from(p)) >> 16) as u32
}

/// Largest table (log2 slots per context) of the length-prefixed streams.
const STREAM_TABLE_BITS: u32 = 21;
/// Largest table (log2 slots per context) of container codec 3: 2^16 slots of four bytes for
/// each of the ten contexts, 2.5 MiB, which sections of 2 KiB and more reach. The codec serves
/// short sections, where larger tables gain well under 1 % and their zeroing costs more than
/// the coding.
pub const CODEC_TABLE_BITS: u32 = 16;

/// Compresses `data` as a stream: varint length, then [`encode`] with 2^21-slot tables.
pub fn compress(data: &[u8]) -> Vec<u8> {
    compress_with_tables(data, STREAM_TABLE_BITS)
}

/// Largest table (log2 slots per context) of the length-prefixed streams of layouts that bound
/// the coder's memory (`malloc-bench-preflate-5`, `wee-alloc-cm-4`): ten tables of 2^19 four-byte
/// slots take 20 MiB instead of [`compress`]'s 80 MiB, which long streams barely feel.
pub const BOUNDED_STREAM_TABLE_BITS: u32 = 19;

/// [`compress`] with tables of at most 2^`max_table_bits` slots per context; read back with
/// [`decompress_with_tables`] and the same value.
pub fn compress_with_tables(data: &[u8], max_table_bits: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 3 + 16);
    put_u64(&mut out, data.len() as u64);
    encode_into(data, max_table_bits, &mut out);
    out
}

/// Codes `data` with no length in front (the caller stores it); the tables hold at most
/// 2^`max_table_bits` slots per context (12 to 22; the decoder must be given the same value).
pub fn encode(data: &[u8], max_table_bits: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 3 + 16);
    encode_into(data, max_table_bits, &mut out);
    out
}

fn encode_into(data: &[u8], max_table_bits: u32, out: &mut Vec<u8>) {
    let mut p = Predictor::new(data.len() as u64, max_table_bits);
    code_bits(data, &mut p, out);
}

/// What the binary arithmetic coder of version 2 (and of the light mixer, [`super::light`])
/// asks its model: the probability of each next bit, then the bit.
pub(super) trait BitModel {
    /// The probability (of 65536) that the next bit is a 1.
    fn predict(&mut self) -> u32;
    /// Learns the bit that came.
    fn update(&mut self, bit: u32);
}

/// Codes `data`, most significant bit first, with the probabilities of `p`, onto `out`.
#[inline]
pub(super) fn code_bits<P: BitModel>(data: &[u8], p: &mut P, out: &mut Vec<u8>) {
    let (mut x1, mut x2) = (0u32, u32::MAX);
    for &byte in data {
        for k in (0..8).rev() {
            let bit = u32::from(byte >> k) & 1;
            let mid = split(x1, x2, p.predict());
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
}

/// Decodes `len` bytes of what [`code_bits`] wrote with a model like `p`; `cut_short` is the
/// error when the code runs out long before the bytes do.
#[inline]
pub(super) fn decode_bits<P: BitModel>(
    coded: &[u8],
    len: u64,
    p: &mut P,
    cut_short: &str,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(len.min(1 << 24) as usize);
    let (mut x1, mut x2) = (0u32, u32::MAX);
    // Bytes past the end read as 0; `at` counts every byte read, also those.
    let mut at = 0usize;
    let next = |at: &mut usize| {
        let b = coded.get(*at).copied().unwrap_or(0);
        *at += 1;
        u32::from(b)
    };
    let mut x = 0u32;
    for _ in 0..4 {
        x = (x << 8) | next(&mut at);
    }
    for _ in 0..len {
        let mut byte = 0u32;
        for _ in 0..8 {
            let mid = split(x1, x2, p.predict());
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
                x = (x << 8) | next(&mut at);
            }
        }
        out.push(byte as u8);
        // An honest stream is used up, to within the 4 bytes the coder ends with, exactly when
        // the last byte is decoded: reading far past its end means damage, so stop now rather
        // than decode up to the claimed length from zeros.
        if at > coded.len() + 8 {
            return Err(cut_short.to_string());
        }
    }
    Ok(out)
}

/// Decompresses what [`compress`] wrote. Damaged input gives wrong bytes or an error, never a
/// panic; the length is checked against [`MAX_LEN`].
pub fn decompress(packed: &[u8]) -> Result<Vec<u8>, String> {
    decompress_with_tables(packed, STREAM_TABLE_BITS)
}

/// Decompresses what [`compress_with_tables`] wrote with the same `max_table_bits`; damaged
/// input as in [`decompress`].
pub fn decompress_with_tables(packed: &[u8], max_table_bits: u32) -> Result<Vec<u8>, String> {
    let mut c = Cursor::new(packed, "context-mixed stream");
    let len = c.u64()?;
    let coded = c.take(c.remaining())?;
    // A bit costs at least log2(65536/65535) bits, so a coded byte holds at most about 45,000
    // bytes: a larger claim is damage, refused before any work.
    if len > MAX_LEN || !plausible_length(coded.len(), len) {
        return Err(format!(
            "context-mixed stream (version 2) of {} bytes claims {len} bytes",
            coded.len()
        ));
    }
    decode(coded, len, max_table_bits)
}

/// False when `coded_len` coded bytes cannot hold `len` bytes: a bit costs at least
/// log2(65536/65535) bits, so no honest code expands more than 65,536 times.
pub fn plausible_length(coded_len: usize, len: u64) -> bool {
    len <= (coded_len as u64 + 1).saturating_mul(65536)
}

/// Decodes `len` bytes of what [`encode`] wrote with the same `max_table_bits`. Damaged input
/// gives wrong bytes (the caller's checksum catches them) or an error, never a panic; the
/// caller bounds `len` (see [`plausible_length`]).
pub fn decode(coded: &[u8], len: u64, max_table_bits: u32) -> Result<Vec<u8>, String> {
    let mut p = Predictor::new(len, max_table_bits);
    decode_bits(
        coded,
        len,
        &mut p,
        "context-mixed stream (version 2) is cut short",
    )
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
            (0..3_000u32)
                .flat_map(|i| {
                    let mut v = Vec::new();
                    put_u64(&mut v, u64::from(i.wrapping_mul(40_503) % 5_000));
                    v
                })
                .collect(),
        ] {
            let packed = compress(&data);
            assert_eq!(decompress(&packed).unwrap(), data);
        }
        let periodic: Vec<u8> = (0..20_000u32).map(|i| (i % 13) as u8).collect();
        assert!(compress(&periodic).len() < 200);
    }

    #[test]
    fn smaller_tables_round_trip_and_differ_only_when_the_stream_is_long() {
        let data: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 27) as u8 ^ (i % 7) as u8)
            .collect();
        let bounded = compress_with_tables(&data, BOUNDED_STREAM_TABLE_BITS);
        assert_eq!(
            decompress_with_tables(&bounded, BOUNDED_STREAM_TABLE_BITS).unwrap(),
            data
        );
        // 200,000 bytes want 2^21 slots: the bound changes the tables, so the bytes.
        assert_ne!(bounded, compress(&data));
        // A short stream's tables are below both bounds: the same bytes.
        let short = &data[..5_000];
        assert_eq!(
            compress_with_tables(short, BOUNDED_STREAM_TABLE_BITS),
            compress(short)
        );
    }

    #[test]
    fn long_repeats_cost_almost_nothing() {
        // 2 MB of one 6-byte pattern: version 1's 12-bit probabilities cost at least
        // 16 M × log2(4096/4095) bits ≈ 700 bytes; 16-bit ones about 45.
        let data: Vec<u8> = [0x19u8, 0x00, 0xc0, 0x04, 0x0a, 0x02]
            .iter()
            .copied()
            .cycle()
            .take(2_000_000)
            .collect();
        let packed = compress(&data);
        assert!(packed.len() < 300, "{} bytes", packed.len());
        assert_eq!(decompress(&packed).unwrap(), data);
    }

    #[test]
    fn damaged_input_does_not_panic() {
        let packed = compress(b"Alloc(1), Free(0), Alloc(1), Free(0), Alloc(2),");
        for cut in 0..packed.len() {
            let _ = decompress(&packed[..cut]);
        }
        assert!(decompress(&[0xff; 12]).is_err());
        let mut bad = packed.clone();
        bad[3] ^= 0x55;
        let _ = decompress(&bad);
    }

    #[test]
    fn squash16_is_monotone_and_centred() {
        assert_eq!(squash16(0), 32768);
        let mut last = 0;
        for x in -5000..5000 {
            let v = squash16(x);
            assert!(v >= last && (1..=65535).contains(&v));
            last = v;
        }
    }
}
